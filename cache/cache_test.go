package cache_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"marquee"
	"marquee/cache"
)

// source is a store of strings by int key that counts its loads.
type source struct {
	mu    sync.Mutex
	vals  map[int]string
	loads atomic.Int64
	fail  error
	gate  chan struct{} // when set, loads wait for it
}

// load reads the value, counts the load, then waits for the gate (if
// set) before it returns what it read, as a reply slow to arrive.
func (s *source) load(ctx context.Context, k int) (string, error) {
	s.mu.Lock()
	v, ok := s.vals[k]
	fail := s.fail
	s.mu.Unlock()
	s.loads.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	switch {
	case fail != nil:
		return "", fail
	case !ok:
		return "", marquee.Errorf(marquee.KindNotFound, "key %d not found", k)
	}
	return v, nil
}

func (s *source) set(k int, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vals[k] = v
}

func newCache(src *source, capacity cache.Capacity, reg prometheus.Registerer) *cache.Cache[int, string] {
	return cache.New(cache.Config[int, string]{Name: "test", Capacity: capacity, Load: src.load,
		Weigh: func(_ int, v string) uint32 { return uint32(len(v)) }}, reg)
}

func TestConcurrentMissesCollapseIntoOneLoad(t *testing.T) {
	src := &source{vals: map[int]string{1: "one"}, gate: make(chan struct{})}
	c := newCache(src, cache.Capacity{Entries: 10}, nil)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if v, err := c.Get(context.Background(), 1); v != "one" || err != nil {
				t.Errorf("Get(1) = %q, %v; want one", v, err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // let every Get reach the load
	close(src.gate)
	wg.Wait()
	if n := src.loads.Load(); n != 1 {
		t.Fatalf("50 concurrent Gets of one key loaded it %d times; want 1", n)
	}
}

func TestUnknownKeysAreCachedAsMisses(t *testing.T) {
	src := &source{vals: map[int]string{}}
	reg := prometheus.NewRegistry()
	c := newCache(src, cache.Capacity{Entries: 10}, reg)
	for range 100 {
		if _, err := c.Get(context.Background(), 7); marquee.KindOf(err) != marquee.KindNotFound || err.Error() != "key 7 not found" {
			t.Fatalf("Get(unknown) error = %v; want the loader's KindNotFound error, key 7 not found", err)
		}
	}
	if n := src.loads.Load(); n != 1 {
		t.Fatalf("100 Gets of an unknown key loaded it %d times; want 1", n)
	}
	if s := c.Stats(); s.NegativeHits != 99 || s.Hits != 99 || s.Misses != 1 {
		t.Fatalf("Stats = %+v; want 99 negative hits, 99 hits, 1 miss", s)
	}
	// The key is created: its changelog entry invalidates the miss.
	src.set(7, "seven")
	c.Invalidate(7)
	if v, err := c.Get(context.Background(), 7); v != "seven" || err != nil {
		t.Fatalf("Get(7) after create and invalidate = %q, %v; want seven", v, err)
	}
	want := `
# HELP marquee_cache_negative_hits_total Look-ups answered "no such key" from the cache, without the store.
# TYPE marquee_cache_negative_hits_total counter
marquee_cache_negative_hits_total{cache="test"} 99
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "marquee_cache_negative_hits_total"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 11 {
		t.Fatalf("metrics = %d series, %v; want 11", n, err)
	}
	if n, _ := testutil.GatherAndCount(reg, "marquee_cache_load_duration_seconds"); n != 1 {
		t.Fatalf("load duration histogram: %d series; want 1", n)
	}
}

func TestLoadErrorsAreNotCached(t *testing.T) {
	src := &source{vals: map[int]string{1: "one"}, fail: marquee.Unavailable(errors.New("connection refused"))}
	c := newCache(src, cache.Capacity{Entries: 10}, nil)
	if _, err := c.Get(context.Background(), 1); marquee.KindOf(err) != marquee.KindUnavailable {
		t.Fatalf("Get with the store down: %v; want KindUnavailable", err)
	}
	src.mu.Lock()
	src.fail = nil
	src.mu.Unlock()
	if v, err := c.Get(context.Background(), 1); v != "one" || err != nil {
		t.Fatalf("Get after the store is back = %q, %v; want one", v, err)
	}
}

// A load that read the old value, and an invalidation that overtook it:
// the old value is neither returned nor cached.
func TestInvalidationDuringALoadDiscardsIt(t *testing.T) {
	src := &source{vals: map[int]string{1: "old"}, gate: make(chan struct{})}
	c := newCache(src, cache.Capacity{Entries: 10}, nil)
	got := make(chan string)
	go func() { v, _ := c.Get(context.Background(), 1); got <- v }()
	for src.loads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	src.set(1, "new") // the load in flight has read "old"
	c.Invalidate(1)   // the change's changelog entry arrives first
	src.gate <- struct{}{}
	src.gate <- struct{}{} // the load again, which reads "new"
	if v := <-got; v != "new" {
		t.Fatalf("Get = %q; want new", v)
	}
	if v, _ := c.Get(context.Background(), 1); v != "new" || src.loads.Load() != 2 {
		t.Fatalf("Get after = %q after %d loads; want new after 2", v, src.loads.Load())
	}
}

func TestCapacityBounds(t *testing.T) {
	src := &source{vals: map[int]string{}}
	for i := range 1000 {
		src.vals[i] = strings.Repeat("x", 100)
	}
	for _, capacity := range []cache.Capacity{{Entries: 100}, {Bytes: 10_000}} {
		c := newCache(src, capacity, nil)
		for i := range 1000 {
			c.Get(context.Background(), i)
		}
		s := c.Stats()
		if s.Entries > 100 || s.Evictions < 900 || (capacity.Bytes > 0 && s.Weight > capacity.Bytes) {
			t.Errorf("capacity %v after 1000 keys: %+v; want ≤ ~100 entries", capacity, s)
		}
	}
}

func TestParseCapacity(t *testing.T) {
	for _, c := range []struct {
		in   string
		want cache.Capacity
		bad  bool
	}{
		{"100000", cache.Capacity{Entries: 100000}, false},
		{"64MiB", cache.Capacity{Bytes: 64 << 20}, false},
		{"512KB", cache.Capacity{Bytes: 512000}, false},
		{"1GiB", cache.Capacity{Bytes: 1 << 30}, false},
		{"4096B", cache.Capacity{Bytes: 4096}, false},
		{"0", cache.Capacity{}, true},
		{"-5", cache.Capacity{}, true},
		{"lots", cache.Capacity{}, true},
		{"MiB", cache.Capacity{}, true},
		{"1.5GiB", cache.Capacity{}, true},
	} {
		got, err := cache.ParseCapacity(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseCapacity(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}
