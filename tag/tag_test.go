package tag_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"marquee/tag"
)

// The tag a browser is sent gzipped weighs at most 6 KB, and unzips to
// the script.
func TestGzippedSize(t *testing.T) {
	if n := len(tag.Gzip); n > tag.MaxGzip || n == 0 {
		t.Errorf("the gzipped tag is %d bytes; want 1 to %d", n, tag.MaxGzip)
	}
	z, err := gzip.NewReader(bytes.NewReader(tag.Gzip))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(z)
	if err != nil || !bytes.Equal(got, tag.Script) {
		t.Errorf("gunzip(Gzip) = %d bytes, %v; want the %d bytes of Script", len(got), err, len(tag.Script))
	}
}
