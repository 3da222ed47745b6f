package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/cache"
	"marquee/clicks"
)

const (
	linkRoutePrefix = "/api/v1/links/"
	redirectPrefix  = "/r/"
	maxReferrer     = 1024 // bytes of a Referer a click event keeps
)

// NewLinkCache returns the cache of links by code that GET /r/{code}
// reads, loading from store (see bounded).
func NewLinkCache(store LinkStore, capacity cache.Capacity, reg prometheus.Registerer) *cache.Cache[string, marquee.Link] {
	return cache.New(cache.Config[string, marquee.Link]{
		Name: "link", Capacity: capacity, Load: bounded(store.LinkTarget),
		// Strings, plus the struct (~150 bytes) and otter's node (~100).
		Weigh: func(code string, l marquee.Link) uint32 { return uint32(250 + 2*len(code) + len(l.URL)) },
	}, reg)
}

// NewAdCache returns the cache that GET /api/v1/ad/{id} reads: each ad's
// JSON body, rendered once when it is loaded from store (see bounded). encoding/json per request was most of the route's cost.
func NewAdCache(store AdStore, capacity cache.Capacity, reg prometheus.Registerer) *cache.Cache[int64, []byte] {
	return cache.New(cache.Config[int64, []byte]{
		Name: "ad", Capacity: capacity,
		Load: bounded(func(ctx context.Context, id int64) ([]byte, error) {
			a, err := store.Ad(ctx, id)
			if err != nil {
				return nil, err
			}
			return renderJSON(a), nil
		}),
		// The body, plus the slice header and otter's node.
		Weigh: func(_ int64, body []byte) uint32 { return uint32(120 + len(body)) },
	}, reg)
}

// bounded gives every call of load a context that ends after storeTimeout:
// a cache's loads, which the handlers start with no deadline of their own.
func bounded[K, V any](load func(context.Context, K) (V, error)) func(context.Context, K) (V, error) {
	return func(ctx context.Context, k K) (V, error) {
		ctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		return load(ctx, k)
	}
}

// redirector serves GET /r/{code}: the link from the cache, the click
// counted in memory and sent to the event collector — no store write.
type redirector struct {
	links         *cache.Cache[string, marquee.Link]
	clicks        *clicks.Counter
	events        *eventEnv
	log           *slog.Logger
	eventsDropped prometheus.Counter
}

// handle answers the link's redirect, 404 for an unknown code, 410 for an
// expired link or one at its click limit. HEAD answers the same without
// counting a click (link checkers and previews are not visitors).
func (r *redirector) handle(ctx *fasthttp.RequestCtx) error {
	code := ctx.Path()[len(redirectPrefix):]
	if !marquee.CodeShaped(code) {
		return errorf(fasthttp.StatusNotFound, "no link %q", code)
	}
	// A link's load has its own timeout (NewLinkCache); a hit needs no
	// context.
	l, err := r.links.Get(context.Background(), string(code))
	if errors.Is(err, marquee.ErrNotFound) {
		return errorf(fasthttp.StatusNotFound, "no link %q", code)
	}
	if err != nil {
		return err
	}
	if !l.ExpiresAt.IsZero() && !ctx.Time().Before(l.ExpiresAt) {
		return errorf(fasthttp.StatusGone, "link %q has expired", code)
	}
	if ctx.IsHead() {
		if r.clicks.Reached(&l) {
			return errorf(fasthttp.StatusGone, "link %q has reached its maximum number of clicks", code)
		}
	} else {
		if !r.clicks.Take(&l) {
			return errorf(fasthttp.StatusGone, "link %q has reached its maximum number of clicks", code)
		}
		r.clickEvent(ctx, &l)
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, l.URL)
	ctx.SetStatusCode(l.Redirect)
	return nil
}

// clickEvent sends the click to the collector. A refused event (spool
// full) is counted, not a reason to fail the redirect.
func (r *redirector) clickEvent(ctx *fasthttp.RequestCtx, l *marquee.Link) {
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	line := r.events.appendHead((*bp)[:0], ctx)
	line = append(line, `,"type":"click","code":"`...)
	line = append(line, l.Code...) // codes need no escaping
	line = append(line, '"')
	if l.AdID > 0 {
		line = append(line, `,"adId":"`...)
		line = strconv.AppendInt(line, l.AdID, 10)
		line = append(line, '"')
	}
	if ref := ctx.Referer(); len(ref) > 0 {
		line = append(line, `,"referrer":`...)
		line, _ = marquee.AppendJSONString(line, ref[:min(len(ref), maxReferrer)])
	}
	line = append(line, '}', '\n')
	*bp = line
	if err := r.events.sink.Append(ctx.ConnID(), line, 1); err != nil {
		r.eventsDropped.Inc()
	}
}

// linkCode parses the {code} segment of the admin routes.
func linkCode(ctx *fasthttp.RequestCtx) (string, error) {
	seg := bytes.TrimPrefix(ctx.Path(), []byte(linkRoutePrefix))
	if !marquee.CodeShaped(seg) {
		return "", errorf(fasthttp.StatusNotFound, "no link %q", seg)
	}
	return string(seg), nil
}

func linkNotFoundAs(err error, code string) error {
	if errors.Is(err, marquee.ErrNotFound) {
		return errorf(fasthttp.StatusNotFound, "no link %q", code)
	}
	return err
}

// readLinkInput checks the body's type and size, then parses it as a link.
func readLinkInput(ctx *fasthttp.RequestCtx) (marquee.LinkInput, error) {
	if err := checkJSONBody(ctx, MaxLinkBody); err != nil {
		return marquee.LinkInput{}, err
	}
	return marquee.ParseLinkInput(ctx.PostBody())
}

// handleCreateLink serves POST /api/v1/links: 201 with the link.
func handleCreateLink(store LinkStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readLinkInput(ctx)
		if err != nil {
			return err
		}
		l, err := store.CreateLink(sctx, in)
		if err := w.visible(sctx, err, "link"); err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, linkRoutePrefix+l.Code)
		writeJSON(ctx, fasthttp.StatusCreated, l)
		return nil
	}
}

// handleGetLink serves GET /api/v1/links/{code}: the link as stored, its
// clicks as of the last flush.
func handleGetLink(store LinkStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		code, err := linkCode(ctx)
		if err != nil {
			return err
		}
		l, err := store.Link(sctx, code)
		if err != nil {
			return linkNotFoundAs(err, code)
		}
		writeJSON(ctx, fasthttp.StatusOK, l)
		return nil
	}
}

// handleReplaceLink serves PUT /api/v1/links/{code}: the body is a whole
// link, as for create; the code stays.
func handleReplaceLink(store LinkStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		code, err := linkCode(ctx)
		if err != nil {
			return err
		}
		in, err := readLinkInput(ctx)
		if err != nil {
			return err
		}
		l, err := store.ReplaceLink(sctx, code, in)
		if err := w.visible(sctx, err, "link"); err != nil {
			return linkNotFoundAs(err, code)
		}
		writeJSON(ctx, fasthttp.StatusOK, l)
		return nil
	}
}

// handleDeleteLink serves DELETE /api/v1/links/{code}.
func handleDeleteLink(store LinkStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		code, err := linkCode(ctx)
		if err != nil {
			return err
		}
		if err := w.visible(sctx, store.DeleteLink(sctx, code), "link"); err != nil {
			return linkNotFoundAs(err, code)
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// handleListLinks serves GET /api/v1/links?offset=&limit=: newest first.
func handleListLinks(store LinkStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		args := ctx.QueryArgs()
		offset, limit := 0, adminDefLimit
		p := marquee.Problems{}
		bad := func(k, msg string) { p[k] = msg }
		intParam(args, "offset", 0, math.MaxInt, &offset, bad)
		intParam(args, "limit", 1, adminMaxLimit, &limit, bad)
		if len(p) > 0 {
			return &marquee.InvalidError{What: "invalid query", Problems: p}
		}
		links, total, err := store.ListLinks(sctx, offset, limit)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, adminPage[marquee.Link]{Items: links, Total: total, Offset: offset, Limit: limit})
		return nil
	}
}
