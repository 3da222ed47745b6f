package feed_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"marquee"
	"marquee/feed"
	"marquee/index"
	"marquee/store"
	"marquee/store/storetest"
)

// instance is one reader of a shared database: a store handle, an index
// and a running feed.
type instance struct {
	st      store.Store
	ix      *index.Index
	feed    *feed.Feed
	mu      gosync.Mutex
	ids     []int64  // ads named by the batches
	reloads int      // reload batches, the initial load included
	codes   []string // links named by the batches
}

func (in *instance) changed() ([]int64, int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.ids), in.reloads
}

func open(t *testing.T, be storetest.Backend, db string, cfg feed.Config) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := be.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{st: st, ix: index.New(time.Now)}
	// A view that records what reaches it: the ads and links each batch
	// names, and the reloads.
	record := marquee.ApplyFunc(func(_ context.Context, b *marquee.Batch) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		if b.Reload {
			in.reloads++
		}
		in.ids = append(in.ids, b.Ads...)
		in.codes = append(in.codes, b.Links...)
		return nil
	})
	cfg.Saved = in.ix
	in.feed = feed.New(st, []marquee.Applier{in.ix, record}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, cfg)
	if err := in.feed.Load(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); in.feed.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; st.Close() })
	return in
}

// live returns the ids the index serves now, in list order.
func (in *instance) live() []int64 {
	return in.ix.Snapshot().AppendIDs(nil, &index.Query{Limit: 100}, time.Now())
}

func sync(t *testing.T, in *instance) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := in.feed.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func ad(title string, endIn time.Duration) marquee.AdInput {
	now := time.Now().UTC()
	return marquee.AdInput{Title: title, StartAt: now.Add(-time.Hour), EndAt: now.Add(endIn)}
}

func TestChangesOnOneHandleReachAnother(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		ctx := context.Background()
		a := open(t, be, db, feed.Config{Poll: time.Hour}) // only Sync reads
		b := open(t, be, db, feed.Config{Poll: 20 * time.Millisecond})
		x, _ := a.st.CreateAd(ctx, ad("x", 2*time.Hour))
		y, _ := a.st.CreateAd(ctx, ad("y", time.Hour))
		sync(t, b)
		if got := b.live(); !slices.Equal(got, []int64{y.ID, x.ID}) {
			t.Fatalf("after two creates on a: b serves %v; want [%d %d]", got, y.ID, x.ID)
		}
		a.st.ReplaceAd(ctx, x.ID, ad("x2", 30*time.Minute)) // now ends first
		a.st.DeleteAd(ctx, y.ID)
		sync(t, b)
		if got := b.live(); !slices.Equal(got, []int64{x.ID}) {
			t.Fatalf("after replace and delete on a: b serves %v; want [%d]", got, x.ID)
		}
		if ids, _ := b.changed(); !slices.Contains(ids, x.ID) || !slices.Contains(ids, y.ID) {
			t.Errorf("OnChange saw %v; want both ids", ids)
		}
		if pos, last := b.feed.Position(), must(a.st.LastSeq(ctx)); pos != last {
			t.Errorf("b.Position() = %d; want the changelog's end %d", pos, last)
		}
		// And a, which polls only when asked, converges through Sync alone.
		sync(t, a)
		if got := a.live(); !slices.Equal(got, []int64{x.ID}) {
			t.Fatalf("a serves %v; want [%d]", got, x.ID)
		}
	})
}

// A hole in the seqs holds the feed back (changes after it are applied but
// the position stays) until it fills or GapWait passes; then it reloads.
func TestHoleThatNeverFillsTriggersReload(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		ctx := context.Background()
		b := open(t, be, db, feed.Config{Poll: 10 * time.Millisecond, GapWait: 300 * time.Millisecond})
		st := be.OpenStore(t, db)
		x, _ := st.CreateAd(ctx, ad("x", time.Hour))
		sync(t, b)
		before := b.feed.Position()
		raw := be.Raw(t, db)
		// A write whose changelog entry skips a seq, as a rolled-back writer's would.
		raw.Exec(`INSERT INTO changelog (seq, entity, entity_id, op, at) VALUES (?, 'ad', ?, 'put', ?)`, before+2, x.ID, time.Now().UnixMilli())
		time.Sleep(100 * time.Millisecond)
		if pos := b.feed.Position(); pos != before {
			t.Fatalf("position moved to %d across a hole at %d", pos, before+1)
		}
		deadline := time.Now().Add(5 * time.Second)
		for b.feed.Position() != before+2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if pos := b.feed.Position(); pos != before+2 {
			t.Fatalf("position %d after GapWait; want a reload to %d", pos, before+2)
		}
		if _, reloads := b.changed(); reloads != 2 {
			t.Errorf("OnChange(nil) called %d times; want 2 (load, reload)", reloads)
		}
	})
}

// An instance that fell behind a trimmed changelog reloads instead of
// skipping what was trimmed; a bulk load reloads too.
func TestTrimmedPastPositionAndBulkLoadReload(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		ctx := context.Background()
		st := be.OpenStore(t, db)
		b := open(t, be, db, feed.Config{Poll: time.Hour})
		raw := be.Raw(t, db)
		var ids []int64
		for i := range 5 {
			a, _ := st.CreateAd(ctx, ad("a", time.Duration(i+1)*time.Hour))
			ids = append(ids, a.ID)
		}
		// Trim everything but the newest entry before b reads.
		raw.Exec(`UPDATE changelog SET at = 0`)
		if n, err := st.TrimChangelog(ctx, time.Now()); err != nil || n != 4 {
			t.Fatalf("TrimChangelog = %d, %v; want 4", n, err)
		}
		sync(t, b)
		if got := b.live(); !slices.Equal(got, ids) {
			t.Fatalf("after the trim b serves %v; want %v", got, ids)
		}
		bulk := []marquee.AdInput{ad("bulk1", 10*time.Hour), ad("bulk2", 11*time.Hour)}
		if err := st.InsertAds(ctx, bulk, func() {}); err != nil {
			t.Fatal(err)
		}
		sync(t, b)
		if got := b.live(); len(got) != 7 {
			t.Fatalf("after a bulk load b serves %d ads; want 7", len(got))
		}
		if _, reloads := b.changed(); reloads != 3 {
			t.Errorf("OnChange(nil) called %d times; want 3 (load, trim, bulk)", reloads)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Run trims entries older than the retention, keeping the newest.
func TestRunTrimsTheChangelog(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		ctx := context.Background()
		st := be.OpenStore(t, db)
		for range 3 {
			st.CreateAd(ctx, ad("a", time.Hour))
		}
		be.Raw(t, db).Exec(`UPDATE changelog SET at = ?`, time.Now().Add(-2*time.Hour).UnixMilli())
		open(t, be, db, feed.Config{Retention: time.Hour, TrimEvery: 10 * time.Millisecond})
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if first, _ := st.FirstSeq(ctx); first == 3 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		first, _ := st.FirstSeq(ctx)
		t.Fatalf("FirstSeq = %d after trimming; want 3 (entries older than the retention gone, the newest kept)", first)
	})
}

// Link changes reach OnLinks by code, and never the index or OnChange.
func TestLinkChangesReachOnLinks(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		ctx := context.Background()
		a := open(t, be, db, feed.Config{Poll: time.Hour})
		b := open(t, be, db, feed.Config{Poll: time.Hour})
		l, err := a.st.CreateLink(ctx, marquee.LinkInput{Code: "abc", URL: "https://example.com", Redirect: 302})
		if err != nil {
			t.Fatal(err)
		}
		a.st.ReplaceLink(ctx, l.Code, marquee.LinkInput{URL: "https://example.org", Redirect: 301})
		a.st.DeleteLink(ctx, l.Code)
		sync(t, b)
		b.mu.Lock()
		codes, ids := slices.Clone(b.codes), slices.Clone(b.ids)
		b.mu.Unlock()
		if !slices.Equal(codes, []string{"abc", "abc", "abc"}) || len(ids) != 0 {
			t.Fatalf("OnLinks saw %q, OnChange %v; want abc three times and no ads", codes, ids)
		}
	})
}
