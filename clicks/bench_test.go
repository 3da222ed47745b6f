package clicks_test

import (
	"sync/atomic"
	"testing"

	"marquee"
	"marquee/clicks"
	"marquee/fixture"
)

// benchLinks are 100,000 links as the cache hands them to the redirect:
// most without a limit, every tenth with one that is never reached.
func benchLinks() []marquee.Link {
	links := make([]marquee.Link, 100_000)
	for i := range links {
		links[i] = marquee.Link{ID: int64(i + 1), Code: fixture.Code(int64(i)), URL: "https://example.com/", Redirect: 302}
		if i%10 == 0 {
			links[i].MaxClicks = 1 << 40
		}
	}
	return links
}

// BenchmarkTake measures counting one redirect (what GET /r/{code} adds
// to the cache hit) from many goroutines over 100,000 links. Nothing is
// flushed meanwhile: the counts only grow.
//
//	go test ./clicks -run XXX -bench Take
func BenchmarkTake(b *testing.B) {
	links := benchLinks()
	c := clicks.New(nil, synced{}, quiet, nil)
	b.ReportAllocs()
	var next atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(7919)) // each goroutine walks the links from its own place
		for pb.Next() {
			if !c.Take(&links[i%len(links)]) {
				b.Error("Take refused a link under its limit")
				return
			}
			i++
		}
	})
}

// Counting a click of a link already counted since the last flush
// allocates nothing (the first click of a code since a flush adds it to a
// shard's map).
func TestTakeAllocatesNothing(t *testing.T) {
	links := benchLinks()[:1000]
	c := clicks.New(nil, synced{}, quiet, nil)
	for i := range links {
		c.Take(&links[i])
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		c.Take(&links[i%len(links)])
		i++
	}); n != 0 {
		t.Errorf("Take allocates %v times a click; want 0", n)
	}
	if got, want := c.Pending(), int64(len(links)+1000+1); got != want {
		t.Errorf("Pending() = %d; want %d (every take counted)", got, want)
	}
}
