package web

import (
	"context"
	"sync/atomic"

	"github.com/maypok86/otter/v2"

	"marquee"
)

// AdCache is a bounded W-TinyLFU cache (otter) of whole ads by id, in
// front of the store for GET /api/v1/ad/{id}. It is kept exact by the
// changelog feed, which calls Invalidate for every change it applies: a
// cached ad is never older than the feed's position. During a store outage
// the ads it holds are still served.
type AdCache struct {
	store AdStore
	c     *otter.Cache[int64, marquee.Ad]
	// epoch moves before every invalidation; a load that saw it move may
	// hold a value read before the change and must not stay cached.
	epoch atomic.Uint64
}

// NewAdCache returns a cache of at most size ads over store.
func NewAdCache(store AdStore, size int) *AdCache {
	return &AdCache{store: store, c: otter.Must(&otter.Options[int64, marquee.Ad]{MaximumSize: size})}
}

// Get returns ad id from the cache, or from the store (caching it).
func (c *AdCache) Get(ctx context.Context, id int64) (marquee.Ad, error) {
	if a, ok := c.c.GetIfPresent(id); ok {
		return a, nil
	}
	e := c.epoch.Load()
	a, err := c.store.Ad(ctx, id)
	if err != nil {
		return a, err
	}
	c.c.Set(id, a)
	// Invalidate bumps epoch before it deletes. If it moved since the read,
	// the value may predate a change whose deletion ran before this Set:
	// drop it. If it moves after this check, that deletion comes later.
	if c.epoch.Load() != e {
		c.c.Invalidate(id)
	}
	return a, nil
}

// Invalidate drops the given ids; nil drops everything (after a reload).
func (c *AdCache) Invalidate(ids []int64) {
	c.epoch.Add(1)
	if ids == nil {
		c.c.InvalidateAll()
		return
	}
	for _, id := range ids {
		c.c.Invalidate(id)
	}
}
