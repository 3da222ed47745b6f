// Package cache is Marquee's one bounded cache of entities by key, in
// front of the store, for look-ups over a whole catalog (links by code,
// ads by id): otter's adaptive W-TinyLFU, bounded in entries or bytes.
// Concurrent misses on one key collapse into one load; a key the store
// does not have is cached as a miss, so a flood of unknown keys does not
// reach the store; the changelog feed invalidates every key it sees
// change, and a load that an invalidation overtakes is discarded and
// redone (otter's Get), so the cache never holds a value older than the
// feed's position.
package cache

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/maypok86/otter/v2/stats"
	"github.com/prometheus/client_golang/prometheus"

	"marquee"
)

// Capacity bounds a cache: Entries, or, when Bytes is set, the estimated
// bytes of its entries (see Config.Weigh).
type Capacity struct {
	Entries int
	Bytes   uint64
}

func (c Capacity) String() string {
	if c.Bytes > 0 {
		return strconv.FormatUint(c.Bytes, 10) + "B"
	}
	return strconv.Itoa(c.Entries)
}

// ParseCapacity reads a capacity flag: a number of entries ("100000") or
// of bytes with a unit ("64MiB", "512KB", "1GiB", "4096B").
func ParseCapacity(s string) (Capacity, error) {
	units := []struct {
		suffix string
		mult   uint64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
			if err != nil || n == 0 {
				return Capacity{}, fmt.Errorf("capacity %q: want a positive number of bytes before %s", s, u.suffix)
			}
			return Capacity{Bytes: n * u.mult}, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return Capacity{}, fmt.Errorf("capacity %q: want a positive number of entries, or bytes with a unit (64MiB)", s)
	}
	return Capacity{Entries: n}, nil
}

// Config describes a cache.
type Config[K comparable, V any] struct {
	// Name labels the cache's metrics ("link", "ad").
	Name     string
	Capacity Capacity
	// Load reads a key from the store; an error of kind
	// marquee.KindNotFound means there is no such key: it is cached as a
	// miss, and Get returns it for the key until the key is invalidated.
	// Other errors are returned and not cached.
	Load func(ctx context.Context, key K) (V, error)
	// Weigh estimates an entry's bytes, for a capacity in bytes.
	Weigh func(key K, v V) uint32
}

// entry is a cached answer: a value, or the store's word that there is
// none (missing, the load's KindNotFound error).
type entry[V any] struct {
	v       V
	missing error
}

// Cache is a bounded cache of V by K. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	c      *otter.Cache[K, entry[V]]
	stats  *stats.Counter
	loader otter.Loader[K, entry[V]]
	// notFound counts answers of "no such key"; notFoundLoads those that
	// came from the store. The difference are negative hits.
	notFound, notFoundLoads atomic.Uint64
	// loadTime is the latency distribution of loads from the store.
	loadTime prometheus.Histogram
}

// New returns an empty cache; reg (if not nil) receives its metrics.
func New[K comparable, V any](cfg Config[K, V], reg prometheus.Registerer) *Cache[K, V] {
	c := &Cache[K, V]{stats: stats.NewCounter(), loadTime: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "marquee_cache_load_duration_seconds",
		Help:        "Latency of loads from the store (misses), whatever their result.",
		ConstLabels: prometheus.Labels{"cache": cfg.Name},
		Buckets:     []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5},
	})}
	opts := &otter.Options[K, entry[V]]{StatsRecorder: c.stats}
	if cfg.Capacity.Bytes > 0 {
		const missBytes = 128 // a cached miss: key, node, the store's error and its message
		opts.MaximumWeight = cfg.Capacity.Bytes
		opts.Weigher = func(k K, e entry[V]) uint32 {
			if e.missing != nil {
				return missBytes
			}
			return cfg.Weigh(k, e.v)
		}
	} else {
		opts.MaximumSize = max(cfg.Capacity.Entries, 1)
	}
	c.c = otter.Must(opts)
	c.loader = otter.LoaderFunc[K, entry[V]](func(ctx context.Context, k K) (entry[V], error) {
		start := time.Now()
		v, err := cfg.Load(ctx, k)
		c.loadTime.Observe(time.Since(start).Seconds())
		switch {
		case marquee.KindOf(err) == marquee.KindNotFound:
			c.notFoundLoads.Add(1)
			return entry[V]{missing: err}, nil
		case err != nil:
			return entry[V]{}, err
		}
		return entry[V]{v: v}, nil
	})
	if reg != nil {
		reg.MustRegister(newCollector(c, cfg.Name), c.loadTime)
	}
	return c
}

// Get returns the value of key from the cache, or loads it from the store
// (one load for all concurrent callers) and caches it. A key the store
// does not have is the store's KindNotFound error, from the cache after
// the first time.
func (c *Cache[K, V]) Get(ctx context.Context, key K) (V, error) {
	e, err := c.c.Get(ctx, key, c.loader)
	if err != nil {
		return e.v, err
	}
	if e.missing != nil {
		c.notFound.Add(1)
		return e.v, e.missing
	}
	return e.v, nil
}

// Invalidate drops keys: the next Get loads them again, and a load in
// flight is discarded.
func (c *Cache[K, V]) Invalidate(keys ...K) {
	for _, k := range keys {
		c.c.Invalidate(k)
	}
}

// InvalidateAll drops everything (after a reload, when anything may have
// changed).
func (c *Cache[K, V]) InvalidateAll() { c.c.InvalidateAll() }

// Stats are a cache's counts since it was made.
type Stats struct {
	Hits, Misses, Evictions uint64
	NegativeHits            uint64 // hits that answered "no such key"
	Loads, LoadFailures     uint64
	LoadSeconds             float64
	Entries                 int
	Weight                  uint64 // estimated bytes, for a cache bounded in bytes
}

// HitRatio is Hits / (Hits + Misses), 0 before any request.
func (s Stats) HitRatio() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// Stats returns the cache's counts, after applying pending evictions
// (otter applies them in batches).
func (c *Cache[K, V]) Stats() Stats {
	c.c.CleanUp()
	s := c.stats.Snapshot()
	out := Stats{Hits: s.Hits, Misses: s.Misses, Evictions: s.Evictions,
		Loads: s.LoadSuccesses, LoadFailures: s.LoadFailures, LoadSeconds: s.TotalLoadTime.Seconds(),
		Entries: c.c.EstimatedSize()}
	if c.c.IsWeighted() {
		out.Weight = c.c.WeightedSize()
	}
	if nf, loads := c.notFound.Load(), c.notFoundLoads.Load(); nf > loads {
		out.NegativeHits = nf - loads
	}
	return out
}

// collector exports a cache's Stats to Prometheus at scrape time, under
// the label cache="<name>".
type collector[K comparable, V any] struct {
	c                                                                         *Cache[K, V]
	hits, misses, negative, ratio, evictions, loads, loadSecs, entries, bytes *prometheus.Desc
}

func newCollector[K comparable, V any](c *Cache[K, V], name string) *collector[K, V] {
	desc := func(metric, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("marquee_cache_"+metric, help, labels, prometheus.Labels{"cache": name})
	}
	return &collector[K, V]{c: c,
		hits:      desc("hits_total", "Look-ups answered from the cache, misses cached as such included."),
		misses:    desc("misses_total", "Look-ups that went to the store."),
		negative:  desc("negative_hits_total", "Look-ups answered \"no such key\" from the cache, without the store."),
		ratio:     desc("hit_ratio", "Hits / (hits + misses) since start."),
		evictions: desc("evictions_total", "Entries evicted to stay within capacity."),
		loads:     desc("loads_total", "Loads from the store, by result (ok, error).", "result"),
		loadSecs:  desc("load_seconds_total", "Time spent loading from the store; divided by loads_total, the mean load latency."),
		entries:   desc("entries", "Entries held, misses included."),
		bytes:     desc("weight_bytes", "Estimated bytes held (caches bounded in bytes)."),
	}
}

func (col *collector[K, V]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{col.hits, col.misses, col.negative, col.ratio, col.evictions, col.loads, col.loadSecs, col.entries, col.bytes} {
		ch <- d
	}
}

func (col *collector[K, V]) Collect(ch chan<- prometheus.Metric) {
	s := col.c.Stats()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter(col.hits, float64(s.Hits))
	counter(col.misses, float64(s.Misses))
	counter(col.negative, float64(s.NegativeHits))
	gauge(col.ratio, s.HitRatio())
	counter(col.evictions, float64(s.Evictions))
	counter(col.loads, float64(s.Loads), "ok")
	counter(col.loads, float64(s.LoadFailures), "error")
	counter(col.loadSecs, s.LoadSeconds)
	gauge(col.entries, float64(s.Entries))
	gauge(col.bytes, float64(s.Weight))
}
