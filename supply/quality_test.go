package supply_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"marquee"
	"marquee/store/sqlite"
	"marquee/supply"
)

// hourFigures answers each site's quality from a table, as the reports
// would sum it, and counts what it was asked.
type hourFigures struct {
	mu    sync.Mutex
	sites map[string]marquee.SiteQuality
	asked []string
}

func (h *hourFigures) Qualities(_ context.Context, bySite map[string][]int64, from, to time.Time) (map[string]marquee.SiteQuality, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]marquee.SiteQuality{}
	for site := range bySite {
		h.asked = append(h.asked, site)
		q := h.sites[site]
		q.From, q.To = from, to
		out[site] = q
	}
	return out, nil
}

type alarms struct {
	mu   sync.Mutex
	got  map[string]marquee.QualityAlarm
	seen int
}

func (a *alarms) SiteQualityAlarm(site string, al marquee.QualityAlarm) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got[site] = al
	a.seen++
}

// TestQualityWatch: two instances' watches judge each site's settled
// hour once between them (the store's claim); a site past the rate with
// enough traffic raises one alarm — stored on the site and notified —
// while one under the rate, one under the minimum volume and one without
// placements raise none; the next hour is judged in its turn.
func TestQualityWatch(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, name := range []string{"bad", "fine", "quiet", "empty"} {
		if _, err := st.CreateSite(ctx, marquee.Site{Name: name, Domains: []string{}, SellerType: marquee.SellerPublisher}); err != nil {
			t.Fatal(err)
		}
		if name != "empty" {
			if _, err := st.CreatePlacement(ctx, marquee.PlacementInput{Name: name + "-side", Site: name}); err != nil {
				t.Fatal(err)
			}
		}
	}
	figures := &hourFigures{sites: map[string]marquee.SiteQuality{
		"bad":   {Requests: 700, InvalidRequests: 300, Invalid: map[string]int64{"datacenter": 300}, InvalidRate: 0.3},
		"fine":  {Requests: 900, InvalidRequests: 100, Invalid: map[string]int64{"crawler": 100}, InvalidRate: 0.1},
		"quiet": {Requests: 10, InvalidRequests: 90, Invalid: map[string]int64{"velocity": 90}, InvalidRate: 0.9},
	}}
	got := &alarms{got: map[string]marquee.QualityAlarm{}}
	now := time.Date(2026, 12, 7, 10, 6, 0, 0, time.UTC) // 09:00's hour settled at 10:05
	watch := func() *supply.QualityWatch {
		return &supply.QualityWatch{Store: st, Reports: figures, Notify: got, Rate: 0.2, MinRequests: 500,
			Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)}
	}
	w1, w2 := watch(), watch()
	var wg sync.WaitGroup
	wg.Go(func() { w1.Judge(ctx) })
	wg.Go(func() { w2.Judge(ctx) })
	wg.Wait()
	w1.Judge(ctx) // again in the same hour: nothing to do
	if len(figures.asked) != 3 {
		t.Errorf("sites asked for = %v; want bad, fine and quiet once each (empty has no placement)", figures.asked)
	}
	nine := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	if a, ok := got.got["bad"]; got.seen != 1 || !ok || a.InvalidRate != 0.3 || a.Threshold != 0.2 || a.MinRequests != 500 || !a.From.Equal(nine) {
		t.Fatalf("alarms = %d %+v; want one, of bad's 09:00 hour (30%% > 20%%)", got.seen, got.got)
	}
	if s, err := st.Site(ctx, "bad"); err != nil || s.QualityAlarm == nil || s.QualityAlarm.Invalid["datacenter"] != 300 || !s.QualityAlarm.To.Equal(nine.Add(time.Hour)) {
		t.Errorf("bad read back = %+v, %v; want its alarm stored", s.QualityAlarm, err)
	}
	for _, name := range []string{"fine", "quiet", "empty"} {
		if s, _ := st.Site(ctx, name); s.QualityAlarm != nil {
			t.Errorf("%s's alarm = %+v; want none", name, s.QualityAlarm)
		}
	}
	now = now.Add(time.Hour)
	w2.Judge(ctx)
	if got.seen != 2 || len(figures.asked) != 6 {
		t.Errorf("after the next hour: %d alarms, sites asked %v; want bad's second alarm, each site asked again", got.seen, figures.asked)
	}
}
