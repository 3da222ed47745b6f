package index

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"marquee"
)

// TestChunksAfterRandomChanges cuts the index into chunks of 8 ads and
// applies random puts, replacements, deletes, expiries and starts: after
// each change every snapshot's chunks are non-empty, in order, within their
// ranges and of bounded size, chunks a change did not touch are shared
// with the previous snapshot, and a query answers as a fresh build of the
// master copy.
func TestChunksAfterRandomChanges(t *testing.T) {
	defer func(n int) { chunkAds = n }(chunkAds)
	chunkAds = 8
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := base
	ix := New(func() time.Time { return clock })
	r := rand.New(rand.NewPCG(1, 1))
	ad := func(id int64) *marquee.Ad {
		a := &marquee.Ad{ID: id, Title: "t", StartAt: clock.Add(time.Duration(r.IntN(600)-300) * time.Second),
			EndAt: clock.Add(time.Duration(1+r.IntN(3600)) * time.Second)}
		for range r.IntN(3) {
			a.Conditions = append(a.Conditions, marquee.Condition{AgeStart: 1 + r.IntN(50), AgeEnd: 50 + r.IntN(51),
				Country: []string{"TW", "JP", "US"}[:1+r.IntN(3)]})
		}
		return a
	}
	var ads []*marquee.Ad
	for id := range int64(400) {
		ads = append(ads, ad(id+1))
	}
	ix.Put(ads...)
	for step := range 600 {
		prev := ix.Snapshot()
		switch k := r.IntN(10); {
		case k < 4:
			ix.Put(ad(int64(1 + r.IntN(500))))
		case k < 6:
			ix.Delete(int64(1 + r.IntN(500)))
		case k < 7:
			batch := make([]*marquee.Ad, 1+r.IntN(20))
			for i := range batch {
				batch[i] = ad(int64(1 + r.IntN(500)))
			}
			ix.Put(batch...)
		default:
			clock = clock.Add(time.Duration(r.IntN(30)) * time.Second)
			ix.Refresh(10 * time.Second)
		}
		s := ix.Snapshot()
		checkChunks(t, step, s, clock)
		shared := 0
		for _, c := range s.chunks {
			if slices.Contains(prev.chunks, c) {
				shared++
			}
		}
		if len(prev.chunks) > 10 && len(s.chunks) > 10 && shared < len(s.chunks)/2 {
			t.Fatalf("step %d: a small change shared %d of %d chunks", step, shared, len(s.chunks))
		}
		want := build(slices.Clone(ix.sorted), clock)
		for range 10 {
			q := Query{Offset: r.IntN(30), Limit: 1 + r.IntN(50), Age: r.IntN(101), Country: []int{0, 1 + slotOf("TW"), 1 + slotOf("US")}[r.IntN(3)]}
			at := clock.Add(time.Duration(r.IntN(600)) * time.Second) // the master holds no ad ended before clock
			if got, exp := s.AppendIDs(nil, &q, at), want.AppendIDs(nil, &q, at); !slices.Equal(got, exp) {
				t.Fatalf("step %d: Query(%+v) at %v = %v; a fresh build answers %v", step, q, at, got, exp)
			}
		}
	}
}

func slotOf(c string) int { s, _ := marquee.CountrySlot(c); return s }

func checkChunks(t *testing.T, step int, s *Snapshot, now time.Time) {
	t.Helper()
	ads := 0
	for i, c := range s.chunks {
		n := len(c.ids)
		ads += n
		if n == 0 || n > chunkAds+chunkAds/4 {
			t.Fatalf("step %d: chunk %d of %d holds %d ads; want 1..%d", step, i, len(s.chunks), n, chunkAds+chunkAds/4)
		}
		if i > 0 {
			p := s.chunks[i-1]
			last := p.adRow[len(p.ids)-1]
			if p.rowEnd[last] > c.loEnd || p.rowEnd[last] == c.loEnd && p.ids[len(p.ids)-1] >= c.loID {
				t.Fatalf("step %d: chunk %d's last ad is not before chunk %d's range", step, i-1, i)
			}
			if c.rowEnd[0] < c.loEnd || c.rowEnd[0] == c.loEnd && c.ids[0] < c.loID {
				t.Fatalf("step %d: chunk %d's first ad is before its range", step, i)
			}
		}
		if c.lastEnd() <= now.UnixNano() {
			t.Fatalf("step %d: chunk %d has only ended ads", step, i)
		}
	}
	if ads != s.Len() {
		t.Fatalf("step %d: chunks hold %d ads; Len() = %d", step, ads, s.Len())
	}
}
