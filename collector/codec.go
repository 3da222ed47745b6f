package collector

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
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

// codecOf is the codec of a file by its name (.lz4, .zst, else none; a
// trailing .part is ignored).
func codecOf(name string) string {
	name = strings.TrimSuffix(name, ".part")
	switch {
	case strings.HasSuffix(name, ".lz4"):
		return "lz4"
	case strings.HasSuffix(name, ".zst"):
		return "zstd"
	}
	return "none"
}

// NewReader decodes a spool or object file, choosing the codec by the
// file's name (.lz4, .zst, else plain; a trailing .part is ignored).
func NewReader(name string, r io.Reader) (io.Reader, error) {
	switch codecOf(name) {
	case "lz4":
		return lz4.NewReader(r), nil
	case "zstd":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return r, nil
}

// ReadFile decodes a finished event file to its NDJSON.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := NewReader(path, f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// salvaged is what salvage made of a file.
type salvaged struct {
	lines       []byte // the whole lines decoded
	read        int64  // bytes read from the file
	undecodable int64  // bytes of the file after the last that decoded into data
	partial     int64  // decoded bytes after the last whole line (a cut line)
	err         error  // why decoding stopped, when not at a clean end
}

// damaged reports whether salvage dropped anything it read.
func (s salvaged) damaged() bool { return s.undecodable > 0 || s.partial > 0 }

// salvage decodes as much of a file as its complete blocks hold and
// returns the whole lines of it: what an interrupted writer left, with
// what it could not use.
func salvage(name string, r io.Reader) salvaged {
	var out bytes.Buffer
	in := &countReader{r: r}
	var s salvaged
	var used int64 // in.n when the decoder last gave data
	dec, err := NewReader(name, in)
	if err == nil {
		buf := make([]byte, 32<<10)
		for {
			n, rerr := dec.Read(buf)
			if n > 0 {
				out.Write(buf[:n])
				used = in.n
			}
			if rerr != nil {
				// A file cut after its last flushed block (a crash, or a
				// failed write cut back) ends without the frame's end.
				if rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
					err = rerr
				}
				break
			}
		}
	}
	io.Copy(io.Discard, in) // count what is left unread
	b := out.Bytes()
	s.lines = b[:bytes.LastIndexByte(b, '\n')+1]
	s.read, s.undecodable, s.partial, s.err = in.n, in.n-used, int64(len(b)-len(s.lines)), err
	return s
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
