// Package tag holds the ad tag: the script a publisher's page loads from
// the ad server (/t.js) to fill its slots with ads, count impressions and
// viewable impressions, and send clicks (docs/tag.md). It is plain
// JavaScript with no build step, embedded in the binary.
package tag

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

// Script is the tag's source.
//
//go:embed t.js
var Script []byte

// Gzip is Script compressed with gzip (what most browsers are sent), and
// Version a digest of Script: the name of its immutable copy
// (/tag/{Version}.js) and its ETag.
var Gzip, Version = compress(Script), digest(Script)

// MaxGzip is the most bytes the gzipped tag may weigh (checked by a test).
const MaxGzip = 6144

func compress(b []byte) []byte {
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	z.Write(b)
	z.Close()
	return buf.Bytes()
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}
