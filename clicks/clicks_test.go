package clicks_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"marquee"
	"marquee/clicks"
	"marquee/fixture"
	"marquee/store/sqlite"
)

// synced stands in for the feed: these tests reload links themselves.
type synced struct{}

func (synced) Sync(context.Context) error { return nil }

func open(t *testing.T, links ...marquee.LinkInput) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.InsertLinks(context.Background(), links, func() {}); err != nil {
		t.Fatal(err)
	}
	return st
}

func link(t *testing.T, st *sqlite.Store, code string) marquee.Link {
	t.Helper()
	l, err := st.Link(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Counts taken from many goroutines reach the store exactly, over more
// links than one flush transaction holds.
func TestConcurrentTakesAreCountedExactly(t *testing.T) {
	var ins []marquee.LinkInput
	for i := range 2500 {
		ins = append(ins, marquee.LinkInput{Code: fixture.Code(int64(i)), URL: "https://x.test", Redirect: 302})
	}
	st := open(t, ins...)
	c := clicks.New(st, synced{}, quiet, nil)
	stored := map[string]marquee.Link{}
	for _, in := range ins {
		stored[in.Code] = link(t, st, in.Code)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2500 {
				l := stored[ins[(i+g)%len(ins)].Code]
				if !c.Take(&l) {
					t.Error("Take of an unlimited link = false")
				}
			}
		})
	}
	wg.Wait()
	if n := c.Pending(); n != 8*2500 {
		t.Fatalf("Pending = %d; want %d", n, 8*2500)
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("Pending after flush = %d; want 0", n)
	}
	for _, in := range ins {
		if l := link(t, st, in.Code); l.Clicks != 8 {
			t.Fatalf("%s clicks = %d; want 8", in.Code, l.Clicks)
		}
	}
}

// A limit counts the store's clicks and what this instance has not
// flushed; after a flush, the reloaded link carries the count.
func TestLimitCountsUnflushedClicks(t *testing.T) {
	st := open(t, marquee.LinkInput{Code: "five", URL: "https://x.test", Redirect: 302, MaxClicks: 5})
	l := link(t, st, "five")
	st.AddClicks(context.Background(), []marquee.Clicks{{LinkID: l.ID, Code: "five", N: 2}})
	l = link(t, st, "five")
	c := clicks.New(st, synced{}, quiet, nil)
	for i := range 3 {
		if c.Reached(&l) || !c.Take(&l) {
			t.Fatalf("click %d of 3 left refused", i+1)
		}
	}
	if !c.Reached(&l) || c.Take(&l) {
		t.Fatal("a sixth click was taken")
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	l = link(t, st, "five") // what the feed's invalidation makes the cache do
	if l.Clicks != 5 || !c.Reached(&l) || c.Take(&l) {
		t.Fatalf("after the flush: clicks %d, and a click taken; want 5 and none", l.Clicks)
	}
}

// Counts a flush could not store stay pending for the next one.
func TestFailedFlushKeepsCounts(t *testing.T) {
	st := open(t, marquee.LinkInput{Code: "a", URL: "https://x.test", Redirect: 302})
	c := clicks.New(st, synced{}, quiet, nil)
	l := link(t, st, "a")
	c.Take(&l)
	c.Take(&l)
	st.Close()
	if err := c.Flush(context.Background()); err == nil {
		t.Fatal("Flush to a closed store: no error")
	}
	if n := c.Pending(); n != 2 {
		t.Fatalf("Pending after a failed flush = %d; want 2", n)
	}
}

// A redirect may hold a copy of a limited link loaded before the feed
// applied a flush's counts (its clicks are the store's before the
// flush): once the flush has settled, the copy still may not pass the
// limit, and a fresh copy is not counted twice.
func TestStaleLinkAfterFlush(t *testing.T) {
	st := open(t, marquee.LinkInput{Code: "three", URL: "https://x.test", Redirect: 302, MaxClicks: 3})
	stale := link(t, st, "three")
	c := clicks.New(st, synced{}, quiet, nil)
	for range 2 {
		if !c.Take(&stale) {
			t.Fatal("a click under the limit refused")
		}
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	fresh := link(t, st, "three")
	if fresh.Clicks != 2 || c.Reached(&fresh) {
		t.Fatalf("after the flush: clicks %d, reached %v; want 2 and not reached", fresh.Clicks, c.Reached(&fresh))
	}
	if !c.Take(&stale) { // the third: the stale copy says 0, the store 2
		t.Fatal("the third click refused")
	}
	if c.Take(&stale) || c.Take(&fresh) || !c.Reached(&stale) {
		t.Fatal("a fourth click taken through a copy loaded before the flush")
	}
	// Two flushes on, the stale copy still counts what was stored.
	for range 2 {
		if err := c.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if fresh = link(t, st, "three"); fresh.Clicks != 3 || c.Take(&fresh) || c.Take(&stale) {
		t.Fatalf("after the flushes: clicks %d, or a fourth click taken; want 3 and none", fresh.Clicks)
	}
}
