// Package clicks counts redirects in memory and adds them to the store in
// batches, so the redirect path never writes to the database. Counts are
// sharded by link id (a code names a link only within its domain, and a
// code deleted and created again is another link), each shard a map under
// its own mutex; the owner calls
// Flush every interval and Close once more at shutdown.
//
// A link's click limit is judged by the count the store had when the link
// was loaded plus what this instance has counted since and not yet seen
// come back through the changelog: one instance never lets a link pass its
// limit. Several instances may let it pass by what the others counted in
// one flush interval. A flush adds a changelog entry for every limited
// link it touches (see sqltx.Store.AddClicks), so every instance reloads those
// counts.
package clicks

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"marquee"
)

// Store is where counts go.
type Store interface {
	AddClicks(ctx context.Context, counts []marquee.Clicks) error
}

// Syncer makes committed changes visible on this instance (the feed).
type Syncer interface {
	Sync(ctx context.Context) error
}

const shards = 64

// Counter counts redirects by link id. Take may be called from any
// goroutine; Flush and Close are called by the owner.
type Counter struct {
	store Store
	feed  Syncer
	log   *slog.Logger

	flushMu sync.Mutex // one flush at a time
	gen     uint64     // flushes settled (under flushMu)
	shards  [shards]shard

	flushed, failures prometheus.Counter
}

type shard struct {
	mu       sync.Mutex
	pending  map[int64]count // counted since the last flush began, by link id
	flushing map[int64]count // taken by the flush in progress; nil between flushes
	// stored is, for each limited link the last two flushes stored, a
	// count the store holds at least (see floor).
	stored map[int64]storedCount
	_      [64]byte // keep shards' mutexes on separate cache lines
}

// count is one link's counted redirects.
type count struct {
	code string // the link's code (the changelog names links by it)
	n    int64
	// limited: the link has a click limit; base is then the most clicks
	// a copy of it counted had from the store (Link.Clicks, or floor):
	// with n, what the store holds at least once a flush has added n.
	limited bool
	base    int64
}

// storedCount is at least what the store holds of a limited link's
// clicks after the flush of generation gen.
type storedCount struct {
	n   int64
	gen uint64
}

// New returns a counter that flushes into store; reg receives its
// metrics.
func New(store Store, feed Syncer, log *slog.Logger, reg prometheus.Registerer) *Counter {
	c := &Counter{store: store, feed: feed, log: log,
		flushed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "marquee_clicks_flushed_total",
			Help: "Redirects counted and added to the store.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "marquee_clicks_flush_errors_total",
			Help: "Flushes of click counts that failed (their counts are kept and retried).",
		}),
	}
	for i := range c.shards {
		c.shards[i].pending = map[int64]count{}
		c.shards[i].stored = map[int64]storedCount{}
	}
	if reg != nil {
		reg.MustRegister(c.flushed, c.failures, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "marquee_clicks_pending",
			Help: "Redirects counted and not yet in the store.",
		}, func() float64 { return float64(c.Pending()) }))
	}
	return c
}

// Take counts one redirect of l, unless l has reached its click limit
// (counting what this instance has not flushed yet): then it counts
// nothing and returns false.
func (c *Counter) Take(l *marquee.Link) bool {
	sh := c.shardOf(l.ID)
	sh.mu.Lock()
	p := sh.pending[l.ID]
	if l.MaxClicks > 0 && sh.floor(l)+p.n+sh.flushing[l.ID].n >= l.MaxClicks {
		sh.mu.Unlock()
		return false
	}
	if l.MaxClicks > 0 {
		p.limited, p.base = true, max(p.base, sh.floor(l))
	}
	sh.pending[l.ID] = count{code: l.Code, n: p.n + 1, limited: p.limited, base: p.base}
	sh.mu.Unlock()
	return true
}

// floor is the clicks of limited link l the store holds at least: its
// count as loaded, or more when a flush of this instance has stored
// clicks since — a redirect may hold a copy of the link loaded before
// the feed applied the flush, and the flush no longer counts them once it
// has settled (TestStaleLinkAfterFlush). sh.mu is held.
func (sh *shard) floor(l *marquee.Link) int64 {
	return max(l.Clicks, sh.stored[l.ID].n)
}

// Reached reports whether l is at its click limit, counting what this
// instance has not flushed yet; it counts nothing.
func (c *Counter) Reached(l *marquee.Link) bool {
	if l.MaxClicks == 0 {
		return false
	}
	sh := c.shardOf(l.ID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.floor(l)+sh.pending[l.ID].n+sh.flushing[l.ID].n >= l.MaxClicks
}

// shardOf is the shard that counts link id (ids are assigned in order,
// so consecutive links fall in different shards).
func (c *Counter) shardOf(id int64) *shard {
	return &c.shards[uint64(id)%shards]
}

// Pending is how many redirects are counted and not yet in the store.
func (c *Counter) Pending() int64 {
	var n int64
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for _, v := range sh.pending {
			n += v.n
		}
		for _, v := range sh.flushing {
			n += v.n
		}
		sh.mu.Unlock()
	}
	return n
}

// flushChunk bounds the links one transaction of a flush updates: a flush
// under Zipf traffic touches tens of thousands of links, and one
// transaction for all of them would hold the store's write lock (SQLite:
// the whole file) for the best part of a second.
const flushChunk = 2000

// Flush adds every count to the store, a chunk of links a transaction in
// code order, then waits until this instance's feed has applied them (so
// limited links are reloaded with their new counts) before it forgets
// them. Counts not stored (an error) are kept for the next flush.
func (c *Counter) Flush(ctx context.Context) error {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	var all []marquee.Clicks
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.flushing, sh.pending = sh.pending, map[int64]count{}
		for id, p := range sh.flushing {
			all = append(all, marquee.Clicks{LinkID: id, Code: p.code, N: p.n})
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(all, func(a, b marquee.Clicks) int { return cmp.Compare(a.LinkID, b.LinkID) })
	stored := 0 // all[:stored] are in the store
	var err error
	for stored < len(all) {
		chunk := all[stored:min(stored+flushChunk, len(all))]
		var n int64
		for _, c := range chunk {
			n += c.N
		}
		if err = c.store.AddClicks(ctx, chunk); err != nil {
			c.failures.Inc()
			break
		}
		stored += len(chunk)
		c.flushed.Add(float64(n))
	}
	if stored > 0 {
		// The counts are in the store. Until the feed has applied their
		// changelog entries, a cached limited link still holds the old
		// count: keep counting the flushed clicks against it until then.
		// (A load in between counts them twice: a link near its limit may
		// refuse early for that moment, never pass it.) A copy loaded
		// before and used after is held to the store's count by floor.
		if serr := c.feed.Sync(ctx); serr != nil {
			c.log.Debug("click flush: feed not synced", "err", serr)
		}
	}
	unstored := map[int64]bool{}
	for _, c := range all[stored:] {
		unstored[c.LinkID] = true
	}
	c.settle(unstored)
	return err
}

// settle ends a flush: the taken counts of unstored links go back to
// pending; of the stored, a limited link's new total is kept (floor) for
// this flush and the next, and the counts are dropped. flushMu is held.
func (c *Counter) settle(unstored map[int64]bool) {
	c.gen++
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for id, f := range sh.flushing {
			switch {
			case unstored[id]:
				p := sh.pending[id]
				sh.pending[id] = count{code: f.code, n: p.n + f.n, limited: p.limited || f.limited, base: max(p.base, f.base)}
			case f.limited: // what the store held before this flush, at least, and what it added
				sh.stored[id] = storedCount{n: max(f.base, sh.stored[id].n) + f.n, gen: c.gen}
			}
		}
		for id, s := range sh.stored {
			if s.gen+1 < c.gen { // two flushes ago: every copy of the link since is reloaded
				delete(sh.stored, id)
			}
		}
		sh.flushing = nil
		sh.mu.Unlock()
	}
}

// Close flushes what is left (at shutdown, after the last redirect).
func (c *Counter) Close(ctx context.Context) error {
	return c.Flush(ctx)
}
