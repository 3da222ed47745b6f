package collector

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codecs names the output encodings: LZ4 frames (the default), zstd
// frames, or plain NDJSON. Files open with the standard lz4 and zstd tools.
var Codecs = []string{"lz4", "zstd", "none"}

// encoder compresses one file. Flush makes everything written so far
// decodable from the file (a complete block); Close ends the frame.
type encoder interface {
	io.Writer
	Flush() error
	Close() error
}

// codecExt is the file extension of a codec's output.
func codecExt(codec string) (string, error) {
	switch codec {
	case "lz4":
		return ".ndjson.lz4", nil
	case "zstd":
		return ".ndjson.zst", nil
	case "none":
		return ".ndjson", nil
	}
	return "", fmt.Errorf("unknown codec %q: want one of %s", codec, strings.Join(Codecs, ", "))
}

func newEncoder(codec string, w io.Writer) (encoder, error) {
	switch codec {
	case "lz4":
		zw := lz4.NewWriter(w)
		// 64 KiB blocks, one goroutine: each stream already has its own.
		if err := zw.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ConcurrencyOption(1), lz4.BlockChecksumOption(true)); err != nil {
			return nil, err
		}
		return zw, nil
	case "zstd":
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	case "none":
		return &plain{bufio.NewWriterSize(w, 64<<10)}, nil
	}
	_, err := codecExt(codec)
	return nil, err
}

type plain struct{ *bufio.Writer }

func (p *plain) Close() error { return p.Flush() }

// NewReader decodes a spool or object file, choosing the codec by the
// file's name (.lz4, .zst, else plain; a trailing .part is ignored).
func NewReader(name string, r io.Reader) (io.Reader, error) {
	name = strings.TrimSuffix(name, ".part")
	switch {
	case strings.HasSuffix(name, ".lz4"):
		return lz4.NewReader(r), nil
	case strings.HasSuffix(name, ".zst"):
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return r, nil
}

// salvage decodes as much of a file as its complete blocks hold and
// returns the whole lines of it: what an interrupted writer left.
func salvage(name string, r io.Reader) []byte {
	var out bytes.Buffer
	dec, err := NewReader(name, r)
	if err == nil {
		io.Copy(&out, dec) // stops at the first incomplete block
	}
	b := out.Bytes()
	return b[:bytes.LastIndexByte(b, '\n')+1]
}
