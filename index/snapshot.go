package index

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Query is a compiled GET /api/v1/ad request. A zero dimension field puts no
// filter on that dimension.
type Query struct {
	Offset   int // ≥ 0
	Limit    int // ≥ 1
	Age      int // 1..100
	Gender   int // GenderM, GenderF
	Country  int // marquee.CountrySlot + 1
	Platform int // Platform*
}

// Snapshot is an immutable view of every ad that was active or scheduled
// when it was built: a list of chunks in (endAt, id) order. It is never
// mutated after it is built, so any number of goroutines may query it
// without locking. Snapshots share the chunks a write did not change.
type Snapshot struct {
	built  time.Time
	chunks []*chunk
	ads    int
	bytes  int
	// nextStart is the earliest nextStart of the chunks.
	nextStart int64
}

// Len returns the number of ads in the snapshot (active and scheduled).
func (s *Snapshot) Len() int { return s.ads }

// Built returns when the snapshot was built.
func (s *Snapshot) Built() time.Time { return s.built }

// Bytes returns the memory the snapshot's chunks hold, roughly; snapshots
// share the chunks a write did not touch.
func (s *Snapshot) Bytes() int { return s.bytes }

// newSnapshot returns the snapshot of chunks, built at now.
func newSnapshot(now time.Time, chunks []*chunk) *Snapshot {
	s := &Snapshot{built: now, chunks: chunks, nextStart: math.MaxInt64}
	for _, c := range chunks {
		s.ads += len(c.ids)
		s.bytes += c.bytes
		s.nextStart = min(s.nextStart, c.nextStart)
	}
	return s
}

// build makes a snapshot of entries, which must be sorted by (endAt, id),
// cut into chunks of chunkAds ads; the chunks are built in parallel.
func build(entries []*entry, now time.Time) *Snapshot {
	chunks := make([]*chunk, (len(entries)+chunkAds-1)/chunkAds)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range min(runtime.GOMAXPROCS(0), len(chunks)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(chunks); i = int(next.Add(1) - 1) {
				chunks[i] = buildChunk(entries[i*chunkAds:min(len(entries), (i+1)*chunkAds)], now.UnixNano())
			}
		})
	}
	wg.Wait()
	return newSnapshot(now, chunks)
}

// firstLiveChunk returns the first chunk with an ad whose endAt > now.
func (s *Snapshot) firstLiveChunk(now int64) int {
	lo, hi := 0, len(s.chunks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.chunks[m].lastEnd() > now {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// each calls visit with the ads that match q and are active at now
// (startAt < now < endAt, unix nanoseconds), in (endAt, id) order, after
// skipping q.Offset of them, until q.Limit have been visited. It costs
// O(offset/64 + limit) in the common case and allocates nothing.
func (s *Snapshot) each(q *Query, now int64, visit func(c *chunk, ad int32)) {
	skip, left := q.Offset, q.Limit
	if left <= 0 {
		return
	}
	ci := s.firstLiveChunk(now)
	for i, c := range s.chunks[ci:] {
		p := 0
		if i == 0 {
			p = c.firstLive(now) // an ad boundary: an ad's rows share its endAt
		}
		if skip, left = c.each(q, now, p, skip, left, visit); left == 0 {
			return
		}
	}
}

// AppendPage appends the items of the page q selects at instant now to dst,
// as the comma-separated JSON objects that go between the brackets of
// {"items":[…]}, and returns the extended slice. It allocates nothing when
// dst has room.
func (s *Snapshot) AppendPage(dst []byte, q *Query, now time.Time) []byte {
	start := len(dst)
	s.each(q, now.UnixNano(), func(c *chunk, ad int32) {
		dst = append(dst, c.items[c.itemOff[ad]:c.itemOff[ad+1]]...) // the item and its comma
	})
	if len(dst) > start {
		dst = dst[:len(dst)-1] // the last comma
	}
	return dst
}

// AppendIDs appends the ids of the page q selects at instant now to dst.
func (s *Snapshot) AppendIDs(dst []int64, q *Query, now time.Time) []int64 {
	s.each(q, now.UnixNano(), func(c *chunk, ad int32) { dst = append(dst, c.ids[ad]) })
	return dst
}
