package forecast

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
)

// The contention check (`marquee forecast backtest` prints it after the
// MAPE; TestContentionMatchesTheEngine runs it): a week of generated
// traffic (known: its hourly counts and a sample of SampleRate requests
// an hour) and Booked campaigns of every tier, with and without goals
// (even and asap, totals and daily amounts), flights that start and end
// inside the week, on targetings of the backtest's kind; and one more
// campaign proposed (standard, no goal). The forecast's allocation is
// compared with the decision engine itself replaying every request of
// the week (delivery.Engine.Decide, its pacing fed what it delivered
// every five minutes, as the reports would): what the proposed campaign
// wins, and what each booked campaign wins.

// ContentionConfig says what the contention check generates.
type ContentionConfig struct {
	Seed       uint64
	PerHour    float64 // requests an average hour (1,000)
	SampleRate int     // requests sampled an hour (100)
	Booked     int     // booked campaigns (50)
}

// DefaultContention is the check the command runs.
var DefaultContention = ContentionConfig{Seed: 1, PerHour: 1000, SampleRate: 100, Booked: 50}

// ContentionResult is what the check measured.
type ContentionResult struct {
	// Proposed: the requests the proposed campaign won, forecast and
	// replayed, and the error between them.
	ProposedForecast, ProposedEngine, ProposedError float64
	// BookedError is the booked campaigns' error: the sum of each one's
	// absolute difference over the sum the engine delivered.
	BookedError            float64
	BookedEngine, Requests float64
}

// Contention runs the check, writing its figures to w (nil: none).
func Contention(c ContentionConfig, w io.Writer) ContentionResult {
	r := rand.New(rand.NewPCG(c.Seed, c.Seed^0xc0de))
	start := backtestStart
	end := start.Add(Week * time.Hour)
	// The week's requests.
	type hour struct{ reqs []Sample }
	hours := make([]hour, Week)
	series := Series{Start: start, Counts: make([]float64, Week)}
	var samples []Sample
	bc := BacktestConfig{PerHour: c.PerHour}
	for i := range hours {
		t := start.Add(time.Duration(i) * time.Hour)
		n := int(math.Round(volume(&bc, t, 0)))
		series.Counts[i] = float64(n)
		for k := range n {
			s := request(r, t.Add(time.Duration(k)*time.Hour/time.Duration(n)))
			hours[i].reqs = append(hours[i].reqs, s)
			if k < c.SampleRate {
				samples = append(samples, s)
			}
		}
	}
	// The campaigns: booked ones, then the one proposed.
	cases := BacktestTargetings()
	var mcs []marquee.Campaign
	for i := range c.Booked {
		tc := cases[r.IntN(len(cases))]
		in := tc.In
		in.Name = fmt.Sprintf("booked %d (%s)", i+1, tc.Name)
		in.AdvertiserID = 1
		in.Priority = []string{marquee.PrioritySponsorship, marquee.PriorityStandard, marquee.PriorityStandard, marquee.PriorityRemnant}[r.IntN(4)]
		in.Weight = 1 + r.IntN(10)
		in.Pacing = marquee.PacingEven
		in.StartAt = start.Add(time.Duration(r.IntN(72)) * time.Hour)
		in.EndAt = in.StartAt.Add(time.Duration(48+r.IntN(120)) * time.Hour)
		if in.EndAt.After(end) {
			in.EndAt = end
		}
		switch x := r.Float64(); {
		case in.Priority == marquee.PriorityRemnant || x < 0.2: // no goal: as much as it wins
		case x < 0.7:
			in.Goal = &marquee.Goal{Metric: "impressions", Total: int64(c.PerHour * in.EndAt.Sub(in.StartAt).Hours() * (0.002 + 0.03*r.Float64()))}
		case x < 0.85:
			in.Goal = &marquee.Goal{Metric: "impressions", Total: int64(c.PerHour * in.EndAt.Sub(in.StartAt).Hours() * (0.002 + 0.03*r.Float64()))}
			in.Pacing = marquee.PacingASAP
		default:
			in.Goal = &marquee.Goal{Metric: "impressions", Daily: int64(c.PerHour * 24 * (0.002 + 0.02*r.Float64()))}
		}
		mcs = append(mcs, marquee.Campaign{ID: int64(i + 1), State: marquee.StateActive, CampaignInput: in})
	}
	proposed := marquee.CampaignInput{AdvertiserID: 1, Name: "proposed", Priority: marquee.PriorityStandard, Weight: 5, Pacing: marquee.PacingEven,
		StartAt: start, EndAt: end, Conditions: []marquee.Condition{{Platform: []string{"ios", "android"}}}}
	pid := int64(len(mcs) + 1)
	mcs = append(mcs, marquee.Campaign{ID: pid, State: marquee.StateActive, CampaignInput: proposed})

	// The forecast: the booked campaigns as Booked reads them from the
	// engine's plan, the proposed one as a query.
	engine := delivery.New(counters.NewMemory(counters.DefaultMemory))
	home := marquee.Placement{ID: 1, PlacementInput: marquee.PlacementInput{Name: "home", Sizes: []string{"300x250"}, Types: marquee.DefaultPlacementTypes}}
	engine.SetCampaigns(mcs[:len(mcs)-1], []marquee.Placement{home})
	var ads []*marquee.Ad
	for i := range mcs {
		ads = append(ads, &marquee.Ad{ID: int64(i + 1), CampaignID: mcs[i].ID, Title: "ad", StartAt: start.Add(-time.Hour), EndAt: end.Add(time.Hour),
			Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "x", Width: 300, Height: 250}})
	}
	engine.PutAds(ads[:len(ads)-1], nil, true)
	inv := &Inventory{Hourly: map[string]Hours{"home": series}, Samples: samples}
	booked := Booked(engine.Plan(), engine.Pacing(), nil, start)
	fc := Forecast(inv, booked, Query{Campaign: proposed, Now: start})
	forecastBooked := inv.Allocate(append(booked, campaignOf(pid, "proposed", &proposed, 0, Demand{}, []string{"home"})), start, end, false, nil)

	// The replay: every request, decided by the engine with the proposed
	// campaign booked too.
	engine.SetCampaigns(mcs, []marquee.Placement{home})
	engine.PutAds(ads, nil, true)
	won := map[int64]float64{}
	today := map[int64]int64{}
	day := start
	rnd := rand.New(rand.NewPCG(c.Seed, 7))
	req := delivery.Request{Slots: []delivery.Slot{{Div: "d", Placement: "home", Count: 1}}}
	var requests float64
	for i := range hours {
		for k, s := range hours[i].reqs {
			now := s.At
			if k%(len(hours[i].reqs)/12+1) == 0 { // the reports, every five minutes or so
				if d := now.Truncate(24 * time.Hour); !d.Equal(day) {
					day = d
					clear(today)
				}
				by := map[int64]delivery.Delivered{}
				for id, n := range won {
					by[id] = delivery.Delivered{Total: int64(n), Today: today[id]}
				}
				engine.Pacing().SetDelivered(by, now)
			}
			req.Viewer = s.Viewer
			requests++
			for _, ch := range engine.Decide(context.Background(), &req, now, rnd)[0] {
				won[ch.Campaign.ID]++
				today[ch.Campaign.ID]++
			}
		}
	}
	res := ContentionResult{ProposedForecast: fc.Available.Mean, ProposedEngine: won[pid], Requests: requests}
	if won[pid] > 0 {
		res.ProposedError = math.Abs(fc.Available.Mean-won[pid]) / won[pid]
	}
	var diff float64
	for i, b := range booked {
		diff += math.Abs(forecastBooked.Won[i] - won[b.ID])
		res.BookedEngine += won[b.ID]
	}
	if res.BookedEngine > 0 {
		res.BookedError = diff / res.BookedEngine
	}
	if w != nil {
		fmt.Fprintf(w, "contention: %d booked campaigns, %.0f requests replayed through the engine; the proposed campaign wins %.0f (forecast %.0f, error %.3f); the booked ones' error %.3f\n",
			len(booked), requests, won[pid], fc.Available.Mean, res.ProposedError, res.BookedError)
	}
	return res
}
