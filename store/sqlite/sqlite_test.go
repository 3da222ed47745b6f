package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"marquee"
	"marquee/store/sqlite"
)

var now = time.Now().UTC().Truncate(time.Millisecond)

func input(title string, start, end time.Duration, conds ...marquee.Condition) marquee.AdInput {
	return marquee.AdInput{Title: title, StartAt: now.Add(start), EndAt: now.Add(end), Conditions: conds}
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "m.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

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
	if _, err := st.ReplaceAd(ctx, 99, input("x", 0, time.Hour)); !errors.Is(err, marquee.ErrNotFound) {
		t.Fatalf("ReplaceAd(99) error = %v; want ErrNotFound", err)
	}
	if err := st.DeleteAd(ctx, expired.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteAd(ctx, expired.ID); !errors.Is(err, marquee.ErrNotFound) {
		t.Fatalf("second DeleteAd error = %v; want ErrNotFound", err)
	}

	var live []string
	if err := st.EachLiveAd(ctx, now, func(a *marquee.Ad) error { live = append(live, a.Title); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(live) != 2 {
		t.Fatalf("EachLiveAd = %v; want the two unexpired ads", live)
	}

	// Every mutation left a changelog entry in its transaction.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ops []string
	rows, err := db.Query(`SELECT op FROM changelog ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var op string
		rows.Scan(&op)
		ops = append(ops, op)
	}
	if want := []string{"put", "put", "put", "put", "delete"}; !reflect.DeepEqual(ops, want) {
		t.Fatalf("changelog ops = %v; want %v (failed writes leave none)", ops, want)
	}
}

func TestTwoHandlesOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	a, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(ctx, path) // migrations are idempotent
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
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
