// Package asset reads what an uploaded image is: its media type sniffed
// from its bytes (never taken from a header), its size in pixels read
// from the image itself, and its content address.
package asset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // decoders for image.DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"strings"

	_ "golang.org/x/image/webp"

	"marquee"
)

// Inspect returns the asset body is: a PNG, JPEG, GIF or WebP image of at
// most marquee.MaxAssetBytes whose dimensions can be read. Anything else
// is refused: KindTooLarge, KindUnsupportedMedia (another type — SVG
// named apart), or KindInvalid (an image that does not decode).
func Inspect(body []byte) (marquee.Asset, error) {
	if len(body) > marquee.MaxAssetBytes {
		return marquee.Asset{}, marquee.Errorf(marquee.KindTooLarge, "the image is %d bytes; the limit is %d", len(body), marquee.MaxAssetBytes)
	}
	if len(body) == 0 {
		return marquee.Asset{}, marquee.Invalid("invalid asset", marquee.Problems{"body": "is empty: send the image's bytes"})
	}
	typ := http.DetectContentType(body)
	if _, ok := marquee.AssetTypes[typ]; !ok {
		if isSVG(body) {
			return marquee.Asset{}, marquee.Errorf(marquee.KindUnsupportedMedia, "SVG images are refused (an SVG can hold script): send a PNG, JPEG, GIF or WebP")
		}
		return marquee.Asset{}, marquee.Errorf(marquee.KindUnsupportedMedia, "the bytes are %s, not a PNG, JPEG, GIF or WebP image", typ)
	}
	// The header first (a size beyond any creative's is refused before
	// the pixels are allocated), then the whole image: a header alone
	// says nothing of the rest.
	unreadable := marquee.Invalid("invalid asset", marquee.Problems{"body": "is not a readable " + marquee.AssetTypes[typ] + " image"})
	cfg, _, err := image.DecodeConfig(bytes.NewReader(body))
	if err != nil || cfg.Width < 1 || cfg.Height < 1 {
		return marquee.Asset{}, unreadable
	}
	if cfg.Width > marquee.MaxCreativeSide || cfg.Height > marquee.MaxCreativeSide {
		return marquee.Asset{}, marquee.Invalid("invalid asset", marquee.Problems{"body": fmt.Sprintf(
			"is %dx%d pixels; an image may be at most %dx%d", cfg.Width, cfg.Height, marquee.MaxCreativeSide, marquee.MaxCreativeSide)})
	}
	if n := decodedBytes(cfg); n > MaxDecodedBytes {
		return marquee.Asset{}, marquee.Invalid("invalid asset", marquee.Problems{"body": fmt.Sprintf(
			"is %dx%d pixels of %d bytes each, %d MiB once decoded; at most %d MiB are read: scale it down, or save it with 8 bits a channel",
			cfg.Width, cfg.Height, n/int64(cfg.Width*cfg.Height), n>>20, MaxDecodedBytes>>20)})
	}
	decoding <- struct{}{}
	_, _, err = image.Decode(bytes.NewReader(body))
	<-decoding
	if err != nil {
		return marquee.Asset{}, unreadable
	}
	sum := sha256.Sum256(body)
	return marquee.Asset{SHA: hex.EncodeToString(sum[:]), Type: typ, Width: cfg.Width, Height: cfg.Height, Size: int64(len(body))}, nil
}

// MaxDecodedBytes bounds what an image may take once decoded, read from
// its header before a pixel is allocated: a 132 KB PNG of 4,000 × 4,000
// pixels of 16 bits a channel is 128 MB decoded; a 4,000 × 4,000 JPEG
// (24 MB) passes. One image is decoded at a time in a process (decoding),
// so that uploads at once add at most this much.
const MaxDecodedBytes = 32 << 20

// decoding is held while an image is decoded: one at a time.
var decoding = make(chan struct{}, 1)

// decodedBytes is what an image of cfg takes decoded, by the decoders'
// own layouts (the largest a format gives its color model: a JPEG's or a
// WebP's YCbCr as 4:4:4).
func decodedBytes(cfg image.Config) int64 {
	per := int64(4)
	switch m := cfg.ColorModel; m {
	case color.RGBA64Model, color.NRGBA64Model:
		per = 8
	case color.Gray16Model:
		per = 2
	case color.GrayModel, color.AlphaModel:
		per = 1
	case color.YCbCrModel:
		per = 3
	case color.NYCbCrAModel:
		per = 4
	default:
		if _, ok := m.(color.Palette); ok {
			per = 1
		}
	}
	return int64(cfg.Width) * int64(cfg.Height) * per
}

// isSVG reports whether body looks like SVG (XML naming an svg element).
func isSVG(body []byte) bool {
	head := strings.ToLower(string(body[:min(len(body), 1024)]))
	return strings.Contains(head, "<svg")
}
