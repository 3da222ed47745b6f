// Package index answers GET /api/v1/ad from memory. An Index publishes an
// immutable Snapshot through an atomic pointer: readers take one load and
// never lock; writers apply changes to a private master copy and publish a
// new snapshot patched from the last one, coalescing concurrent writes into
// one patch.
package index

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marquee"
)

// Index holds the ads that are active or scheduled. It is safe for
// concurrent use: Snapshot never blocks; Put, Delete, Load and Refresh
// serialise among themselves.
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
	// arena holds the list item of every entry, and of entries since
	// replaced or dropped (garbage bytes of them) until it is compacted.
	// It is append-only: published snapshots read its prefix.
	arena   []byte
	garbage int

	builds       atomic.Uint64
	buildNano    atomic.Int64
	arenaSize    atomic.Int64
	arenaGarbage atomic.Int64
}

type change struct {
	put *entry // nil: delete
	id  int64
}

// New returns an empty index that reads the time from now.
func New(now func() time.Time) *Index {
	ix := &Index{now: now, byID: map[int64]*entry{}}
	ix.snap.Store(build(nil, nil, now()))
	return ix
}

// Snapshot returns the current snapshot. It never blocks.
func (ix *Index) Snapshot() *Snapshot { return ix.snap.Load() }

// Builds returns how many snapshots have been built, and how long the last
// build took.
func (ix *Index) Builds() (uint64, time.Duration) {
	return ix.builds.Load(), time.Duration(ix.buildNano.Load())
}

// ArenaBytes returns the size of the arena of list items, and how much of it
// is garbage awaiting compaction, as of the last published snapshot.
func (ix *Index) ArenaBytes() (size, garbage int) {
	return int(ix.arenaSize.Load()), int(ix.arenaGarbage.Load())
}

// Put adds or replaces ads. When Put returns, the published snapshot holds
// them (read-your-writes).
func (ix *Index) Put(ads ...*marquee.Ad) {
	chs := make([]change, len(ads))
	for i, a := range ads {
		chs[i] = change{put: newEntry(a), id: a.ID}
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

	for _, ch := range batch {
		if ch.put != nil {
			ix.place(ch.put)
		}
	}
	if len(batch) > len(ix.sorted)/8+64 { // cheaper to build afresh
		for _, ch := range batch {
			ix.setMaster(ch)
		}
		ix.resort()
		if !ix.compactIfWasteful() {
			ix.rebuild()
		}
	} else {
		start := time.Now()
		s := ix.patchBatch(batch, ix.now())
		if !ix.compactIfWasteful() {
			ix.publish(s, start)
		}
	}
	ix.applied = last
}

// place appends e's item and a comma to the arena. The caller holds bmu.
func (ix *Index) place(e *entry) {
	off := len(ix.arena)
	ix.arena = append(append(ix.arena, e.item...), ',')
	e.itemOff, e.itemEnd, e.item = uint32(off), uint32(len(ix.arena)), nil
}

// compactIfWasteful copies the live items to a fresh arena and rebuilds the
// snapshot when more than half the arena is garbage (and over 1 MiB),
// reporting whether it did. The caller holds bmu.
func (ix *Index) compactIfWasteful() bool {
	if ix.garbage <= len(ix.arena)/2 || ix.garbage < 1<<20 {
		return false
	}
	arena := make([]byte, 0, len(ix.arena)-ix.garbage)
	for _, e := range ix.sorted {
		off := len(arena)
		arena = append(arena, ix.arena[e.itemOff:e.itemEnd]...)
		e.itemOff, e.itemEnd = uint32(off), uint32(len(arena))
	}
	ix.arena, ix.garbage = arena, 0
	ix.rebuild()
	return true
}

// patchBatch applies a small batch to the master copy and returns the
// current snapshot patched with it: every ad the batch touches leaves at its
// old position, and comes back at its new one unless its last change is a
// delete.
func (ix *Index) patchBatch(batch []change, now time.Time) *Snapshot {
	old := ix.snap.Load()
	final := map[int64]*entry{}
	var drop []int
	for _, ch := range batch {
		if _, seen := final[ch.id]; !seen {
			if e, ok := ix.byID[ch.id]; ok {
				if pos, found := old.position(e); found {
					drop = append(drop, pos)
				}
			}
		}
		final[ch.id] = ch.put
		ix.patchSorted(ch)
	}
	var add []*entry
	for _, e := range final {
		if e != nil && e.endAt > now.UnixNano() {
			add = append(add, e)
		}
	}
	slices.SortFunc(add, cmpEntries)
	slices.Sort(drop)
	ix.dropExpired(now)
	return patch(old, ix.arena, now, drop, add)
}

// setMaster applies ch to byID only; the caller re-sorts.
func (ix *Index) setMaster(ch change) {
	if old, ok := ix.byID[ch.id]; ok {
		ix.garbage += old.itemSize()
	}
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
		ix.garbage += ix.sorted[expired].itemSize()
		expired++
	}
	ix.sorted = slices.Delete(ix.sorted, 0, expired)
}

// publish swaps in s, built from work started at start. The caller holds
// bmu.
func (ix *Index) publish(s *Snapshot, start time.Time) {
	ix.snap.Store(s)
	ix.arenaSize.Store(int64(len(ix.arena)))
	ix.arenaGarbage.Store(int64(ix.garbage))
	ix.builds.Add(1)
	ix.buildNano.Store(int64(time.Since(start)))
}

// rebuild builds a snapshot of the whole master copy, without expired ads.
// The caller holds bmu.
func (ix *Index) rebuild() {
	start := time.Now()
	now := ix.now()
	ix.dropExpired(now)
	// The snapshot gets its own copy: the master is patched in place.
	ix.publish(build(slices.Clone(ix.sorted), ix.arena, now), start)
}

// Load replaces the whole content of the index with the ads that fill
// passes to add; fill may call add from several goroutines at once. If fill
// fails, the index is unchanged.
func (ix *Index) Load(fill func(add func(*marquee.Ad)) error) error {
	byID := map[int64]*entry{}
	var mu sync.Mutex
	err := fill(func(a *marquee.Ad) {
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
	size := 0
	for _, e := range ix.sorted {
		size += len(e.item) + 1
	}
	ix.arena, ix.garbage = make([]byte, 0, size), 0
	for _, e := range ix.sorted {
		ix.place(e)
	}
	ix.rebuild()
	return nil
}

// Refresh rebuilds the snapshot when that makes queries cheaper: when a
// scheduled ad has started (rows that started after the build are checked
// one by one), or when ads have expired and the snapshot is older than
// maxAge (expired rows cost only memory). Queries are exact either way.
func (ix *Index) Refresh(maxAge time.Duration) {
	ix.bmu.Lock()
	defer ix.bmu.Unlock()
	s := ix.snap.Load()
	now := ix.now()
	started := s.nextStart <= now.UnixNano()
	expired := s.firstLive(now.UnixNano()) > 0 && now.Sub(s.built) >= maxAge
	if started || expired {
		start := time.Now()
		ix.dropExpired(now)
		if !ix.compactIfWasteful() {
			ix.publish(patch(s, ix.arena, now, nil, nil), start)
		}
	}
}
