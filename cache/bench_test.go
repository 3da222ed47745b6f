package cache_test

import (
	"context"
	"testing"

	"github.com/maypok86/otter/v2"

	"marquee"
	"marquee/cache"
	"marquee/fixture"
)

// BenchmarkHitGet is a hit of Get on 100,000 links, beside otter's bare
// GetIfPresent (Get goes through otter's loading Get, for collapsing).
//
//	go test ./cache -run XXX -bench HitGet
func BenchmarkHitGet(b *testing.B) {
	keys := make([]string, 100000)
	for i := range keys {
		keys[i] = fixture.Code(int64(i))
	}
	c := cache.New(cache.Config[string, marquee.Link]{Name: "x", Capacity: cache.Capacity{Entries: 200000},
		Load: func(_ context.Context, k string) (marquee.Link, error) { return marquee.Link{Code: k}, nil }}, nil)
	for _, k := range keys {
		c.Get(context.Background(), k)
	}
	b.Run("cache.Get", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Get(context.Background(), keys[i%len(keys)])
			i++
		}
	})
	o := otter.Must(&otter.Options[string, marquee.Link]{MaximumSize: 200000})
	for _, k := range keys {
		o.Set(k, marquee.Link{Code: k})
	}
	b.Run("otter.GetIfPresent", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			o.GetIfPresent(keys[i%len(keys)])
			i++
		}
	})
}
