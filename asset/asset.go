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
	if _, _, err := image.Decode(bytes.NewReader(body)); err != nil {
		return marquee.Asset{}, unreadable
	}
	sum := sha256.Sum256(body)
	return marquee.Asset{SHA: hex.EncodeToString(sum[:]), Type: typ, Width: cfg.Width, Height: cfg.Height, Size: int64(len(body))}, nil
}

// isSVG reports whether body looks like SVG (XML naming an svg element).
func isSVG(body []byte) bool {
	head := strings.ToLower(string(body[:min(len(body), 1024)]))
	return strings.Contains(head, "<svg")
}
