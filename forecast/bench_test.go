package forecast_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/forecast"
	"marquee/reportrow"
	"marquee/reports"
	"marquee/store/sqlite"
	"marquee/targeting"
)

// BenchmarkForecast measures a forecast as POST /api/v1/forecasts makes
// it, without HTTP, on the embedded store: reading 8 weeks of hourly
// requests and samples (4 placements, 20 samples an hour each, 26,880
// rows of requests, 5,376 of samples), fitting the model, and the
// forecast of a 30-day flight against 100 booked campaigns of every tier
// (three allocations). The goal: ≤ 1 s. "read" is the store's
// part alone, "forecast" the rest.
func BenchmarkForecast(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	names := map[int64]string{}
	var ps []marquee.Placement
	for p := range 4 {
		id := int64(p + 1)
		names[id] = fmt.Sprint("slot-", p)
		ps = append(ps, marquee.Placement{ID: id, PlacementInput: marquee.PlacementInput{Name: names[id], Sizes: []string{"300x250"}, Types: marquee.CreativeTypes}})
	}
	batch := &reportrow.Batch{Slot: "a"}
	start := now.Truncate(time.Hour).Add(-8 * 7 * 24 * time.Hour)
	for h := range 8 * 7 * 24 {
		at := start.Add(time.Duration(h) * time.Hour)
		for id := range names {
			n := int64(1000 + r.IntN(500))
			batch.Requests = append(batch.Requests, reportrow.RequestRow{Hour: at.Unix(), Placement: id, Country: "TW", Device: "phone",
				Outcomes: [reportrow.NumOutcomes]int64{n}})
			var kept []reports.Sample
			for range 20 {
				v := targeting.ViewerOf(18+r.IntN(50), "", []string{"TW", "JP", "US"}[r.IntN(3)], []string{"ios", "android", "web"}[r.IntN(3)])
				v.KV = []targeting.KV{{Key: "section", Value: []string{"news", "sports", "tech"}[r.IntN(3)]}}
				kept = append(kept, reports.Sample{At: at.Add(time.Duration(r.IntN(3600)) * time.Second), Viewer: v})
			}
			batch.Samples = append(batch.Samples, reportrow.RequestSample{Hour: at.Unix(), Placement: id, Offered: n, Doc: reports.EncodeSamples(kept)})
		}
	}
	if err := st.AddReports(ctx, batch); err != nil {
		b.Fatal(err)
	}
	cases := forecast.BacktestTargetings()
	var cs []marquee.Campaign
	var ads []*marquee.Ad
	for i := range 100 {
		in := cases[i%len(cases)].In
		in.AdvertiserID, in.Name, in.Weight = 1, fmt.Sprint("booked ", i), 1+i%10
		in.Priority = marquee.Priorities[i%3]
		in.StartAt, in.EndAt = now.Add(-time.Duration(i)*time.Hour), now.Add(time.Duration(10+i%50)*24*time.Hour)
		if i%2 == 0 {
			in.Goal, in.Pacing = &marquee.Goal{Metric: "impressions", Total: int64(10_000 + 1000*i)}, marquee.PacingEven
		}
		cs = append(cs, marquee.Campaign{ID: int64(i + 1), State: marquee.StateActive, CampaignInput: in})
		ads = append(ads, &marquee.Ad{ID: int64(i + 1), CampaignID: int64(i + 1), Title: "a", StartAt: in.StartAt, EndAt: in.EndAt,
			Placements: []string{names[int64(1+i%4)]}, Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "x", Width: 300, Height: 250}})
	}
	e := delivery.New(counters.NewMemory(counters.DefaultMemory))
	e.SetCampaigns(cs, ps)
	e.PutAds(ads, nil, true)
	proposed := marquee.CampaignInput{Name: "proposed", Priority: marquee.PriorityStandard, Weight: 5, StartAt: now, EndAt: now.Add(30 * 24 * time.Hour),
		Goal: &marquee.Goal{Metric: "impressions", Total: 200_000}, Pacing: marquee.PacingEven, Conditions: []marquee.Condition{{Country: []string{"TW"}}}}
	m := forecast.Model{Weeks: forecast.DefaultWeeks}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, err := forecast.Load(ctx, st, names, nil, now, m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		var res forecast.Result
		for b.Loop() {
			inv, err := forecast.Load(ctx, st, names, nil, now, m)
			if err != nil {
				b.Fatal(err)
			}
			booked := forecast.Booked(e.Plan(), e.Pacing(), nil, now)
			res = forecast.Forecast(inv, booked, forecast.Query{Campaign: proposed, Now: now})
		}
		b.ReportMetric(float64(len(res.Contending)), "contending")
		if res.Matching.Mean == 0 {
			b.Fatalf("forecast %+v; want requests", res)
		}
	})
}
