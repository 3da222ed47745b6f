// Package index answers GET /api/v1/ad from memory. An Index publishes an
// immutable Snapshot through an atomic pointer: readers take one load and
// never lock; writers apply changes to a private master copy and publish a
// new snapshot patched from the last one, coalescing concurrent writes into
// one patch.
package index

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marquee"
)

// Index holds the ads that are active or scheduled. It is safe for
// concurrent use: Snapshot never blocks; Put, Delete, Load, Restore and
// Refresh serialise among themselves.
type Index struct {
	now  func() time.Time
	snap atomic.Pointer[Snapshot]

	pmu     sync.Mutex // guards pending and queued
	pending []change
	queued  uint64 // tickets handed out

	bmu     sync.Mutex // guards everything below; held while building
	applied uint64     // highest ticket whose change is in the published snapshot
	byID    map[int64]*entry
	sorted  []*entry // by (endAt, id)

	builds    atomic.Uint64
	buildNano atomic.Int64
}

type change struct {
	put *entry // nil: delete
	id  int64
}

// New returns an empty index that reads the time from now.
func New(now func() time.Time) *Index {
	ix := &Index{now: now, byID: map[int64]*entry{}}
	ix.snap.Store(build(nil, now()))
	return ix
}

// Snapshot returns the current snapshot. It never blocks.
func (ix *Index) Snapshot() *Snapshot { return ix.snap.Load() }

// Builds returns how many snapshots have been built, and how long the last
// build took.
func (ix *Index) Builds() (uint64, time.Duration) {
	return ix.builds.Load(), time.Duration(ix.buildNano.Load())
}

// Put adds or replaces ads. When Put returns, the published snapshot holds
// them (read-your-writes).
func (ix *Index) Put(ads ...*marquee.Ad) {
	chs := make([]change, len(ads))
	for i, a := range ads {
		chs[i] = change{id: a.ID}
		if a.Serves() { // an ad paused, waiting for approval, or rejected, is listed nowhere
			chs[i].put = newEntry(a)
		}
	}
	ix.apply(chs)
}

// Delete removes ads by id; unknown ids are ignored. When Delete returns,
// the published snapshot no longer holds them.
func (ix *Index) Delete(ids ...int64) {
	chs := make([]change, len(ids))
	for i, id := range ids {
		chs[i] = change{id: id}
	}
	ix.apply(chs)
}

// apply queues chs and returns once a snapshot holding them is published.
// Changes queued while a build runs are applied together by the next one,
// in the order they were queued.
func (ix *Index) apply(chs []change) {
	ix.pmu.Lock()
	ix.pending = append(ix.pending, chs...)
	ix.queued++
	ticket := ix.queued
	ix.pmu.Unlock()

	ix.bmu.Lock()
	defer ix.bmu.Unlock()
	if ix.applied >= ticket {
		return // a build that ran while we waited took our change
	}
	ix.pmu.Lock()
	batch, last := ix.pending, ix.queued
	ix.pending = nil
	ix.pmu.Unlock()

	start, now := time.Now(), ix.now()
	if len(batch) > len(ix.sorted)/8+64 { // cheaper to build afresh
		for _, ch := range batch {
			ix.setMaster(ch)
		}
		ix.resort()
		ix.dropExpired(now)
		ix.publish(build(ix.sorted, now), start)
	} else {
		ix.publish(ix.patchBatch(batch, now), start)
	}
	ix.applied = last
}

// patchBatch applies a small batch to the master copy and returns the
// current snapshot patched with it: the chunks every changed ad leaves and
// enters are cut again.
func (ix *Index) patchBatch(batch []change, now time.Time) *Snapshot {
	old := ix.snap.Load()
	var touched []int
	for _, ch := range batch {
		if e, ok := ix.byID[ch.id]; ok {
			touched = append(touched, old.chunkOf(e.endAt, e.id))
		}
		if e := ch.put; e != nil {
			touched = append(touched, old.chunkOf(e.endAt, e.id))
		}
		ix.patchSorted(ch)
	}
	slices.Sort(touched)
	ix.dropExpired(now)
	return patch(old, ix.sorted, now, slices.Compact(touched))
}

// setMaster applies ch to byID only; the caller re-sorts.
func (ix *Index) setMaster(ch change) {
	if ch.put == nil {
		delete(ix.byID, ch.id)
	} else {
		ix.byID[ch.id] = ch.put
	}
}

// patchSorted applies ch to byID and to sorted in place.
func (ix *Index) patchSorted(ch change) {
	if old, ok := ix.byID[ch.id]; ok {
		if i, found := slices.BinarySearchFunc(ix.sorted, old, cmpEntries); found {
			ix.sorted = slices.Delete(ix.sorted, i, i+1)
		}
	}
	ix.setMaster(ch)
	if ch.put != nil {
		i, _ := slices.BinarySearchFunc(ix.sorted, ch.put, cmpEntries)
		ix.sorted = slices.Insert(ix.sorted, i, ch.put)
	}
}

func (ix *Index) resort() {
	ix.sorted = ix.sorted[:0]
	for _, e := range ix.byID {
		ix.sorted = append(ix.sorted, e)
	}
	slices.SortFunc(ix.sorted, cmpEntries)
}

// dropExpired removes the ads that have ended by now from the master copy.
// The caller holds bmu.
func (ix *Index) dropExpired(now time.Time) {
	expired := 0
	for expired < len(ix.sorted) && ix.sorted[expired].endAt <= now.UnixNano() {
		delete(ix.byID, ix.sorted[expired].id)
		expired++
	}
	ix.sorted = slices.Delete(ix.sorted, 0, expired)
}

// publish swaps in s, built from work started at start. The caller holds
// bmu.
func (ix *Index) publish(s *Snapshot, start time.Time) {
	ix.snap.Store(s)
	ix.builds.Add(1)
	ix.buildNano.Store(int64(time.Since(start)))
}

// Load replaces the whole content of the index with the ads that fill
// passes to add; fill may call add from several goroutines at once. If fill
// fails, the index is unchanged.
func (ix *Index) Load(fill func(add func(*marquee.Ad)) error) error {
	byID := map[int64]*entry{}
	var mu sync.Mutex
	err := fill(func(a *marquee.Ad) {
		if !a.Serves() {
			return // paused, waiting for approval, or rejected: listed nowhere
		}
		e := newEntry(a)
		mu.Lock()
		byID[a.ID] = e
		mu.Unlock()
	})
	if err != nil {
		return err
	}
	ix.bmu.Lock()
	defer ix.bmu.Unlock()
	ix.byID = byID
	ix.resort()
	ix.rebuild()
	return nil
}

// rebuild builds a snapshot of the whole master copy, without expired ads.
// The caller holds bmu.
func (ix *Index) rebuild() {
	start, now := time.Now(), ix.now()
	ix.dropExpired(now)
	ix.publish(build(ix.sorted, now), start)
}

// Refresh rebuilds the chunks where that makes queries cheaper: those where
// a scheduled ad has started (rows that started after a chunk's build are
// checked one by one), and, when the snapshot is older than maxAge, the
// chunk holding both ended and live ads; chunks whose ads have all ended
// are dropped. Queries are exact either way: ended rows cost only memory.
func (ix *Index) Refresh(maxAge time.Duration) {
	ix.bmu.Lock()
	defer ix.bmu.Unlock()
	s := ix.snap.Load()
	now := ix.now()
	nowNs := now.UnixNano()
	var touched []int
	first := s.firstLiveChunk(nowNs)
	old := now.Sub(s.built) >= maxAge
	if old && first < len(s.chunks) && s.chunks[first].firstLive(nowNs) > 0 {
		touched = append(touched, first)
	}
	if s.nextStart <= nowNs {
		for i, c := range s.chunks {
			if c.nextStart <= nowNs {
				touched = append(touched, i)
			}
		}
	}
	if len(touched) > 0 || old && first > 0 {
		start := time.Now()
		slices.Sort(touched)
		ix.dropExpired(now)
		ix.publish(patch(s, ix.sorted, now, slices.Compact(touched)), start)
	}
}

// Apply keeps the index in step with a batch of the changelog (it is a
// marquee.Applier): the ads it put and deleted, or, on a reload, every
// live ad.
func (ix *Index) Apply(_ context.Context, b *marquee.Batch) error {
	if b.Reload {
		return ix.Load(func(add func(*marquee.Ad)) error {
			return b.EachLiveAd(func(a *marquee.Ad) error { add(a); return nil })
		})
	}
	if len(b.Put) > 0 {
		ix.Put(b.Put...)
	}
	if len(b.Deleted) > 0 {
		ix.Delete(b.Deleted...)
	}
	return nil
}
