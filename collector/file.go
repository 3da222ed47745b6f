package collector

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// file is one output file being written: a .part under tmp/ until finish
// renames it into its partition.
type file struct {
	c       *Collector
	seq     int64
	opened  time.Time
	part    string
	f       *os.File
	enc     encoder
	raw     int64 // uncompressed bytes written
	written int64 // compressed bytes in the file (counted against the spool)
}

func newFile(c *Collector, seq int64, opened time.Time) (*file, error) {
	name := fmt.Sprintf("%s-%d%s", c.cfg.Instance, seq, c.ext)
	part := filepath.Join(c.cfg.Dir, "tmp", name+".part")
	f, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	out := &file{c: c, seq: seq, opened: opened, part: part, f: f}
	if out.enc, err = newEncoder(c.cfg.Codec, (*countWriter)(out)); err != nil {
		f.Close()
		return nil, err
	}
	return out, nil
}

// countWriter counts the compressed bytes reaching the file.
type countWriter file

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	w.c.spool.Add(int64(n))
	w.c.m.bytesOut.Add(float64(n))
	return n, err
}

func (f *file) write(lines []byte) error {
	if _, err := f.enc.Write(lines); err != nil {
		return err
	}
	f.raw += int64(len(lines))
	return nil
}

// flush makes everything written so far decodable from the file.
func (f *file) flush() error { return f.enc.Flush() }

// finish ends the frame, fsyncs and renames the file into its partition,
// and returns its final path.
func (f *file) finish() (string, error) {
	if err := f.enc.Close(); err != nil {
		return "", err
	}
	if err := f.f.Sync(); err != nil {
		return "", err
	}
	if err := f.f.Close(); err != nil {
		return "", err
	}
	t := f.opened.UTC()
	dir := filepath.Join(f.c.cfg.Dir, "dt="+t.Format("2006-01-02"), "hour="+t.Format("15"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(dir, filepath.Base(f.part[:len(f.part)-len(".part")]))
	if err := os.Rename(f.part, final); err != nil {
		return "", err
	}
	if d, err := os.Open(dir); err == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	if f.c.cfg.Shipper == nil {
		f.c.spool.Add(-f.written) // delivered: finished files are the destination
	}
	f.c.m.rotated.Inc()
	if f.raw > 0 {
		f.c.m.ratio.Set(float64(f.raw) / float64(max(f.written, 1)))
	}
	return final, nil
}
