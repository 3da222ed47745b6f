// Package collector turns accepted events into compressed NDJSON files.
//
// The write path has no global lock: an event is appended to one of
// several shards (picked by the client's connection), each with its own
// buffer, writer goroutine, compressor and output file. A shard's writer
// takes the whole buffer at once (group writes) every FlushEvery, or at
// once when a durable request waits. Files are written under tmp/ as
// .part, and on rotation (by size or age) closed, fsynced and renamed to
// dt=YYYY-MM-DD/hour=HH/<instance>-<seq>.ndjson.<ext>, then handed to the
// shipper (if any), which deletes them once stored.
package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee"
)

// Config tunes a Collector. Zero values take the defaults.
type Config struct {
	// Dir is the spool: tmp/ for files being written, dt=…/ for finished
	// ones. Created if missing.
	Dir string
	// Instance names this instance's files; it must differ between
	// instances sharing a bucket.
	Instance string
	// Codec is lz4 (default), zstd or none.
	Codec string
	// RotateBytes ends a file after this many uncompressed bytes
	// (default 64 MiB); RotateAge after this long (default 60 s).
	RotateBytes int64
	RotateAge   time.Duration
	// FlushEvery is how long an accepted event may stay in memory
	// (default 200 ms): what a crash can lose outside durable mode.
	FlushEvery time.Duration
	// Durable makes Append return only once the event is written to its
	// file (the OS has it: it survives the process being killed).
	Durable bool
	// SpoolMax bounds the bytes awaiting shipment (and being written);
	// beyond it Append refuses events (default 1 GiB). Without a Shipper
	// finished files are the destination and do not count.
	SpoolMax int64
	// MaxPending bounds a shard's unwritten bytes (default 8 MiB).
	MaxPending int
	// Shards is how many buffers, writers and files run in parallel
	// (default 2 × GOMAXPROCS, so that appenders on different connections
	// rarely share a shard's lock).
	Shards int
	// Shipper, if set, receives every finished file.
	Shipper Shipper
	// Tally, if set, is told of every line written (reports count them).
	Tally Tally
	// Forwarders are told of every line written, as Tally is, and send
	// them on (to a broker); while one's backlog is at its bound, Append
	// refuses events.
	Forwarders []Forwarder
	// MinFree is the free space the spool's filesystem keeps: below it
	// Append refuses events (503), so that no event is acknowledged that
	// the disk cannot take. 0 takes the default, 1 GiB or 5% of the
	// filesystem, whichever is smaller; a negative value turns it off.
	MinFree int64
	// FreeSpace reports the free and total bytes of the filesystem that
	// holds dir (default: statfs); tests inject their own.
	FreeSpace func(dir string) (free, total uint64, err error)
	// ProbeEvery is how often free space is read (default 250 ms).
	ProbeEvery time.Duration
}

// DefaultMinFree is the free space kept on a filesystem of total bytes
// when Config.MinFree is 0: 1 GiB or 5%, whichever is smaller.
func DefaultMinFree(total uint64) uint64 { return min(1<<30, total/20) }

// Tally is told of what the collector writes, so that it can count it
// from the files: Written once lines are in their file (from the shard's
// writer goroutine; lines are valid only during the call), Finished when
// the file is complete. A file keeps its name from its first line to its
// partition, also when an interrupted file is completed at the next
// start. Before a file ships (and leaves the disk), Flush must have
// recorded everything written to it.
type Tally interface {
	Written(file string, offset int64, lines []byte)
	Finished(file string, size int64)
	Flush(ctx context.Context) error
}

// Forwarder is told of the lines written as a Tally is, and sends them
// on (package streams): a file ships and leaves the disk only once its
// Flush says the destination has everything written before.
type Forwarder interface {
	Tally
	// Full reports whether its backlog is at its bound: Append then
	// refuses events.
	Full() bool
	// Name names it in errors and readiness; Up says whether its
	// destination takes events.
	Name() string
	Up() bool
}

// ErrStreamFull is Append's error while a Forwarder's backlog is at its
// bound (its broker is down or slow).
var ErrStreamFull = marquee.Errorf(marquee.KindUnavailable, "overloaded: the event stream's broker is behind and its backlog is full")

// ErrFull is Append's error when the spool or a buffer is at its bound:
// the client should retry later (503 with Retry-After).
var ErrFull = marquee.Errorf(marquee.KindUnavailable, "overloaded: the event spool is full")

// ErrDiskFull is Append's error while the spool's filesystem is below
// its free-space watermark (Config.MinFree).
var ErrDiskFull = marquee.Errorf(marquee.KindUnavailable, "overloaded: the disk of the event spool is almost full")

// ErrClosed is Append's error once Close has begun.
var ErrClosed = marquee.Errorf(marquee.KindUnavailable, "overloaded: the event collector is shutting down")

// Collector accepts event lines and writes them to files. Append is safe for
// concurrent use; Close stops it.
type Collector struct {
	cfg    Config
	ext    string
	log    *slog.Logger
	m      *metrics
	shards []*shard
	seq    atomic.Int64 // last file seq handed out
	spool  atomic.Int64 // bytes counted against SpoolMax
	closed atomic.Bool
	low    atomic.Bool // the spool's filesystem is below MinFree
	// room is what may still be accepted: the free space above MinFree at
	// the last probe, less the bytes written since; unwritten is what was
	// accepted and not yet written. An event is acknowledged only while
	// unwritten fits in room, so that what is acknowledged fits on the
	// disk even when the disk fills between two probes.
	room, unwritten atomic.Int64
	stop            chan struct{}
	ship            *shipper
	wg              sync.WaitGroup
	ids             *IDs
}

// New recovers what an earlier run left in the spool (files being written
// are completed up to their last whole line; finished files are queued for
// shipment) and starts the writers and the shipper.
func New(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Collector, error) {
	if cfg.Codec == "" {
		cfg.Codec = "lz4"
	}
	ext, err := codecExt(cfg.Codec)
	if err != nil {
		return nil, err
	}
	if cfg.RotateBytes <= 0 {
		cfg.RotateBytes = 64 << 20
	}
	if cfg.RotateAge <= 0 {
		cfg.RotateAge = time.Minute
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = 200 * time.Millisecond
	}
	if cfg.SpoolMax <= 0 {
		cfg.SpoolMax = 1 << 30
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 8 << 20
	}
	if cfg.Shards <= 0 {
		cfg.Shards = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.Instance == "" {
		return nil, errors.New("collector: an instance name is required")
	}
	if cfg.FreeSpace == nil {
		cfg.FreeSpace = statfs
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = 250 * time.Millisecond
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("collector: %w", err)
	}
	ids, err := NewIDs()
	if err != nil {
		return nil, err
	}
	c := &Collector{cfg: cfg, ext: ext, log: log, ids: ids, stop: make(chan struct{})}
	c.room.Store(math.MaxInt64)
	c.m = newMetrics(reg, c.accepted)
	c.probe()
	// File seqs are milliseconds since the epoch ×1000: increasing across
	// restarts, so no name is ever reused.
	c.seq.Store(time.Now().UnixMilli() * 1000)
	leftovers, err := c.recoverSpool()
	if err != nil {
		return nil, err
	}
	if cfg.Shipper != nil {
		var shipCtx context.Context
		c.ship, shipCtx = newShipper(c, cfg.Shipper)
		for _, f := range leftovers {
			c.ship.enqueue(f)
		}
		c.wg.Go(func() { c.ship.run(shipCtx) })
	}
	for i := range cfg.Shards {
		s := newShard(c, i)
		c.shards = append(c.shards, s)
		c.wg.Go(s.run)
	}
	if cfg.MinFree >= 0 {
		c.wg.Go(c.watchDisk)
	}
	c.m.spool.Set(float64(c.spool.Load()))
	return c, nil
}

// AppendID appends a new event id to dst.
func (c *Collector) AppendID(dst []byte) []byte { return c.ids.Append(dst) }

// Append accepts event lines (each ending in '\n') for the shard that key
// picks (use the client connection's id: one connection's events keep their
// order). In durable mode it returns once they are written to the file.
func (c *Collector) Append(key uint64, lines []byte, events int) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if c.cfg.Shipper != nil && c.spool.Load() >= c.cfg.SpoolMax {
		c.m.rejected.WithLabelValues("spool full").Add(float64(events))
		return ErrFull
	}
	if c.low.Load() {
		c.m.rejected.WithLabelValues("disk full").Add(float64(events))
		return ErrDiskFull
	}
	for _, f := range c.cfg.Forwarders {
		if f.Full() {
			c.m.rejected.WithLabelValues("stream backlog full").Add(float64(events))
			return ErrStreamFull
		}
	}
	n := int64(len(lines))
	if c.unwritten.Add(n) > c.room.Load() {
		c.unwritten.Add(-n)
		c.m.rejected.WithLabelValues("disk full").Add(float64(events))
		return ErrDiskFull
	}
	s := c.shards[key%uint64(len(c.shards))]
	ticket, err := s.append(lines, events)
	if err != nil {
		c.unwritten.Add(-n)
		c.m.rejected.WithLabelValues("buffer full").Add(float64(events))
		return err
	}
	if c.cfg.Durable {
		return s.wait(ticket)
	}
	return nil
}

// Close stops accepting events, writes and finishes every file, and lets
// the shipper work until ctx is done; what it has not shipped by then stays
// in the spool for the next start.
func (c *Collector) Close(ctx context.Context) error {
	c.closed.Store(true)
	close(c.stop)
	var errs []error
	for _, s := range c.shards {
		errs = append(errs, s.close())
	}
	if c.ship != nil {
		c.ship.drain(ctx)
	}
	c.wg.Wait()
	return errors.Join(errs...)
}

// StreamsBehind names the Forwarders whose destination is down or whose
// backlog is full, with which: "nats: down", "kafka: backlog full".
func (c *Collector) StreamsBehind() []string {
	var out []string
	for _, f := range c.cfg.Forwarders {
		switch {
		case f.Full():
			out = append(out, f.Name()+": backlog full")
		case !f.Up():
			out = append(out, f.Name()+": down")
		}
	}
	return out
}

// DiskLow reports whether the spool's filesystem is below its free-space
// watermark (events are refused until it is not).
func (c *Collector) DiskLow() bool { return c.low.Load() }

// watchDisk reads the spool's free space every ProbeEvery until Close.
func (c *Collector) watchDisk() {
	t := time.NewTicker(c.cfg.ProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.probe()
		}
	}
}

// probe reads the spool's free space and sets whether it is below the
// watermark; a failed read changes nothing.
func (c *Collector) probe() {
	if c.cfg.MinFree < 0 {
		return
	}
	free, total, err := c.cfg.FreeSpace(c.cfg.Dir)
	if err != nil {
		return
	}
	want := uint64(c.cfg.MinFree)
	if c.cfg.MinFree == 0 {
		want = DefaultMinFree(total)
	}
	c.room.Store(int64(min(free, math.MaxInt64/2)) - int64(want)) // bytes written since are in free now
	low := free < want
	if low != c.low.Swap(low) {
		if low {
			c.log.Warn("the event spool's disk is below its free-space watermark: refusing events", "free", free, "min", want)
		} else {
			c.log.Info("the event spool's disk has room again: accepting events", "free", free, "min", want)
		}
	}
	c.m.diskFree.Set(float64(free))
	c.m.diskLow.Set(map[bool]float64{false: 0, true: 1}[low])
}

// wrote counts n accepted bytes written: no longer unwritten, and taken
// from the room until the next probe measures the disk again. (A probe
// between the write and this call counts the bytes twice until the next:
// it errs toward refusing.) The codecs write fewer bytes than they take.
func (c *Collector) wrote(n int) {
	c.unwritten.Add(-int64(n))
	if c.cfg.MinFree >= 0 {
		c.room.Add(-int64(n))
	}
}

// accepted sums the shards' counts of accepted events and bytes.
func (c *Collector) accepted() (events, bytes uint64) {
	for _, s := range c.shards {
		s.mu.Lock()
		events += s.events
		bytes += s.bytes
		s.mu.Unlock()
	}
	return events, bytes
}

// nextSeq returns the seq of a new file.
func (c *Collector) nextSeq() int64 { return c.seq.Add(1) }

// fileName is the name of the file of seq: <instance>-<seq><ext>.
func (c *Collector) fileName(seq int64) string {
	return fmt.Sprintf("%s-%d%s", c.cfg.Instance, seq, c.ext)
}

// recoverSpool completes the .part files an interrupted run left and returns
// every finished file awaiting shipment.
func (c *Collector) recoverSpool() ([]string, error) {
	parts, _ := filepath.Glob(filepath.Join(c.cfg.Dir, "tmp", "*.part"))
	for _, p := range parts {
		if _, err := c.salvagePart(p, -1); err != nil {
			return nil, fmt.Errorf("collector: recover %s: %w", p, err)
		}
	}
	finished, err := FinishedFiles(c.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("collector: scan spool: %w", err)
	}
	if c.cfg.Shipper != nil {
		for _, p := range finished {
			if fi, err := os.Stat(p); err == nil {
				c.spool.Add(fi.Size())
			}
		}
	}
	if len(parts) > 0 || len(finished) > 0 {
		c.log.Info("event spool recovered", "completed", len(parts), "finished files", len(finished))
	}
	return finished, nil
}

// FinishedFiles lists the finished files of the spool at dir: the files
// of its dt=… partitions (not tmp/, nor what others keep beside them,
// such as the streams' cursors); a dir that does not exist has none.
func FinishedFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case p == dir:
			return nil
		case filepath.Dir(p) == filepath.Clean(dir) && !(d.IsDir() && strings.HasPrefix(d.Name(), "dt=")):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case !d.IsDir():
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// salvagePart rewrites the whole lines of an interrupted file into a
// finished one, and returns its path ("" when it had no whole line). It
// reads the first good bytes of the file (all of it when good < 0).
func (c *Collector) salvagePart(p string, good int64) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	var r io.Reader = f
	if good >= 0 {
		r = io.LimitReader(f, good)
	}
	sv := salvage(p, r)
	f.Close()
	final := ""
	if lines := sv.lines; len(lines) > 0 {
		// The same name (a Tally knows the file by it), written beside
		// what it reads, in the partition of when the interrupted file
		// was opened. A crash before the .part is removed salvages it
		// again into the same name: the same file.
		opened := time.Now()
		if fi, err := os.Stat(p); err == nil {
			opened = fi.ModTime()
		}
		out, err := newFile(c, strings.TrimSuffix(filepath.Base(p), ".part"), opened, ".salvage")
		if err != nil {
			return "", err
		}
		if err := out.write(lines); err != nil {
			out.f.Close()
			os.Remove(out.part)
			return "", err
		}
		if final, err = out.finish(); err != nil {
			out.f.Close()
			os.Remove(out.part)
			return "", err
		}
	}
	// Reported once it is completed: a completion the full disk refuses
	// is tried again, and counted then.
	c.reportSalvage(p, good, sv)
	return final, os.Remove(p)
}

// reportSalvage logs what completing the .part p kept and dropped, and
// counts it. Completing a file is never routine (a crash, or a write
// that failed), so each one is a warning; one that dropped bytes
// (a damaged tail, a file that is not of its codec) is counted as
// damaged.
func (c *Collector) reportSalvage(p string, good int64, sv salvaged) {
	attrs := []any{"file", p, "bytes", sv.read, "lines", bytes.Count(sv.lines, []byte("\n")),
		"undecodable_bytes", sv.undecodable, "partial_line_bytes", sv.partial}
	if good >= 0 {
		attrs = append(attrs, "cut_at", good) // a failed write's bytes, cut off before
	}
	if sv.err != nil {
		attrs = append(attrs, "err", sv.err)
	}
	c.m.salvaged.Inc()
	switch {
	case sv.damaged():
		c.m.salvageDamaged.Inc()
		c.m.salvageDropped.Add(float64(sv.undecodable + sv.partial))
		if sv.partial > 0 {
			attrs = append(attrs, "lines_dropped", 1)
		}
		c.log.Warn("event file completed with a damaged tail: its whole lines are kept, the rest is dropped", attrs...)
	case sv.read == 0:
		c.log.Warn("empty event file removed", attrs...)
	default:
		c.log.Warn("event file completed after an interruption", attrs...)
	}
}
