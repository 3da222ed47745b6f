package asset_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// pngSized is m as a PNG whose header says it is w × h (its CRC mended):
// what a decoder's header read sees of a far larger image, made cheaply.
func pngSized(t *testing.T, m image.Image, w, h uint32) []byte {
	b := encode(t, func(b *bytes.Buffer) error { return png.Encode(b, m) })
	ihdr := b[8+8 : 8+8+13] // the signature, IHDR's length and type, then its data
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	binary.BigEndian.PutUint32(b[8+8+13:], crc32.ChecksumIEEE(b[8+4:8+8+13]))
	return b
}

// heapBytes is what the heap's objects take, garbage not yet swept
// included.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestDecompressionBomb: a 16-bit PNG of 4,000 × 4,000 pixels (the
// attack's was 132 KB, its header here on a tiny one), 128 MB decoded, is refused from its header, naming
// what it would take, and allocates next to nothing; 16 uploads at once
// of a large image (2,800 × 2,800 of a palette, 7.5 MiB decoded) add a
// few tens of MB to the heap at most, not 16 × 7.5: one image is decoded
// at a time.
func TestDecompressionBomb(t *testing.T) {
	bomb := pngSized(t, image.NewRGBA64(image.Rect(0, 0, 1, 1)), 4000, 4000)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := asset.Inspect(bomb)
	runtime.ReadMemStats(&after)
	if marquee.KindOf(err) != marquee.KindInvalid || !strings.Contains(marquee.AsError(err).Problems["body"], "8 bytes each, 122 MiB once decoded; at most 32 MiB") {
		t.Errorf("Inspect(16-bit 4000x4000 PNG) = %v; want invalid, naming its 122 MiB decoded and the 32 allowed", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("refusing the bomb allocated %d bytes; want under 1 MiB", n)
	}

	largest := encode(t, func(b *bytes.Buffer) error { return png.Encode(b, img(2800, 2800)) })
	runtime.GC()
	base := heapBytes()
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			default:
			}
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if a, err := asset.Inspect(largest); err != nil || a.Width != 2800 {
				t.Errorf("Inspect(2800x2800 paletted PNG) = %+v, %v; want it read", a, err)
			}
		})
	}
	wg.Wait()
	close(done)
	<-sampled
	if grew := int64(peak.Load()) - int64(base); grew > 48<<20 {
		t.Errorf("16 uploads at once of 7.5 MiB decoded each grew the heap by %d MiB at its peak; want under 48", grew>>20)
	}
}
