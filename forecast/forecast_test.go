package forecast_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"marquee"
	"marquee/delivery"
	"marquee/forecast"
	"marquee/targeting"
)

// TestModelRecoversSeasonAndTrend: a series made of a known weekly shape
// and trend, without noise, is forecast exactly, its range empty.
func TestModelRecoversSeasonAndTrend(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	shape := func(h int) float64 { return 100 + 50*math.Sin(2*math.Pi*float64(h%24)/24) + 20*float64((h/24)%7) }
	var s forecast.Series
	s.Start = start
	for w := range 6 {
		for h := range forecast.Week {
			s.Counts = append(s.Counts, shape(h)*(1+0.1*float64(w)))
		}
	}
	f := forecast.Model{}.Fit(s)
	for _, h := range []int{0, 13, 100, 167} {
		at := start.Add(time.Duration(6*forecast.Week+h) * time.Hour)
		want := shape(h) * 1.6
		if got := f.Hour(at); math.Abs(got.Mean-want) > 1e-6*want {
			t.Errorf("hour %d of week 7: %.3f; want %.3f", h, got.Mean, want)
		}
	}
}

// TestBacktest: the backtest's error stays within the goal (10%
// MAPE, day by day, for targetings of at least 1% of requests) on its
// default traffic; the figures are in docs/benchmarks.md.
func TestBacktest(t *testing.T) {
	c := forecast.DefaultBacktest
	if testing.Short() {
		c.PerHour = 500
	}
	res := forecast.Backtest(c, os.Stdout)
	t.Logf("MAPE %.3f, 80%% range held the actual %.0f%% of %d days", res.MAPE, 100*res.Coverage, res.Days)
	if res.MAPE > 0.10 || res.Days == 0 {
		t.Errorf("MAPE %.3f over %d days; want at most 0.10", res.MAPE, res.Days)
	}
}

// TestContentionMatchesTheEngine: known traffic (a week's hourly counts
// and a sample of its requests) and 50 booked campaigns of every tier:
// what the forecast allocates to the proposed campaign and to each booked
// one is what the decision engine delivers replaying every request of
// the week, within 10% (docs/benchmarks.md).
func TestContentionMatchesTheEngine(t *testing.T) {
	c := forecast.DefaultContention
	if testing.Short() {
		c.PerHour = 300
	}
	res := forecast.Contention(c, os.Stdout)
	if res.ProposedError > 0.10 || res.BookedError > 0.10 || res.ProposedEngine == 0 {
		t.Errorf("proposed: forecast %.0f, engine %.0f (error %.3f); booked error %.3f; want both at most 0.10",
			res.ProposedForecast, res.ProposedEngine, res.ProposedError, res.BookedError)
	}
}

// flat is a week of 1,000 requests an hour in placement home, half of
// them from iOS, and a sample of 100 of each hour's.
func flat() (*forecast.Inventory, time.Time) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	s := forecast.Series{Start: start, Counts: make([]float64, forecast.Week)}
	inv := &forecast.Inventory{Hourly: map[string]forecast.Hours{"home": s}}
	for h := range forecast.Week {
		s.Counts[h] = 1000
		for k := range 100 {
			platform := []string{"ios", "web"}[k%2]
			inv.Samples = append(inv.Samples, forecast.Sample{At: start.Add(time.Duration(h) * time.Hour), Placement: "home",
				Viewer: targeting.ViewerOf(30, "", "TW", platform)})
		}
	}
	return inv, start
}

func booked(id int64, priority string, goal int64, in marquee.CampaignInput, from, to time.Time) forecast.Campaign {
	in.Priority, in.Weight, in.StartAt, in.EndAt = priority, 1, from, to
	if goal > 0 {
		in.Goal = &marquee.Goal{Metric: "impressions", Total: goal}
	}
	d := forecast.DemandOf(&in, delivery.Delivered{}, delivery.Spent{}, false)
	return forecast.Campaign{ID: id, Name: fmt.Sprint("booked ", id), Tier: slices.Index(marquee.Priorities, priority), Weight: 1,
		From: from, To: to, Goal: d.Goal, Targeting: forecast.Compile(&in, []string{"home"})}
}

var ios = marquee.CampaignInput{Conditions: []marquee.Condition{{Platform: []string{"ios"}}}}

// TestHigherTierTakesFirst: a sponsorship campaign without a goal takes
// every request it matches; a standard campaign proposed on them has
// none available, and the reason names the tier; one proposed at the
// sponsorship tier shares them by weight.
func TestHigherTierTakesFirst(t *testing.T) {
	inv, start := flat()
	end := start.Add(7 * 24 * time.Hour)
	b := []forecast.Campaign{booked(1, marquee.PrioritySponsorship, 0, ios, start, end)}
	q := forecast.Query{Campaign: ios, Now: start}
	q.Campaign.Priority, q.Campaign.Weight, q.Campaign.StartAt, q.Campaign.EndAt = marquee.PriorityStandard, 1, start, end
	res := forecast.Forecast(inv, b, q)
	if want := 7 * 24 * 500.0; math.Abs(res.Matching.Mean-want) > 0.05*want {
		t.Errorf("matching %.0f; want about %.0f", res.Matching.Mean, want)
	}
	if res.Available.Mean > 1 || res.Fits != forecast.FitsNone || !strings.Contains(res.Reason, "sponsorship") {
		t.Errorf("standard under a sponsorship taking all: available %.0f, fits %q, reason %q; want 0, none, a reason naming sponsorship",
			res.Available.Mean, res.Fits, res.Reason)
	}
	if len(res.Contending) != 1 || res.Contending[0].ID != 1 || math.Abs(res.Contending[0].Takes-res.Contending[0].Shared) > 1 {
		t.Errorf("contending %+v; want campaign 1 taking all it shares", res.Contending)
	}
	q.Campaign.Priority = marquee.PrioritySponsorship
	res = forecast.Forecast(inv, b, q)
	if half := res.Matching.Mean / 2; math.Abs(res.Available.Mean-half) > 0.02*half {
		t.Errorf("sponsorship beside a sponsorship of the same weight: available %.0f; want half of %.0f", res.Available.Mean, res.Matching.Mean)
	}
	if len(res.TakesFrom) != 1 || res.TakesFrom[0].ID != 1 {
		t.Errorf("takes from %+v; want campaign 1", res.TakesFrom)
	}
}

// TestFitsOnlyInTheRemnant: standard campaigns with goals book 70% of
// the iOS requests; a proposed standard campaign wanting 90% of them does
// not fit as a guarantee (it would take from the booked ones) and shows
// as remnant, with the 30% unsold; one wanting 20% fits.
func TestFitsOnlyInTheRemnant(t *testing.T) {
	inv, start := flat()
	end := start.Add(7 * 24 * time.Hour)
	supply := int64(7 * 24 * 500)
	b := []forecast.Campaign{booked(1, marquee.PriorityStandard, supply*4/10, ios, start, end), booked(2, marquee.PriorityStandard, supply*3/10, ios, start, end)}
	q := forecast.Query{Campaign: ios, Now: start}
	q.Campaign.Priority, q.Campaign.Weight, q.Campaign.StartAt, q.Campaign.EndAt = marquee.PriorityStandard, 1, start, end
	q.Campaign.Pacing = marquee.PacingEven
	q.Campaign.Goal = &marquee.Goal{Metric: "impressions", Total: supply * 9 / 10}
	res := forecast.Forecast(inv, b, q)
	if res.Fits != forecast.FitsRemnant || len(res.TakesFrom) == 0 {
		t.Errorf("goal of 90%%: fits %q, takes from %+v; want remnant, taking from the booked", res.Fits, res.TakesFrom)
	}
	if want := 0.3 * float64(supply); math.Abs(res.Unsold.Mean-want) > 0.05*want {
		t.Errorf("unsold %.0f; want about %.0f", res.Unsold.Mean, want)
	}
	q.Campaign.Goal.Total = supply * 2 / 10
	res = forecast.Forecast(inv, b, q)
	if res.Fits != forecast.FitsGuaranteed || math.Abs(res.Delivery.Mean-float64(q.Campaign.Goal.Total)) > 0.01*float64(q.Campaign.Goal.Total) {
		t.Errorf("goal of 20%%: fits %q, delivery %.0f; want guaranteed, %d", res.Fits, res.Delivery.Mean, q.Campaign.Goal.Total)
	}
}

// TestMatchesNothing: a targeting no sampled request matches forecasts 0
// and says why.
func TestMatchesNothing(t *testing.T) {
	inv, start := flat()
	q := forecast.Query{Campaign: marquee.CampaignInput{Priority: marquee.PriorityStandard, Weight: 1, StartAt: start, EndAt: start.Add(48 * time.Hour),
		Conditions: []marquee.Condition{{Country: []string{"JP"}}}}, Now: start}
	res := forecast.Forecast(inv, nil, q)
	if res.Matching.Mean != 0 || res.Available.Mean != 0 || !strings.Contains(res.Reason, "matches its targeting") {
		t.Errorf("JP only: matching %.0f, available %.0f, reason %q; want 0, 0, a reason", res.Matching.Mean, res.Available.Mean, res.Reason)
	}
}
