// Package storetest is the conformance suite every store runs: the same
// behaviour, checked the same way, on SQLite and on PostgreSQL.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"marquee"
)

// Store is the contract the suite checks.
type Store interface {
	CreateAd(ctx context.Context, in marquee.AdInput) (marquee.Ad, error)
	ReplaceAd(ctx context.Context, id int64, in marquee.AdInput) (marquee.Ad, error)
	DeleteAd(ctx context.Context, id int64) error
	Ad(ctx context.Context, id int64) (marquee.Ad, error)
	ListAds(ctx context.Context, f marquee.AdFilter) ([]marquee.Ad, int, error)
	EachLiveAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error
	InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error
	LastSeq(ctx context.Context) (int64, error)
	FirstSeq(ctx context.Context) (int64, error)
	Changes(ctx context.Context, after int64, limit int) ([]marquee.Change, error)
	TrimChangelog(ctx context.Context, before time.Time) (int64, error)
	Ping(ctx context.Context) error
	Close() error
}

// Opener opens a new, empty database and returns a handle on it, and a
// function that opens another handle on the same database (as a second
// instance would).
type Opener func(t *testing.T) (Store, func() Store)

var now = time.Now().UTC().Truncate(time.Millisecond)

func input(title string, start, end time.Duration, conds ...marquee.Condition) marquee.AdInput {
	return marquee.AdInput{Title: title, StartAt: now.Add(start), EndAt: now.Add(end), Conditions: conds}
}

// Run runs the suite.
func Run(t *testing.T, open Opener) {
	t.Run("CRUD", func(t *testing.T) { testCRUD(t, open) })
	t.Run("Changelog", func(t *testing.T) { testChangelog(t, open) })
	t.Run("TwoHandles", func(t *testing.T) { testTwoHandles(t, open) })
	t.Run("ConcurrentWritesCommitInSeqOrder", func(t *testing.T) { testConcurrentWrites(t, open) })
}

func testCRUD(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	cond := marquee.Condition{AgeStart: 20, AgeEnd: 30, Gender: []string{"F"}, Country: []string{"TW", "JP"}, Platform: []string{"ios"}}
	active, err := st.CreateAd(ctx, input("active", -time.Hour, time.Hour, cond))
	if err != nil {
		t.Fatal(err)
	}
	scheduled, _ := st.CreateAd(ctx, input("scheduled", time.Hour, 2*time.Hour))
	expired, _ := st.CreateAd(ctx, input("expired", -2*time.Hour, -time.Hour))
	if active.ID != 1 || scheduled.ID != 2 || expired.ID != 3 {
		t.Fatalf("ids = %d %d %d; want 1 2 3 (creation order)", active.ID, scheduled.ID, expired.ID)
	}
	got, err := st.Ad(ctx, active.ID)
	if err != nil || !reflect.DeepEqual(got, active) {
		t.Fatalf("Ad(1) = %+v, %v; want %+v", got, err, active)
	}
	if _, err := st.Ad(ctx, 99); !errors.Is(err, marquee.ErrNotFound) {
		t.Fatalf("Ad(99) error = %v; want ErrNotFound", err)
	}
	for _, c := range []struct {
		state marquee.AdState
		want  []string
	}{
		{marquee.AdsAll, []string{"active", "scheduled", "expired"}},
		{marquee.AdsActive, []string{"active"}},
		{marquee.AdsScheduled, []string{"scheduled"}},
		{marquee.AdsExpired, []string{"expired"}},
	} {
		ads, total, err := st.ListAds(ctx, marquee.AdFilter{State: c.state, Now: now, Limit: 10})
		if err != nil || total != len(c.want) || len(ads) != len(c.want) {
			t.Fatalf("ListAds(%s) = %d ads, total %d, %v; want %v", c.state, len(ads), total, err, c.want)
		}
		for i, a := range ads {
			if a.Title != c.want[i] {
				t.Errorf("ListAds(%s)[%d] = %q; want %q", c.state, i, a.Title, c.want[i])
			}
		}
	}
	page, total, _ := st.ListAds(ctx, marquee.AdFilter{State: marquee.AdsAll, Now: now, Offset: 1, Limit: 1})
	if total != 3 || len(page) != 1 || page[0].ID != 2 {
		t.Fatalf("ListAds(offset 1, limit 1) = %+v, total %d; want ad 2 of 3", page, total)
	}
	replaced, err := st.ReplaceAd(ctx, scheduled.ID, input("now active", -time.Minute, time.Minute))
	if err != nil || replaced.Title != "now active" || !replaced.CreatedAt.Equal(scheduled.CreatedAt) {
		t.Fatalf("ReplaceAd = %+v, %v", replaced, err)
	}
	if got, _ := st.Ad(ctx, scheduled.ID); !reflect.DeepEqual(got, replaced) {
		t.Fatalf("Ad after ReplaceAd = %+v; want %+v", got, replaced)
	}
	if _, err := st.ReplaceAd(ctx, 99, input("x", 0, time.Hour)); !errors.Is(err, marquee.ErrNotFound) {
		t.Fatalf("ReplaceAd(99) error = %v; want ErrNotFound", err)
	}
	if err := st.DeleteAd(ctx, expired.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteAd(ctx, expired.ID); !errors.Is(err, marquee.ErrNotFound) {
		t.Fatalf("second DeleteAd error = %v; want ErrNotFound", err)
	}
	var mu sync.Mutex
	var live []string
	err = st.EachLiveAd(ctx, now, func(a *marquee.Ad) error { mu.Lock(); live = append(live, a.Title); mu.Unlock(); return nil })
	if slices.Sort(live); err != nil || !slices.Equal(live, []string{"active", "now active"}) {
		t.Fatalf("EachLiveAd = %v, %v; want the two unexpired ads", live, err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping = %v", err)
	}
}

// Every mutation leaves one entry, in order; failed writes leave none;
// a bulk insert leaves one reload; trimming keeps the newest.
func testChangelog(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	if seq, err := st.LastSeq(ctx); err != nil || seq != 0 {
		t.Fatalf("LastSeq of an empty store = %d, %v; want 0", seq, err)
	}
	a, _ := st.CreateAd(ctx, input("a", -time.Hour, time.Hour))
	st.ReplaceAd(ctx, a.ID, input("a2", -time.Hour, time.Hour))
	st.ReplaceAd(ctx, 99, input("missing", -time.Hour, time.Hour))
	st.DeleteAd(ctx, a.ID)
	st.DeleteAd(ctx, a.ID)
	if err := st.InsertAds(ctx, []marquee.AdInput{input("b", -time.Hour, time.Hour), input("c", -time.Hour, time.Hour)}, func() {}); err != nil {
		t.Fatal(err)
	}
	chs, err := st.Changes(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		id int64
		op marquee.ChangeOp
	}
	var got []entry
	for i, c := range chs {
		got = append(got, entry{c.ID, c.Op})
		if c.Seq <= 0 || (i > 0 && c.Seq <= chs[i-1].Seq) || c.Entity != "ad" || time.Since(c.At) > time.Minute {
			t.Errorf("change %d = %+v; want increasing seqs, entity ad, a recent time", i, c)
		}
	}
	want := []entry{{a.ID, marquee.OpPut}, {a.ID, marquee.OpPut}, {a.ID, marquee.OpDelete}, {0, marquee.OpReload}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changelog = %v; want %v", got, want)
	}
	if tail, _ := st.Changes(ctx, chs[1].Seq, 1); len(tail) != 1 || tail[0].Seq != chs[2].Seq {
		t.Fatalf("Changes(after %d, 1) = %+v; want only seq %d", chs[1].Seq, tail, chs[2].Seq)
	}
	last, _ := st.LastSeq(ctx)
	if last != chs[3].Seq {
		t.Fatalf("LastSeq = %d; want %d", last, chs[3].Seq)
	}
	n, err := st.TrimChangelog(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("TrimChangelog(everything) = %d, %v; want 3 deleted (the newest kept)", n, err)
	}
	if first, _ := st.FirstSeq(ctx); first != last {
		t.Fatalf("FirstSeq after trim = %d; want %d", first, last)
	}
}

func testTwoHandles(t *testing.T, open Opener) {
	ctx := context.Background()
	a, second := open(t)
	b := second()
	ad, err := a.CreateAd(ctx, input("x", -time.Hour, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Ad(ctx, ad.ID); err != nil || got.Title != "x" {
		t.Fatalf("other handle: Ad = %+v, %v", got, err)
	}
	ins := make([]marquee.AdInput, 500)
	for i := range ins {
		ins[i] = input("bulk", -time.Hour, time.Hour)
	}
	n := 0
	if err := b.InsertAds(ctx, ins, func() { n++ }); err != nil || n != 500 {
		t.Fatalf("InsertAds: %v, progress %d", err, n)
	}
	if _, total, _ := a.ListAds(ctx, marquee.AdFilter{State: marquee.AdsActive, Now: now, Limit: 1}); total != 501 {
		t.Fatalf("active after bulk insert = %d; want 501", total)
	}
}

// Writers on two handles at once: the changelog has one entry per write,
// seqs without holes, and whoever has read up to seq n has seen every entry
// below n (commit order = seq order).
func testConcurrentWrites(t *testing.T, open Opener) {
	ctx := context.Background()
	a, second := open(t)
	b := second()
	const each = 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var violations []string
	var vmu sync.Mutex
	go func() { // a reader that checks it never sees seq n+1 before n
		var seen int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			chs, err := a.Changes(ctx, seen, 1000)
			if err != nil {
				continue
			}
			for _, c := range chs {
				if c.Seq != seen+1 {
					vmu.Lock()
					violations = append(violations, fmt.Sprintf("saw seq %d after %d", c.Seq, seen))
					vmu.Unlock()
				}
				seen = c.Seq
			}
		}
	}()
	for _, st := range []Store{a, b, a, b} {
		wg.Go(func() {
			for range each {
				if _, err := st.CreateAd(ctx, input("c", -time.Hour, time.Hour)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	chs, _ := a.Changes(ctx, 0, 1000)
	if len(chs) != 4*each || chs[len(chs)-1].Seq != int64(4*each) {
		t.Fatalf("%d changes, last seq %d; want %d without holes", len(chs), chs[len(chs)-1].Seq, 4*each)
	}
	vmu.Lock()
	defer vmu.Unlock()
	if len(violations) > 0 {
		t.Errorf("a reader saw seqs out of order: %v", violations[:min(5, len(violations))])
	}
}
