// Package tag holds the ad tag: the script a publisher's page loads from
// the ad server (/t.js) to fill its slots with ads, count impressions and
// viewable impressions, and send clicks (docs/tag.md), and its Prebid.js
// glue (/pb.js), which the tag loads only on pages that say they run
// Prebid.js. Both are plain JavaScript with no build step, embedded in the
// binary.
package tag

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

// A Script is one of the tag's files: its source, the source gzipped
// (what most browsers are sent), and Version, a digest of the source: the
// name of its immutable copy and its ETag. Never changed after start.
type Script struct {
	Source, Gzip []byte
	Version      string
}

var (
	//go:embed t.js
	tagSource []byte
	//go:embed pb.js
	prebidSource []byte
)

// Tag is the ad tag (/t.js); Prebid its Prebid.js glue (/pb.js).
var Tag, Prebid = load(tagSource), load(prebidSource)

// MaxGzip is the most bytes the gzipped tag may weigh, the glue apart
// (checked by a test).
const MaxGzip = 6144

func load(src []byte) *Script {
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	z.Write(src)
	z.Close()
	sum := sha256.Sum256(src)
	return &Script{Source: src, Gzip: buf.Bytes(), Version: hex.EncodeToString(sum[:6])}
}
