package web

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"marquee"
	"marquee/cache"
)

// NewLinkCache returns the cache of links by code that GET /r/{code}
// reads, loading what a redirect needs from store (see bounded).
func NewLinkCache(store LinkStore, capacity cache.Capacity, reg prometheus.Registerer) *cache.Cache[string, marquee.Link] {
	return cache.New(cache.Config[string, marquee.Link]{
		Name: "link", Capacity: capacity, Load: bounded(store.LinkTarget),
		// Strings, plus the struct (~150 bytes) and otter's node (~100).
		Weigh: func(code string, l marquee.Link) uint32 { return uint32(250 + 2*len(code) + len(l.URL)) },
	}, reg)
}

// NewAdCache returns the cache that GET /api/v1/ad/{id} reads: each ad's
// JSON body, rendered once when it is loaded from store (see bounded);
// encoding/json per request was most of the route's cost. The route is
// public: an ad that is not marquee.Ad.Public is not found, and no body
// holds its review (who approved it, by email).
func NewAdCache(store AdStore, capacity cache.Capacity, reg prometheus.Registerer) *cache.Cache[int64, []byte] {
	return cache.New(cache.Config[int64, []byte]{
		Name: "ad", Capacity: capacity,
		Load: bounded(func(ctx context.Context, id int64) ([]byte, error) {
			a, err := store.Ad(ctx, id)
			if err != nil {
				return nil, err
			}
			if !a.Public() {
				return nil, marquee.NoAd(id)
			}
			a.Review = nil
			return renderJSON(a), nil
		}),
		// The body, plus the slice header and otter's node.
		Weigh: func(_ int64, body []byte) uint32 { return uint32(120 + len(body)) },
	}, reg)
}

// bounded gives every call of load a context that ends after storeTimeout:
// a cache's loads, which the handlers start with no deadline of their own.
func bounded[K, V any](load func(context.Context, K) (V, error)) func(context.Context, K) (V, error) {
	return func(ctx context.Context, k K) (V, error) {
		ctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		return load(ctx, k)
	}
}

// AdCacheView keeps the ad cache in step with the changelog: the ads a
// batch names are dropped (the next request loads them), everything on a
// reload.
func AdCacheView(c *cache.Cache[int64, []byte]) marquee.Applier {
	return marquee.ApplyFunc(func(_ context.Context, b *marquee.Batch) error {
		switch {
		case b.Reload:
			c.InvalidateAll()
		case len(b.Ads) > 0:
			c.Invalidate(b.Ads...)
		}
		return nil
	})
}

// LinkCacheView keeps the link cache in step with the changelog: the
// links a batch names are dropped (on every domain they may be on),
// everything on a reload or an import.
func LinkCacheView(c *cache.Cache[string, marquee.Link], domains *LinkDomains) marquee.Applier {
	return marquee.ApplyFunc(func(_ context.Context, b *marquee.Batch) error {
		switch {
		case b.Reload || b.AllLinks:
			c.InvalidateAll()
		case len(b.Links) > 0:
			c.Invalidate(domains.Keys(b.Links)...)
		}
		return nil
	})
}
