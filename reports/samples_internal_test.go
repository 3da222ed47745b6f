package reports

import (
	"math"
	"net/netip"
	"slices"
	"testing"
	"time"

	"marquee/targeting"
)

// TestSamplesReservoir: an hour keeps at most K requests of a placement,
// each of the hour's requests with the same chance (over 10,000 hours of
// 100 requests, K = 10: each position kept 10% of the time, within 1.5
// points); a kept request is a copy, without the address, with what fill
// added; the hour is taken once it is over.
func TestSamplesReservoir(t *testing.T) {
	t.Parallel()
	s := NewSamples(10)
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	kept := make([]float64, 100)
	hours := 10000
	for h := range hours {
		at := start.Add(time.Duration(h) * time.Hour)
		for i := range 100 {
			v := targeting.ViewerOf(i, "", "TW", "ios") // the age tells the position
			v.IP = netip.MustParseAddr("192.0.2.1")
			v.KV = []targeting.KV{{Key: "section", Value: "sports"}}
			s.Offer(7, at.Add(time.Duration(i)*time.Second), func(v *targeting.Viewer) { v.Device = "phone" }, &v, []string{"kw"})
			v.KV[0].Value = "changed after" // the request's buffers, reused
		}
		rows := s.take(at.Add(time.Hour))
		if len(rows) != 1 || rows[0].Offered != 100 || rows[0].Placement != 7 || rows[0].Hour != at.Unix() {
			t.Fatalf("hour %d: take = %+v; want one row of 100 offered", h, rows)
		}
		got, err := DecodeSamples(rows[0].Doc)
		if err != nil || len(got) != 10 {
			t.Fatalf("hour %d: %d samples, %v; want 10", h, len(got), err)
		}
		for _, x := range got {
			if x.Viewer.IP.IsValid() || x.Viewer.Device != "phone" || x.Viewer.CountryCode() != "TW" || !slices.Equal(x.Viewer.KV, []targeting.KV{{Key: "section", Value: "sports"}}) ||
				!slices.Equal(x.Keywords, []string{"kw"}) {
				t.Fatalf("sample %+v; want a copy without the address, filled, with its key-values and keywords", x)
			}
			kept[x.Viewer.Age]++
		}
	}
	for i, n := range kept {
		if share := n / float64(hours); math.Abs(share-0.1) > 0.015 {
			t.Errorf("request %d of each hour kept %.3f of the time; want 0.100", i, share)
		}
	}
}

// TestSamplesBounded: while the store is down, at most maxPendingHours
// finished hours wait; putBack keeps a failed flush's.
func TestSamplesBounded(t *testing.T) {
	t.Parallel()
	s := NewSamples(5)
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	v := targeting.ViewerOf(30, "", "TW", "ios")
	for h := range 10 {
		s.Offer(1, start.Add(time.Duration(h)*time.Hour), func(*targeting.Viewer) {}, &v, nil)
	}
	rows := s.take(start.Add(10 * time.Hour))
	if len(rows) != maxPendingHours || rows[0].Hour != start.Add(7*time.Hour).Unix() {
		t.Fatalf("after 10 hours unflushed: %d rows from %d; want the last %d", len(rows), rows[0].Hour, maxPendingHours)
	}
	s.putBack(rows)
	if again := s.take(start.Add(10 * time.Hour)); len(again) != maxPendingHours {
		t.Fatalf("after putBack: %d rows; want %d", len(again), maxPendingHours)
	}
}
