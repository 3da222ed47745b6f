package asset_test

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"

	"marquee"
	"marquee/asset"
)

func img(w, h int) image.Image {
	m := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.Black})
	m.SetColorIndex(1, 1, 1)
	return m
}

func encode(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Inspect accepts the four image types whatever their name, with their
// real size, and refuses the rest with the right kind.
func TestInspect(t *testing.T) {
	webp, err := os.ReadFile("testdata/tiny.webp")
	if err != nil {
		t.Fatal(err)
	}
	pngBytes := encode(t, func(b *bytes.Buffer) error { return png.Encode(b, img(300, 250)) })
	for _, c := range []struct {
		name string
		body []byte
		typ  string
		w, h int
	}{
		{"png", pngBytes, "image/png", 300, 250},
		{"jpeg", encode(t, func(b *bytes.Buffer) error { return jpeg.Encode(b, img(728, 90), nil) }), "image/jpeg", 728, 90},
		{"gif", encode(t, func(b *bytes.Buffer) error { return gif.Encode(b, img(1, 1), nil) }), "image/gif", 1, 1},
		{"webp", webp, "image/webp", 0, 0},
	} {
		a, err := asset.Inspect(c.body)
		if err != nil || a.Type != c.typ || a.Size != int64(len(c.body)) || len(a.SHA) != 64 || a.Width < 1 || a.Height < 1 ||
			c.w != 0 && (a.Width != c.w || a.Height != c.h) {
			t.Errorf("Inspect(%s) = %+v, %v; want %s %dx%d", c.name, a, err, c.typ, c.w, c.h)
		}
		if !marquee.IsAssetPath(a.Path()) {
			t.Errorf("%s: path %q is not an asset path", c.name, a.Path())
		}
		if sha, typ, ok := marquee.ParseAssetPath(a.Path()); !ok || sha != a.SHA || typ != a.Type {
			t.Errorf("ParseAssetPath(%q) = %q, %q, %v", a.Path(), sha, typ, ok)
		}
	}
	big := append(append([]byte{}, pngBytes...), make([]byte, marquee.MaxAssetBytes)...)
	for _, c := range []struct {
		name string
		body []byte
		kind marquee.Kind
		msg  string
	}{
		{"svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), marquee.KindUnsupportedMedia, "SVG"},
		{"html", []byte(`<html><body>hi</body></html>`), marquee.KindUnsupportedMedia, "text/html"},
		{"a broken png", pngBytes[:40], marquee.KindInvalid, "readable png"},
		{"a gif header and nothing", []byte("GIF89a but not really"), marquee.KindInvalid, "invalid asset"},
		{"too many pixels", encode(t, func(b *bytes.Buffer) error { return png.Encode(b, img(4001, 10)) }), marquee.KindInvalid, "4001x10"},
		{"empty", nil, marquee.KindInvalid, "empty"},
		{"too large", big, marquee.KindTooLarge, "limit"},
	} {
		_, err := asset.Inspect(c.body)
		if e := marquee.AsError(err); e == nil || e.Kind != c.kind || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Inspect(%s) = %v; want kind %v saying %q", c.name, err, c.kind, c.msg)
		}
	}
}
