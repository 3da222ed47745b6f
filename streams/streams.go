// Package streams forwards the collector's events to a message broker
// (Kafka, NATS JetStream: see its subpackages) beside the files.
//
// The files stay the source of truth. A Forwarder is told of every line
// the collector writes, once it is in its file (collector.Tally), and
// publishes it, in the order written, with a key (the event's ad, link or
// user) and the event's id. A cursor kept in the spool says how far the
// broker has acknowledged each file. So the promise is the files': an
// event is acknowledged to its client once it is in its file (in durable
// mode, written; otherwise within the flush interval), and whatever the
// broker has not acknowledged is published again — from memory while the
// process lives, from the files after a restart — until it has. A crash
// may duplicate events in the broker, never drop them: consumers
// deduplicate by the event id.
//
// While the broker is down the collector keeps writing files and the
// Forwarder keeps the lines in memory, up to Config.Backlog bytes; past
// it, the collector refuses new events (503 with Retry-After) until the
// broker takes the backlog.
package streams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee/collector"
	"marquee/eventline"
)

// Message is what a broker gets: one event — its key (the partition
// key: one key's messages keep their order; nil for an event without
// one), its id (unique per event, the same in every copy: what a
// consumer deduplicates by) and its line (JSON, no newline) — or, for a
// broker that takes runs of events (Broker.RunBytes), a run of whole
// lines as NDJSON (each ending in a newline), no key, and the id of its
// first event with "+" and its number of events (so that a run sent
// again, identical, has the same id). File and Offset say where its
// (first) line is: the spool's file and the line's offset in it
// (uncompressed bytes) — each file's lines reach the broker in order.
// Its slices are valid until Publish returns.
type Message struct {
	Key, ID, Value []byte
	Events         int
	File           string
	Offset         int64
}

// Broker publishes messages to one destination (a topic, a subject).
type Broker interface {
	// Publish sends msgs in order and returns nil once the broker has
	// acknowledged every one. On an error some may be stored: they are
	// all sent again.
	Publish(ctx context.Context, msgs []Message) error
	// RunBytes is 0 for a broker that takes one event a message, or how
	// many bytes of NDJSON a message holds at most (at least one line).
	RunBytes() int
	Close() error
}

// Keys a message can be keyed by (Config.Key).
var Keys = []string{"ad", "link", "user"}

// Config tunes a Forwarder. Zero values take the defaults.
type Config struct {
	// Name names the stream in metrics, logs and its cursor's file
	// (<Dir>/streams/<Name>.cursor): "kafka", "nats".
	Name string
	// Dir is the collector's spool.
	Dir string
	// Key is the field a message is keyed by: ad (default), link or
	// user; an event without it is keyed by the next of ad, link, user
	// it has, or not at all.
	Key string
	// Backlog bounds the bytes held for the broker; past it the
	// collector refuses events (default 256 MiB).
	Backlog int64
	// Batch is how many messages a publish carries at most (default 1,000).
	Batch int
	// Retry is the first wait after a failed publish, doubled to 5 s
	// (default 100 ms).
	Retry time.Duration
	// PublishTimeout bounds one publish (default 15 s).
	PublishTimeout time.Duration
	// Stalled is how long a publish may go unacknowledged before the
	// broker counts as down (default 2 s): a client library may wait
	// for a broker that went away longer than a reader of /readyz
	// should.
	Stalled time.Duration
	// Linger, when set, spaces publishes that are not full (fewer than
	// Batch messages) at least this far apart, start to start, so that
	// a broker that wants few large writes (ClickHouse) gets them; a
	// full batch goes at once, and so does the rest once closing.
	Linger     time.Duration
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// Forwarder publishes what the collector writes (it is a
// collector.Forwarder). Its methods are safe for concurrent use; Close
// stops it.
type Forwarder struct {
	cfg    Config
	broker Broker
	order  [3]int // eventline fields tried for the key, in order
	m      *metrics

	mu        sync.Mutex
	wake      *sync.Cond // broadcast on a new chunk, progress and close
	live      []chunk    // lines told by Written, oldest first
	recovered bool       // Recover has run: nothing is published before
	cursor    map[string]*mark
	known     map[string]bool // files Written told of in this process
	backlog   int64           // bytes in live
	seq       uint64          // chunks queued
	acked     uint64          // every chunk up to this seq is acknowledged
	dirty     bool            // cursor changed since saved
	closing   bool

	lines int         // with Linger: lines in live not yet published (about: what next weighs against Batch)
	until time.Time   // with Linger: the next publish waits until then, unless a batch is full
	timer *time.Timer // wakes next at until

	up    atomic.Bool
	since atomic.Int64  // when the publish in flight began (unix ns), 0 when none is
	done  chan struct{} // closed when run returns
	stop  context.CancelFunc
}

// chunk is lines of one file from offset (uncompressed bytes), published
// from sent on.
type chunk struct {
	file   string
	offset int64
	data   []byte
	sent   int // bytes of data acknowledged
	seq    uint64
}

// mark is a file's cursor: the uncompressed bytes the broker has
// acknowledged from its start, and whether that is all of it.
type mark struct {
	Acked int64 `json:"acked"`
	Size  int64 `json:"size"` // -1 while the file is being written
	Done  bool  `json:"done,omitempty"`
}

// Open returns a Forwarder publishing to broker and loads its cursor.
// Call it before collector.New (which completes the files an earlier run
// left, and tells the Forwarder of their lines), and Recover after.
//
// The first time a stream is turned on (no cursor yet), the events
// already in the spool are not sent: the stream carries events from then
// on. A stream turned off and on again sends what was written meanwhile
// (what is still on disk).
func Open(cfg Config, broker Broker) (*Forwarder, error) {
	if cfg.Name == "" || cfg.Dir == "" {
		return nil, errors.New("streams: a name and a spool directory are required")
	}
	if cfg.Key == "" {
		cfg.Key = "ad"
	}
	if cfg.Backlog <= 0 {
		cfg.Backlog = 256 << 20
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 1000
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 100 * time.Millisecond
	}
	if cfg.PublishTimeout <= 0 {
		cfg.PublishTimeout = 15 * time.Second
	}
	if cfg.Stalled <= 0 {
		cfg.Stalled = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	f := &Forwarder{cfg: cfg, broker: broker, cursor: map[string]*mark{}, known: map[string]bool{}, done: make(chan struct{})}
	switch cfg.Key {
	case "ad":
		f.order = [3]int{eventline.Ad, eventline.Link, eventline.UID}
	case "link":
		f.order = [3]int{eventline.Link, eventline.Ad, eventline.UID}
	case "user":
		f.order = [3]int{eventline.UID, eventline.Ad, eventline.Link}
	default:
		return nil, fmt.Errorf("streams: key %q: want one of %s", cfg.Key, strings.Join(Keys, ", "))
	}
	f.wake = sync.NewCond(&f.mu)
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "streams"), 0o755); err != nil {
		return nil, fmt.Errorf("streams: %w", err)
	}
	if err := f.load(); err != nil {
		return nil, err
	}
	f.m = newMetrics(cfg.Registerer, cfg.Name, f)
	f.up.Store(true) // until a publish fails
	ctx, stop := context.WithCancel(context.Background())
	f.stop = stop
	go f.run(ctx)
	return f, nil
}

func (f *Forwarder) cursorPath() string {
	return filepath.Join(f.cfg.Dir, "streams", f.cfg.Name+".cursor")
}

// load reads the cursor; without one, it marks every file of the spool
// done (see Open).
func (f *Forwarder) load() error {
	b, err := os.ReadFile(f.cursorPath())
	if err == nil {
		if err := json.Unmarshal(b, &f.cursor); err != nil {
			return fmt.Errorf("streams: cursor %s: %w", f.cursorPath(), err)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("streams: %w", err)
	}
	finished, err := collector.FinishedFiles(f.cfg.Dir)
	if err != nil {
		return fmt.Errorf("streams: %w", err)
	}
	parts, _ := filepath.Glob(filepath.Join(f.cfg.Dir, "tmp", "*.part"))
	for _, p := range append(finished, parts...) {
		f.cursor[strings.TrimSuffix(filepath.Base(p), ".part")] = &mark{Done: true}
	}
	return f.save()
}

// save writes the cursor (a new file renamed over the old: never half
// written).
func (f *Forwarder) save() error {
	f.mu.Lock()
	b, err := json.Marshal(f.cursor)
	f.dirty = false
	f.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := f.cursorPath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("streams: save cursor: %w", err)
	}
	if err := os.Rename(tmp, f.cursorPath()); err != nil {
		return fmt.Errorf("streams: save cursor: %w", err)
	}
	return nil
}

// Written queues lines of file, which start at offset (uncompressed),
// leaving out what the broker has acknowledged already (a file completed
// again after a crash). It copies lines.
func (f *Forwarder) Written(file string, offset int64, lines []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.known[file] = true
	m := f.cursor[file]
	if m == nil {
		m = &mark{Size: -1}
		f.cursor[file] = m
	}
	if m.Done {
		return
	}
	if skip := m.Acked - offset; skip >= int64(len(lines)) {
		return
	} else if skip > 0 {
		lines, offset = lines[skip:], offset+skip
	}
	f.seq++
	f.live = append(f.live, chunk{file: file, offset: offset, data: append([]byte(nil), lines...), seq: f.seq})
	f.backlog += int64(len(lines))
	if f.cfg.Linger > 0 {
		f.lines += bytes.Count(lines, []byte("\n"))
	}
	f.wake.Broadcast()
}

// Finished records file's size: once the broker has all of it, the file
// is done.
func (f *Forwarder) Finished(file string, size int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.cursor[file]
	if m == nil {
		m = &mark{}
		f.cursor[file] = m
	}
	m.Size = size
	if !m.Done && m.Acked >= size {
		m.Done, f.dirty = true, true
	}
}

// Flush returns once the broker has acknowledged every line written
// before the call and every file Recover queued (the collector ships and
// deletes a file only then), or with ctx's error.
func (f *Forwarder) Flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.wake.Broadcast()
		f.mu.Unlock()
	})
	defer stop()
	f.mu.Lock()
	want := f.seq
	for f.acked < want || !f.recovered || f.replaying() {
		if err := ctx.Err(); err != nil {
			f.mu.Unlock()
			return fmt.Errorf("streams: %s has not acknowledged the events yet: %w", f.cfg.Name, err)
		}
		f.wake.Wait()
	}
	dirty := f.dirty
	f.mu.Unlock()
	if dirty {
		return f.save()
	}
	return nil
}

// replaying reports whether lines Recover queued are still queued
// (their chunks have seq 0).
func (f *Forwarder) replaying() bool {
	return len(f.live) > 0 && f.live[0].seq == 0
}

// Full reports whether the backlog is at its bound: the collector then
// refuses events.
func (f *Forwarder) Full() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.backlog >= f.cfg.Backlog
}

// Name is the stream's name (Config.Name).
func (f *Forwarder) Name() string { return f.cfg.Name }

// Up reports whether the broker took the last publish (true until one
// fails) and is not leaving the one in flight unacknowledged for longer
// than Config.Stalled.
func (f *Forwarder) Up() bool {
	since := f.since.Load()
	return f.up.Load() && (since == 0 || time.Duration(time.Now().UnixNano()-since) < f.cfg.Stalled)
}

// Recover queues what the broker lacks of the spool's files — those
// completed at this start (told by Written during collector.New), and the
// finished files the cursor does not have all of (a crash, or a stop
// while the broker was down) — merged in the order the events were
// received (their receivedAt), ahead of what is written from now on.
// Nothing is published before it has run: call it once, after
// collector.New. What it loads is what the broker had not acknowledged
// when the last run ended, which the backlog bound kept to about
// Config.Backlog bytes.
func (f *Forwarder) Recover() error {
	files, err := collector.FinishedFiles(f.cfg.Dir)
	if err != nil {
		return fmt.Errorf("streams: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var sources []chunk
	onDisk := map[string]bool{}
	for _, p := range files {
		name := filepath.Base(p)
		onDisk[name] = true
		if m := f.cursor[name]; f.known[name] || m != nil && m.Done {
			continue
		}
		data, err := collector.ReadFile(p)
		if err != nil {
			f.cfg.Log.Error("streams: an event file could not be read to send it; its events stay in the spool", "stream", f.cfg.Name, "file", p, "err", err)
			continue
		}
		m := f.cursor[name]
		if m == nil {
			m = &mark{}
			f.cursor[name] = m
		}
		m.Size = int64(len(data))
		if m.Acked >= m.Size {
			m.Done, f.dirty = true, true
			continue
		}
		sources = append(sources, chunk{file: name, offset: m.Acked, data: data[m.Acked:]})
		f.backlog += m.Size - m.Acked
		if f.cfg.Linger > 0 {
			f.lines += bytes.Count(data[m.Acked:], []byte("\n"))
		}
	}
	for name := range f.cursor { // files gone (shipped, deleted) need no mark
		if !onDisk[name] && !f.known[name] {
			delete(f.cursor, name)
			f.dirty = true
		}
	}
	if len(sources) > 0 {
		f.cfg.Log.Info("streams: events the broker does not have yet will be sent from the spool", "stream", f.cfg.Name, "files", len(sources))
	}
	f.live = merge(append(sources, f.live...))
	f.acked = f.seq // the chunks told before are now Recover's (seq 0)
	f.recovered = true
	f.wake.Broadcast()
	return nil
}

// merge merges the lines of sources — each the lines of one file, in
// order — by the time each event was received (eventline.Stamp), into
// chunks of consecutive lines of one source, with seq 0.
func merge(sources []chunk) []chunk {
	var out []chunk
	pos := make([]int, len(sources))
	last := -1
	for {
		best, bestAt := -1, []byte(nil)
		for i, c := range sources {
			if pos[i] >= len(c.data) {
				continue
			}
			at := eventline.Stamp(c.data[pos[i]:])
			if best < 0 || bytes.Compare(at, bestAt) < 0 {
				best, bestAt = i, at
			}
		}
		if best < 0 {
			return out
		}
		c := &sources[best]
		end := len(c.data)
		if nl := bytes.IndexByte(c.data[pos[best]:], '\n'); nl >= 0 {
			end = pos[best] + nl + 1
		}
		if best == last {
			out[len(out)-1].data = c.data[pos[best]-len(out[len(out)-1].data) : end]
		} else {
			out = append(out, chunk{file: c.file, offset: c.offset + int64(pos[best]), data: c.data[pos[best]:end]})
		}
		pos[best], last = end, best
	}
}

// next returns the next batch to publish from the head of the queue, and
// how far into the queue it reaches (where it ends in each chunk). It
// waits for Recover and for lines, and returns ok false once closing with
// nothing left.
func (f *Forwarder) next(msgs []Message, fields *eventline.Fields) (_ []Message, reach []int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		ready := f.recovered && len(f.live) > 0
		if !ready && f.closing {
			return msgs, nil, false
		}
		if ready && (f.closing || f.lines >= f.cfg.Batch || !time.Now().Before(f.until)) {
			break
		}
		if ready && f.timer == nil { // lingering (Config.Linger): wake at until
			f.timer = time.AfterFunc(time.Until(f.until), func() {
				f.mu.Lock()
				f.timer = nil
				f.wake.Broadcast()
				f.mu.Unlock()
			})
		}
		f.wake.Wait()
	}
	run := f.broker.RunBytes()
	for i := range f.live {
		c := &f.live[i]
		pos := c.sent
		for pos < len(c.data) && len(msgs) < f.cfg.Batch {
			start, n := pos, 0
			for pos < len(c.data) && (n == 0 || run > 0) {
				end := len(c.data)
				if nl := bytes.IndexByte(c.data[pos:], '\n'); nl >= 0 {
					end = pos + nl + 1
				}
				if n > 0 && end-start > run {
					break
				}
				pos, n = end, n+1
			}
			line := bytes.TrimSuffix(c.data[start:pos], []byte("\n"))
			if run == 0 {
				if len(line) > 0 {
					msgs = append(msgs, f.message(line, c.file, c.offset+int64(start), fields))
				}
				continue
			}
			first := line
			if nl := bytes.IndexByte(first, '\n'); nl >= 0 {
				first = first[:nl]
			}
			m := f.message(first, c.file, c.offset+int64(start), fields)
			m.Key, m.Value, m.Events = nil, c.data[start:pos], n
			m.ID = strconv.AppendInt(append(m.ID[:len(m.ID):len(m.ID)], '+'), int64(n), 10)
			msgs = append(msgs, m)
		}
		reach = append(reach, pos)
		if len(msgs) >= f.cfg.Batch {
			break
		}
	}
	return msgs, reach, true
}

// message makes the message of line, which starts at offset in file: its
// key and id from the line (an id made of the file and offset for a
// line without one: the same in every copy).
func (f *Forwarder) message(line []byte, file string, offset int64, fields *eventline.Fields) Message {
	m := Message{Value: line, Events: 1, File: file, Offset: offset}
	if eventline.Scan(line, fields) {
		for _, k := range f.order {
			if v := fields[k]; len(v) > 0 {
				m.Key = v
				break
			}
		}
		m.ID = fields[eventline.ID]
	}
	if len(m.ID) == 0 {
		m.ID = strconv.AppendInt([]byte(file+":"), offset, 10)
	}
	return m
}

// acknowledge records that the batch reaching reach (see next), of
// events events, is in the broker: the chunks it covers are dropped and
// the files' cursors move; the next batch waits until until (Linger).
func (f *Forwarder) acknowledge(reach []int, events int, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lines, f.until = max(f.lines-events, 0), until
	done := 0
	for i, pos := range reach {
		c := &f.live[i]
		f.backlog -= int64(pos - c.sent)
		c.sent = pos
		m := f.cursor[c.file]
		if m == nil {
			m = &mark{Size: -1}
			f.cursor[c.file] = m
		}
		m.Acked = max(m.Acked, c.offset+int64(pos))
		if m.Size >= 0 && m.Acked >= m.Size {
			m.Done = true
		}
		if pos >= len(c.data) {
			done = i + 1
			if c.seq > 0 {
				f.acked = c.seq
			}
		}
	}
	f.live = f.live[done:]
	if len(f.live) == 0 {
		f.live = nil // let the chunks' memory go
	}
	f.dirty = true
	f.wake.Broadcast()
}

// run publishes batches until Close; a failed publish is retried, with
// backoff, until the broker takes it.
func (f *Forwarder) run(ctx context.Context) {
	defer close(f.done)
	var msgs []Message
	var fields eventline.Fields
	saved := time.Now()
	for {
		batch, reach, ok := f.next(msgs[:0], &fields)
		if !ok {
			return
		}
		msgs = batch
		backoff := f.cfg.Retry
		began := time.Now()
		events := 0
		for _, m := range batch {
			events += m.Events
		}
		for {
			pctx, cancel := context.WithTimeout(ctx, f.cfg.PublishTimeout)
			f.since.Store(time.Now().UnixNano())
			err := f.broker.Publish(pctx, batch)
			f.since.Store(0)
			cancel()
			f.m.produced.Add(float64(events))
			if err == nil {
				f.m.acknowledged.Add(float64(events))
				if !f.up.Swap(true) {
					f.cfg.Log.Info("streams: the broker takes events again; sending the backlog", "stream", f.cfg.Name)
				}
				break
			}
			if ctx.Err() != nil {
				return // closed: what is not acknowledged stays in the files for the next start
			}
			f.m.retries.Inc()
			if f.up.Swap(false) { // once an outage: the first failure after a success
				f.cfg.Log.Warn("streams: publishing failed; events are kept and sent again", "stream", f.cfg.Name, "err", err)
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, 5*time.Second)
		}
		var until time.Time // the next publish waits for it unless a batch is full
		if f.cfg.Linger > 0 && len(batch) < f.cfg.Batch {
			until = began.Add(f.cfg.Linger)
		}
		clear(msgs) // drop the references into chunks
		f.acknowledge(reach, events, until)
		if time.Since(saved) >= 250*time.Millisecond {
			if err := f.save(); err != nil {
				f.cfg.Log.Warn("streams: cursor not saved; events may be sent again after a restart", "stream", f.cfg.Name, "err", err)
			}
			saved = time.Now()
		}
	}
}

// Close lets the Forwarder publish what it holds until ctx is done, then
// stops it (closing the broker, which ends a publish in flight), saves
// the cursor and closes the broker. What the broker has not acknowledged
// is sent from the files at the next start. Close the collector first.
func (f *Forwarder) Close(ctx context.Context) error {
	f.mu.Lock()
	f.closing = true
	f.wake.Broadcast()
	f.mu.Unlock()
	var berr error
	closed := false
	select {
	case <-f.done:
	case <-ctx.Done():
		f.stop()
		berr, closed = f.broker.Close(), true
		f.mu.Lock()
		f.wake.Broadcast()
		f.mu.Unlock()
		<-f.done
	}
	f.stop()
	if !closed {
		berr = f.broker.Close()
	}
	return errors.Join(f.save(), berr)
}

// ParseOptions reads a stream flag's value, name=value pairs separated
// by commas — brokers=a:9092,b:9092,topic=events — where a part without
// '=' continues the value before it (a list). It names the option that
// is not one of known, or is given twice.
func ParseOptions(flag, s string, known ...string) (map[string]string, error) {
	out := map[string]string{}
	last := ""
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			if last == "" {
				return nil, fmt.Errorf("%s: %q is not name=value", flag, part)
			}
			out[last] += "," + part
			continue
		}
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("%s: unknown option %q (want %s)", flag, k, strings.Join(known, ", "))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s: option %q given twice", flag, k)
		}
		out[k], last = v, k
	}
	return out, nil
}
