package web

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/asset"
	"marquee/cache"
)

// AssetStore keeps uploaded images: the store, or the bucket with the
// store (objstore.Assets).
type AssetStore interface {
	PutAsset(ctx context.Context, a marquee.Asset, body []byte) (marquee.Asset, bool, error)
	Asset(ctx context.Context, sha string) (marquee.Asset, []byte, error)
}

// Image is an asset as served: its media type and bytes.
type Image struct {
	Type string
	Body []byte
}

// NewAssetCache returns the cache that GET /assets/… answers from,
// bounded by capacity (bytes with a unit, or entries), loading from store.
func NewAssetCache(store AssetStore, capacity cache.Capacity, reg prometheus.Registerer) *cache.Cache[string, Image] {
	return cache.New(cache.Config[string, Image]{
		Name: "asset", Capacity: capacity,
		Load: bounded(func(ctx context.Context, sha string) (Image, error) {
			a, body, err := store.Asset(ctx, sha)
			return Image{Type: a.Type, Body: body}, err
		}),
		Weigh: func(sha string, im Image) uint32 { return uint32(200 + len(sha) + len(im.Body)) },
	}, reg)
}

// handleUploadAsset serves POST /api/v1/assets: an image as the raw body
// (any declared type: the type is sniffed from the bytes) or as the
// "file" field of a multipart form. 201 with the asset and its url, or
// 200 when the same image was stored before.
func handleUploadAsset(store AssetStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		body, err := uploadedBytes(ctx)
		if err != nil {
			return err
		}
		a, err := asset.Inspect(body)
		if err != nil {
			return err
		}
		a, created, err := store.PutAsset(sctx, a, body)
		if err != nil {
			return err
		}
		status := fasthttp.StatusOK
		if created {
			status = fasthttp.StatusCreated
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, a.Path())
		writeJSON(ctx, status, struct {
			URL string `json:"url"`
			marquee.Asset
		}{a.Path(), a})
		return nil
	}
}

// uploadedBytes is the image of an upload: the "file" part of a
// multipart form, or the body itself.
func uploadedBytes(ctx *fasthttp.RequestCtx) ([]byte, error) {
	media, params, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if media != "multipart/form-data" {
		return ctx.PostBody(), nil
	}
	r := multipart.NewReader(bytes.NewReader(ctx.PostBody()), params["boundary"])
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			return nil, marquee.Invalid("invalid asset", marquee.Problems{"file": "is required: a form field named file holding the image"})
		}
		if err != nil {
			return nil, marquee.Invalid("invalid asset", marquee.Problems{"body": "is not a readable multipart form"})
		}
		if part.FormName() == "file" {
			b, err := io.ReadAll(io.LimitReader(part, marquee.MaxAssetBytes+1))
			if err != nil {
				return nil, marquee.Invalid("invalid asset", marquee.Problems{"file": "could not be read"})
			}
			return b, nil
		}
	}
}

// handleAsset serves GET /assets/<sha256>.<ext>: the image, cached a year
// (its URL changes with its bytes), never sniffed, never a document.
func handleAsset(assets *cache.Cache[string, Image]) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		sha, typ, ok := marquee.ParseAssetPath(string(ctx.Path()))
		if !ok {
			return marquee.NoAsset(string(ctx.Path()))
		}
		im, err := assets.Get(context.Background(), sha)
		if err != nil {
			return err
		}
		if im.Type != typ {
			return marquee.NoAsset(string(ctx.Path()))
		}
		h := &ctx.Response.Header
		h.Set(fasthttp.HeaderContentType, im.Type)
		h.Set(fasthttp.HeaderCacheControl, "public, max-age=31536000, immutable")
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		h.Set(fasthttp.HeaderETag, `"`+sha+`"`)
		if bytes.Equal(ctx.Request.Header.Peek(fasthttp.HeaderIfNoneMatch), []byte(`"`+sha+`"`)) {
			ctx.SetStatusCode(fasthttp.StatusNotModified)
			return nil
		}
		ctx.SetBody(im.Body)
		return nil
	}
}
