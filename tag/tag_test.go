package tag_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"marquee/tag"
)

// The tag a browser is sent gzipped weighs at most 6 KB (its Prebid.js
// glue apart: only pages with Prebid load it), and each script unzips to
// its source.
func TestGzippedSize(t *testing.T) {
	if n := len(tag.Tag.Gzip); n > tag.MaxGzip || n == 0 {
		t.Errorf("the gzipped tag is %d bytes; want 1 to %d", n, tag.MaxGzip)
	}
	for _, s := range []*tag.Script{tag.Tag, tag.Prebid} {
		z, err := gzip.NewReader(bytes.NewReader(s.Gzip))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(z)
		if err != nil || !bytes.Equal(got, s.Source) || len(s.Version) != 12 {
			t.Errorf("gunzip(Gzip) = %d bytes, %v; want the %d bytes of Source (version %q)", len(got), err, len(s.Source), s.Version)
		}
	}
	if tag.Tag.Version == tag.Prebid.Version {
		t.Errorf("the tag and its glue share the version %s", tag.Tag.Version)
	}
}
