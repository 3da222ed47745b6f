package index_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee"
	"marquee/index"
	"marquee/targeting"
)

var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

var someCountries = []string{"TW", "JP", "US", "DE", "FR", "GB", "BR", "IN", "KR", "CA"}

// randomAd makes an ad around base, with 0–3 condition objects whose fields
// are each present or missing, ages often on the 1/100 boundaries.
func randomAd(r *rand.Rand, id int64) *marquee.Ad {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	start := base.Add(ms(r.IntN(7000) - 6000))
	end := start.Add(ms(1 + r.IntN(5000)))
	a := &marquee.Ad{ID: id, Title: fmt.Sprintf("AD %d \"q\"", id), StartAt: start, EndAt: end}
	if r.IntN(10) == 0 { // many ties on endAt
		a.EndAt = base.Add(ms(500))
		a.StartAt = base.Add(-ms(500))
	}
	for range r.IntN(4) {
		var c marquee.Condition
		ages := []int{1, 2, 20, 30, 50, 99, 100}
		if r.IntN(2) == 0 {
			c.AgeStart = ages[r.IntN(len(ages))]
		}
		if r.IntN(2) == 0 {
			c.AgeEnd = ages[r.IntN(len(ages))]
			if c.AgeStart > c.AgeEnd {
				c.AgeStart, c.AgeEnd = c.AgeEnd, c.AgeStart
			}
		}
		c.Gender = subset(r, marquee.Genders)
		c.Country = subset(r, someCountries)
		c.Platform = subset(r, marquee.Platforms)
		a.Conditions = append(a.Conditions, c)
	}
	return a
}

func subset(r *rand.Rand, from []string) []string {
	if r.IntN(2) == 0 {
		return nil
	}
	var out []string
	for _, v := range from {
		if r.IntN(3) == 0 {
			out = append(out, v)
		}
	}
	if out == nil {
		out = []string{from[r.IntN(len(from))]}
	}
	return out
}

// viewer is a list request as a client writes it; empty means absent.
type viewer struct {
	offset, limit, age        int
	gender, country, platform string
}

func (v viewer) query() *index.Query {
	q := &index.Query{Offset: v.offset, Limit: v.limit, Age: v.age,
		Gender: targeting.GenderCode(v.gender), Platform: targeting.PlatformCode(v.platform)}
	if v.country != "" {
		slot, _ := marquee.CountrySlot(v.country)
		q.Country = slot + 1
	}
	return q
}

// reference is GET /api/v1/ad written plainly from the spec. Ads that had
// ended by built are left out: a snapshot drops them when it is built.
func reference(ads []*marquee.Ad, v viewer, now, built time.Time) []int64 {
	v.platform = strings.ToLower(v.platform) // case-insensitive, stored lower-case
	in := func(vals []string, x string) bool { return x == "" || vals == nil || slices.Contains(vals, x) }
	var hits []*marquee.Ad
	for _, a := range ads {
		if !(a.StartAt.Before(now) && now.Before(a.EndAt)) || !built.Before(a.EndAt) {
			continue
		}
		match := len(a.Conditions) == 0
		for _, c := range a.Conditions {
			ageOK := v.age == 0 || ((c.AgeStart == 0 || v.age >= c.AgeStart) && (c.AgeEnd == 0 || v.age <= c.AgeEnd))
			if ageOK && in(c.Gender, v.gender) && in(c.Country, v.country) && in(c.Platform, v.platform) {
				match = true
			}
		}
		if match {
			hits = append(hits, a)
		}
	}
	slices.SortFunc(hits, func(a, b *marquee.Ad) int {
		if c := a.EndAt.Compare(b.EndAt); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	var ids []int64
	for i := v.offset; i < len(hits) && i < v.offset+v.limit; i++ {
		ids = append(ids, hits[i].ID)
	}
	return ids
}

func randomViewer(r *rand.Rand) viewer {
	v := viewer{offset: r.IntN(40), limit: 1 + r.IntN(100)}
	if r.IntN(6) == 0 {
		v.offset = 0
	}
	if r.IntN(2) == 0 {
		v.age = []int{1, 2, 19, 20, 25, 30, 31, 50, 99, 100}[r.IntN(10)]
	}
	if r.IntN(2) == 0 {
		v.gender = marquee.Genders[r.IntN(2)]
	}
	if r.IntN(2) == 0 {
		v.country = append(someCountries, "NZ")[r.IntN(len(someCountries)+1)]
	}
	if r.IntN(2) == 0 {
		v.platform = []string{"android", "IOS", "web"}[r.IntN(3)]
	}
	return v
}

func TestQueryMatchesReference(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			queryMatchesReference(t, seed)
		})
	}
}

// queryMatchesReference is TestQueryMatchesReference's run of one seed.
func queryMatchesReference(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	clock := base.Add(-4 * time.Second)
	ix := index.New(func() time.Time { return clock })
	var ads []*marquee.Ad
	for id := int64(1); id <= 3000; id++ {
		ads = append(ads, randomAd(r, id))
	}
	// Load half, then Put the rest in batches, replace some and delete some.
	half, loaded := ads[:1500], 1500
	if err := ix.Load(func(add func(*marquee.Ad)) error {
		for _, a := range half {
			add(a)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Every snapshot so far, patched or built, answers as the reference.
	check := func(step string) {
		for range 20 {
			v := randomViewer(r)
			now := clock.Add(time.Duration(r.IntN(8000)) * time.Millisecond)
			if got, want := ix.Snapshot().AppendIDs(nil, v.query(), now), reference(ads[:loaded], v, now, clock); !slices.Equal(got, want) {
				t.Fatalf("seed %d, after %s: Query(%+v) at %v = %v; want %v", seed, step, v, now, got, want)
			}
		}
	}
	check("Load")
	for i := 1500; i < len(ads); i += 100 {
		ix.Put(ads[i : i+100]...)
		loaded = i + 100
		check(fmt.Sprintf("Put(ads[%d:%d])", i, i+100))
	}
	for i := 0; i < 200; i++ {
		id := int64(1 + r.IntN(len(ads)))
		switch r.IntN(3) {
		case 0:
			ads[id-1] = randomAd(r, id)
			ix.Put(ads[id-1])
		case 1: // same window, new title and targeting: the same sort key
			a := randomAd(r, id)
			a.StartAt, a.EndAt = ads[id-1].StartAt, ads[id-1].EndAt
			ads[id-1] = a
			ix.Put(a)
		default:
			ix.Delete(id)
			ads[id-1] = &marquee.Ad{ID: id} // never active
		}
		check(fmt.Sprintf("change %d to ad %d", i, id))
	}
	snap := ix.Snapshot()
	for i := 0; i < 3000; i++ {
		v := randomViewer(r)
		now := base.Add(time.Duration(r.IntN(6000)-3000) * time.Millisecond)
		if r.IntN(4) == 0 { // exactly on some ad's start or end
			a := ads[r.IntN(len(ads))]
			now = []time.Time{a.StartAt, a.EndAt}[r.IntN(2)]
		}
		if r.IntN(10) == 0 { // a request that began before the snapshot was built
			now = clock.Add(-time.Duration(r.IntN(1000)) * time.Millisecond)
		}
		got := snap.AppendIDs(nil, v.query(), now)
		want := reference(ads, v, now, clock)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: Query(%+v) at %v = %v; want %v", seed, v, now, got, want)
		}
	}
}

func TestAppendPageBytes(t *testing.T) {
	clock := base
	ix := index.New(func() time.Time { return clock })
	ix.Put(
		&marquee.Ad{ID: 1, Title: `AD "1" <&>`, StartAt: base.Add(-time.Hour), EndAt: base.Add(2 * time.Hour)},
		&marquee.Ad{ID: 2, Title: "AD 2", StartAt: base.Add(-time.Hour), EndAt: base.Add(time.Hour + 5*time.Millisecond)},
		&marquee.Ad{ID: 3, Title: "scheduled", StartAt: base.Add(time.Hour), EndAt: base.Add(3 * time.Hour)},
	)
	got := string(ix.Snapshot().AppendPage(nil, &index.Query{Limit: 5}, base))
	want := `{"title":"AD 2","endAt":"2025-03-01T13:00:00.005Z"},{"title":"AD \"1\" <&>","endAt":"2025-03-01T14:00:00.000Z"}`
	if got != want {
		t.Fatalf("AppendPage = %s; want %s", got, want)
	}
	// The scheduled ad appears at its start without any rebuild.
	got = string(ix.Snapshot().AppendPage(nil, &index.Query{Offset: 2, Limit: 5}, base.Add(time.Hour+time.Nanosecond)))
	if want := `{"title":"scheduled","endAt":"2025-03-01T15:00:00.000Z"}`; got != want {
		t.Fatalf("AppendPage after start = %s; want %s", got, want)
	}
}

func TestRefreshDropsExpiredAds(t *testing.T) {
	clock := base
	ix := index.New(func() time.Time { return clock })
	ix.Put(&marquee.Ad{ID: 1, Title: "a", StartAt: base.Add(-time.Hour), EndAt: base.Add(time.Minute)})
	clock = base.Add(time.Minute)
	ix.Refresh(time.Hour)
	if n := ix.Snapshot().Len(); n != 1 {
		t.Fatalf("Len after expiry, snapshot younger than maxAge = %d; want 1", n)
	}
	ix.Refresh(0)
	if n := ix.Snapshot().Len(); n != 0 {
		t.Fatalf("Len after expiry and Refresh = %d; want 0", n)
	}
}

func TestQueryAllocatesNothing(t *testing.T) {
	ix, now := filled(t, 10_000)
	q := &index.Query{Offset: 20, Limit: 100, Age: 30, Gender: targeting.GenderF, Platform: targeting.PlatformIOS}
	buf := make([]byte, 0, 64<<10)
	snap := ix.Snapshot()
	if n := testing.AllocsPerRun(100, func() { buf = snap.AppendPage(buf[:0], q, now) }); n != 0 {
		t.Fatalf("AppendPage allocates %v times per call; want 0", n)
	}
	if len(buf) == 0 {
		t.Fatal("AppendPage found nothing; the allocation check is vacuous")
	}
}

// filled returns an index of n active ads shaped like `marquee seed` makes.
func filled(t testing.TB, n int) (*index.Index, time.Time) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	now := base
	ix := index.New(func() time.Time { return now })
	err := ix.Load(func(add func(*marquee.Ad)) error {
		for id := int64(1); id <= int64(n); id++ {
			a := randomAd(r, id)
			a.StartAt = base.Add(-time.Duration(1+r.IntN(1000)) * time.Hour)
			a.EndAt = base.Add(time.Duration(1+r.IntN(100000)) * time.Minute)
			add(a)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix, now
}

func BenchmarkAppendPage(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		ix, now := filled(b, n)
		snap := ix.Snapshot()
		buf := make([]byte, 0, 64<<10)
		for _, c := range []struct {
			name string
			q    index.Query
		}{
			{"default", index.Query{Limit: 5}},
			{"filtered", index.Query{Offset: 10, Limit: 20, Age: 24, Gender: targeting.GenderF, Country: 1 + slot("TW"), Platform: targeting.PlatformIOS}},
			{"deep", index.Query{Offset: 99, Limit: 100, Age: 50}},
		} {
			b.Run(fmt.Sprintf("ads=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					buf = snap.AppendPage(buf[:0], &c.q, now)
				}
			})
		}
	}
}

func slot(c string) int { s, _ := marquee.CountrySlot(c); return s }

// mixedQuery is a query of the mix of scripts/ads.lua: offset below
// maxOffset, limit 1–100, each filter present half the time.
func mixedQuery(r *rand.Rand, maxOffset int) index.Query {
	q := index.Query{Offset: r.IntN(maxOffset), Limit: 1 + r.IntN(100)}
	if r.IntN(2) == 0 {
		q.Age = 1 + r.IntN(100)
	}
	if r.IntN(2) == 0 {
		q.Gender = 1 + r.IntN(2)
	}
	if r.IntN(2) == 0 {
		q.Country = 1 + slot(someCountries[r.IntN(len(someCountries))])
	}
	if r.IntN(2) == 0 {
		q.Platform = 1 + r.IntN(3)
	}
	return q
}

// BenchmarkMixedQueries replays the query mix of scripts/ads.lua (random
// offset 0–99, limit 1–100, each filter present half the time) over ads
// shaped like `marquee seed` makes.
func BenchmarkMixedQueries(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		ix, now := filled(b, n)
		snap := ix.Snapshot()
		r := rand.New(rand.NewPCG(3, 4))
		qs := make([]index.Query, 4096)
		for i := range qs {
			qs[i] = mixedQuery(r, 100)
		}
		buf := make([]byte, 0, 64<<10)
		b.Run(fmt.Sprintf("ads=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				buf = snap.AppendPage(buf[:0], &qs[i&4095], now)
				i++
			}
		})
	}
}

func TestRefreshAfterScheduledStart(t *testing.T) {
	clock := base
	ix := index.New(func() time.Time { return clock })
	ix.Put(&marquee.Ad{ID: 1, Title: "a", StartAt: base.Add(time.Second), EndAt: base.Add(time.Hour)})
	builds, _ := ix.Builds()
	ix.Refresh(time.Hour)
	if n, _ := ix.Builds(); n != builds {
		t.Fatalf("Refresh before any start rebuilt the snapshot")
	}
	clock = base.Add(time.Second)
	ix.Refresh(time.Hour)
	if n, _ := ix.Builds(); n != builds+1 {
		t.Fatalf("Refresh after a scheduled start did not rebuild")
	}
	if got := ix.Snapshot().AppendIDs(nil, &index.Query{Limit: 5}, base.Add(time.Second+1)); !slices.Equal(got, []int64{1}) {
		t.Fatalf("after start: %v; want [1]", got)
	}
}

// BenchmarkPut measures one write at catalog scale: patching the master
// copy and building and publishing a new snapshot.
func BenchmarkPut(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		ix, _ := filled(b, n)
		r := rand.New(rand.NewPCG(9, 9))
		b.Run(fmt.Sprintf("ads=%d", n), func(b *testing.B) {
			for b.Loop() {
				a := randomAd(r, int64(1+r.IntN(n)))
				a.EndAt = base.Add(time.Hour)
				ix.Put(a)
			}
		})
	}
}

// TestConcurrentWritesAndReads runs writers and readers at once (meaningful
// under -race): readers always see a consistent snapshot, and after the
// writers finish the index answers exactly as the reference over the last
// value each writer left for each of its ids.
func TestConcurrentWritesAndReads(t *testing.T) {
	clock := base.Add(-4 * time.Second)
	ix := index.New(func() time.Time { return clock })
	const writers, perWriter = 4, 150
	final := make([]*marquee.Ad, writers*perWriter)
	done := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rr := rand.New(rand.NewPCG(uint64(r), 99))
			for {
				select {
				case <-done:
					return
				default:
				}
				ids := ix.Snapshot().AppendIDs(nil, randomViewer(rr).query(), base)
				if len(ids) > 100 {
					t.Errorf("page of %d ids; limit is at most 100", len(ids))
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 400 {
				id := int64(w*perWriter + 1 + r.IntN(perWriter))
				if r.IntN(4) == 0 {
					ix.Delete(id)
					final[id-1] = &marquee.Ad{ID: id}
				} else {
					a := randomAd(r, id)
					ix.Put(a)
					final[id-1] = a
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	var ads []*marquee.Ad
	for _, a := range final {
		if a != nil {
			ads = append(ads, a)
		}
	}
	r := rand.New(rand.NewPCG(5, 5))
	for range 500 {
		v := randomViewer(r)
		if got, want := ix.Snapshot().AppendIDs(nil, v.query(), base), reference(ads, v, base, clock); !slices.Equal(got, want) {
			t.Fatalf("after concurrent writes: Query(%+v) = %v; want %v", v, got, want)
		}
	}
}

// TestReplacementsHoldNoGarbage: an index whose ads were each replaced
// 300 times holds no more memory than one loaded with the final ads (a
// snapshot shares only the chunks a write did not touch), and answers as
// the reference.
func TestReplacementsHoldNoGarbage(t *testing.T) {
	clock := base
	ix := index.New(func() time.Time { return clock })
	r := rand.New(rand.NewPCG(3, 3))
	ads := make([]*marquee.Ad, 3000)
	for round := range 300 {
		batch := make([]*marquee.Ad, 100)
		for i := range batch {
			id := r.IntN(len(ads))
			ads[id] = randomAd(r, int64(id+1))
			ads[id].StartAt, ads[id].EndAt = base.Add(-time.Hour), base.Add(time.Duration(1+r.IntN(100))*time.Hour)
			ads[id].Title = fmt.Sprintf("round %d ad %d %s", round, id, strings.Repeat("x", 20))
			batch[i] = ads[id]
		}
		ix.Put(batch...)
	}
	var live []*marquee.Ad
	for _, a := range ads {
		if a != nil {
			live = append(live, a)
		}
	}
	fresh := index.New(func() time.Time { return clock })
	fresh.Put(live...)
	if got, want := ix.Snapshot().Bytes(), fresh.Snapshot().Bytes(); got > 2*want {
		t.Fatalf("after 30,000 replacements of %d ads: snapshot holds %d bytes; a fresh load of them %d", len(live), got, want)
	}
	for range 200 {
		v := randomViewer(r)
		if got, want := ix.Snapshot().AppendIDs(nil, v.query(), base), reference(live, v, base, clock); !slices.Equal(got, want) {
			t.Fatalf("after replacements: Query(%+v) = %v; want %v", v, got, want)
		}
	}
	q := index.Query{Limit: 100}
	if got, want := ix.Snapshot().AppendPage(nil, &q, base), fresh.Snapshot().AppendPage(nil, &q, base); !bytes.Equal(got, want) {
		t.Fatalf("first page after replacements = %s; a fresh load's = %s", got, want)
	}
}
