package collector

import (
	"os"
	"path/filepath"
	"time"
)

// file is one output file being written: a .part under tmp/ until finish
// renames it into its partition.
type file struct {
	c       *Collector
	name    string // <instance>-<seq><ext>: its name in its partition, and in a Tally
	opened  time.Time
	part    string
	f       *os.File
	enc     encoder
	raw     int64 // uncompressed bytes written
	written int64 // compressed bytes in the file (counted against the spool)
}

// newFile opens file name (see fileName) for writing as tmp/<name><suffix>,
// in the codec its name says (a file completed after a restart keeps
// the codec it was begun in).
func newFile(c *Collector, name string, opened time.Time, suffix string) (*file, error) {
	part := filepath.Join(c.cfg.Dir, "tmp", name+suffix)
	f, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	out := &file{c: c, name: name, opened: opened, part: part, f: f}
	if out.enc, err = newEncoder(codecOf(name), (*countWriter)(out)); err != nil {
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

// write writes lines and makes them decodable from the file, then tells
// the Tally (if any) where they are.
func (f *file) write(lines []byte) error {
	if _, err := f.enc.Write(lines); err != nil {
		return err
	}
	if err := f.enc.Flush(); err != nil {
		return err
	}
	if f.c.cfg.Tally != nil {
		f.c.cfg.Tally.Written(f.name, f.raw, lines)
	}
	for _, fw := range f.c.cfg.Forwarders {
		fw.Written(f.name, f.raw, lines)
	}
	f.raw += int64(len(lines))
	return nil
}

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
	final := filepath.Join(dir, f.name)
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
	if f.c.cfg.Tally != nil {
		f.c.cfg.Tally.Finished(f.name, f.raw)
	}
	for _, fw := range f.c.cfg.Forwarders {
		fw.Finished(f.name, f.raw)
	}
	f.c.m.rotated.Inc()
	if f.raw > 0 {
		f.c.m.ratio.Set(float64(f.raw) / float64(max(f.written, 1)))
	}
	return final, nil
}
