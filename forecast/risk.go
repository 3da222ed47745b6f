package forecast

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Risk is a booked campaign's forecast delivery against its goal or
// budget (docs/api.md#delivery-risk): what it delivered, what it would
// win over the rest of its flight as the booked campaigns contend (a
// range from its placements' forecast), and whether that reaches its
// target.
type Risk struct {
	ID       int64
	Name     string
	Priority string
	Target   float64 // its goal in decisions: the total, or its daily amounts over the rest of the flight
	// Delivered counts toward Target already (a total goal's; 0 for
	// daily amounts, whose Target is the rest of the flight's).
	Delivered float64
	Forecast  Point
	Expected  float64 // Delivered + Forecast.Mean
	AtRisk    bool    // Expected below 99% of Target, when the forecast knows its placements
	// TargetFrom says what sets Target (TargetGoal, TargetBudget).
	TargetFrom string
	// Confidence and Why: as a Result's, over its placements; Unknown:
	// nothing is known of their requests (no history, no declared
	// volume), so it is never AtRisk.
	Confidence, Why string
	Unknown         bool
}

// RiskOf forecasts the delivery of every booked campaign with a goal or
// budget limiting it, allocated together over the rest of their flights
// from now; most at risk first.
func RiskOf(inv *Inventory, booked []Campaign, now time.Time, remnantByECPM bool, priorities []string) []Risk {
	from, to := now.Truncate(time.Hour).Add(time.Hour), now
	for _, c := range booked {
		if c.To.After(to) {
			to = c.To
		}
	}
	if to.Sub(from) > maxRiskSpan {
		to = from.Add(maxRiskSpan)
	}
	a := inv.Allocate(booked, from, to, remnantByECPM, nil)
	var out []Risk
	for i, c := range booked {
		if c.Goal == 0 && c.Daily == 0 {
			continue
		}
		r := Risk{ID: c.ID, Name: c.Name, Priority: priorities[c.Tier], TargetFrom: c.TargetFrom}
		r.Confidence, r.Why = inv.confidence(c.Targeting.placements)
		r.Unknown = !slices.ContainsFunc(c.Targeting.placements, func(name string) bool { return inv.Hourly[name] != nil })
		if r.Unknown {
			r.Confidence, r.Why = ConfidenceLow, "no requests recorded in its placements yet, and none declared (a placement's expectedDailyRequests)"
		}
		if c.Goal > 0 {
			r.Target, r.Delivered = c.Goal, c.Delivered
		} else {
			days := math.Max(0, c.To.Sub(from).Hours()/24)
			r.Target = math.Max(0, c.Daily-c.Today) + c.Daily*math.Max(0, days-1)
		}
		low, high := inv.spread(c.Targeting.placements, from, minTime(c.To, to))
		won := a.Won[i]
		need := math.Max(0, r.Target-r.Delivered)
		r.Forecast = Point{Mean: won, Low: math.Min(need, won*low), High: math.Min(need, won*high)}
		r.Expected = r.Delivered + won
		r.AtRisk = !r.Unknown && r.Expected < 0.99*r.Target
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Risk) int {
		return cmp.Or(cmp.Compare(a.Expected/math.Max(a.Target, 1), b.Expected/math.Max(b.Target, 1)), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// maxRiskSpan bounds the hours a risk forecast allocates.
const maxRiskSpan = 92 * 24 * time.Hour

// everyone is the shares of a targeting that takes every request.
var everyone = func() (s Shares) {
	for b := range s.P {
		s.P[b] = 1
	}
	return s
}()

// spread is the relative range of the requests of placements over
// [from, to): the forecast's low and high over its mean (1, 1 when none).
func (inv *Inventory) spread(placements []string, from, to time.Time) (low, high float64) {
	var p Point
	for name, h := range inv.Hourly {
		if len(placements) > 0 && !slices.Contains(placements, name) {
			continue
		}
		s := Matching(h, &everyone, from, to)
		p.Mean, p.Low, p.High = p.Mean+s.Mean, p.Low+s.Low, p.High+s.High
	}
	if p.Mean <= 0 {
		return 1, 1
	}
	return p.Low / p.Mean, p.High / p.Mean
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
