package forecast

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"marquee"
	"marquee/delivery"
)

// Demand is what a campaign wants in decisions: its goal (a total over
// its flight, a daily amount) and what it delivered of them; from an
// impressions goal, or from a budget at a CPM price (the budget's
// remaining amount / the price × 1,000), the smaller when it has both.
// A clicks or conversions goal, or a budget at another price, sets no
// limit in decisions: the forecast is then an upper bound (Notes).
type Demand struct {
	Goal, Daily, Delivered, Today float64
	Limited                       bool   // a goal or budget in decisions limits it
	From                          string // TargetGoal or TargetBudget: what set the smaller limit ("": none)
}

// DemandOf is c's demand at now: reported is what the reports say it
// delivered of its goal's metric, spent what it spent of its budget
// (ok: known).
func DemandOf(c *marquee.CampaignInput, reported delivery.Delivered, spent delivery.Spent, spentOK bool) Demand {
	var d Demand
	if g := c.Goal; g != nil && g.Metric == "impressions" {
		d = Demand{Goal: float64(g.Total), Daily: float64(g.Daily), Delivered: float64(reported.Total), Today: float64(reported.Today), Limited: true, From: TargetGoal}
	}
	if b := c.Budget; b != nil && budgetInDecisions(c) {
		per := float64(c.Price.Amount) / 1000 // micros an impression
		var s delivery.Spent
		if spentOK {
			s = spent
		}
		if b.Total > 0 {
			goal, done := float64(b.Total)/per, float64(s.Total)/per
			if d.Goal == 0 || goal-done < d.Goal-d.Delivered {
				d.Goal, d.Delivered, d.From = goal, done, TargetBudget
			}
		}
		if b.Daily > 0 {
			daily, today := float64(b.Daily)/per, float64(s.Today)/per
			if d.Daily == 0 || daily-today < d.Daily-d.Today {
				d.Daily, d.Today, d.From = daily, today, TargetBudget
			}
		}
		d.Limited = true
	}
	return d
}

// budgetInDecisions says whether c's budget converts to decisions: at a
// CPM price (a vCPM price pays for the viewable ones only, a CPC or CPA
// price for what users do: their budgets bound no count of decisions).
func budgetInDecisions(c *marquee.CampaignInput) bool {
	return c.Price != nil && c.Price.Model == marquee.PriceCPM && c.Price.Amount > 0
}

// Booked is the campaigns of plan a forecast contends with at now: the
// active ones whose flight has not ended, in the placements their ads
// fill, with their demand (budgets, when given, for their spend).
func Booked(plan *delivery.Plan, pacing *delivery.Pacing, budgets *delivery.Budgets, now time.Time) []Campaign {
	placed := plan.Placed()
	var out []Campaign
	plan.Campaigns(func(c *delivery.Campaign) {
		if c.State != marquee.StateActive || !c.EndAt.After(now) || len(placed[c.ID]) == 0 {
			return
		}
		var spent delivery.Spent
		ok := false
		if budgets != nil && c.Budget != nil {
			spent, ok = budgets.SpentOf('c', c.ID, c.Loc(), now)
		}
		out = append(out, campaignOf(c.ID, c.Name, &c.CampaignInput, c.ECPM, DemandOf(&c.CampaignInput, pacing.Reported(c.ID), spent, ok), placed[c.ID]))
	})
	slices.SortFunc(out, func(a, b Campaign) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// campaignOf is the forecast's campaign of in, in placements.
func campaignOf(id int64, name string, in *marquee.CampaignInput, ecpm int64, d Demand, placements []string) Campaign {
	c := Campaign{ID: id, Name: name, Tier: max(0, marquee.TierOf(in.Priority)), Weight: max(in.Weight, 1), ECPM: ecpm,
		From: in.StartAt, To: in.EndAt, ASAP: in.Pacing == marquee.PacingASAP, Targeting: Compile(in, placements)}
	if d.Limited {
		c.Goal, c.Daily, c.Delivered, c.Today, c.TargetFrom = d.Goal, d.Daily, d.Delivered, d.Today, d.From
		if c.Goal == 0 && c.Daily == 0 { // limited to nothing: a budget of 0
			c.Goal, c.Delivered = 1, 1
		}
	}
	return c
}

// Query is a forecast asked for: a proposed campaign (ID: an existing
// one, left out of the booked ones), the placements it would fill (none:
// every placement with recorded requests), and when it is asked.
type Query struct {
	ID         int64
	Campaign   marquee.CampaignInput
	Placements []string
	Now        time.Time
	// RemnantByECPM: the remnant tier competes on eCPM (the engine's
	// -remnant setting); ECPM, the proposed campaign's there.
	RemnantByECPM bool
	ECPM          int64
}

// Result is a forecast (docs/api.md#forecasts). Counts are decisions
// (requests of one slot), over the part of the flight still to come.
type Result struct {
	From, To time.Time
	// Placements are those it would fill.
	Placements []string
	// Matching: the requests its targeting matches in its placements;
	// Available: those it would win after the higher tiers and the
	// booked campaigns of its own take theirs, as much as it wanted;
	// Delivery: what it would deliver of its goal (its goal or budget
	// limiting it, Available else).
	Matching, Available, Delivery Point
	// Goal is what its goal or budget asks for the rest of its flight,
	// in decisions (0: no limit).
	Goal float64
	// Tiers are what each tier takes of the requests it matches (the
	// campaign's own tier holding the other booked campaigns of it).
	Tiers []TierTake
	// Contending are the booked campaigns that want the requests it
	// matches, most shared first; TakesFrom those whose delivery it
	// lowers once booked, most first.
	Contending []Contender
	TakesFrom  []Loss
	// Unsold is what the guaranteed tiers' booked campaigns leave of the
	// requests it matches: what it could win in the remnant tier.
	Unsold Point
	// Fits says where it fits: FitsGuaranteed, FitsRemnant or FitsNone.
	Fits string
	// Reason says why Available is 0, when it is.
	Reason string
	Notes  []string
	// Confidence is ConfidenceLow when a placement's forecast rests on
	// a short history, a declared volume or stand-in samples (Why says
	// which), else ConfidenceNormal.
	Confidence, Why string
}

// A forecast's confidence (Result.Confidence, Risk.Confidence).
const (
	ConfidenceNormal = "normal"
	ConfidenceLow    = "low"
)

// confidence is the confidence of a forecast over placements, and why.
func (inv *Inventory) confidence(placements []string) (string, string) {
	var why []string
	for _, name := range placements {
		if w := inv.Low[name]; w != "" {
			why = append(why, w)
		}
	}
	if len(why) == 0 {
		return ConfidenceNormal, ""
	}
	return ConfidenceLow, strings.Join(why, "; ")
}

// Where a proposed campaign fits (Result.Fits).
const (
	// FitsGuaranteed: booked at its (guaranteed) tier, it delivers its
	// goal and no booked guaranteed campaign with a goal delivers less
	// for it.
	FitsGuaranteed = "guaranteed"
	// FitsRemnant: it does not fit as a guarantee, but the guaranteed
	// campaigns leave some of its requests unsold.
	FitsRemnant = "remnant"
	// FitsNone: the guaranteed campaigns take every request it matches,
	// or its targeting matches none (Reason says which).
	FitsNone = "none"
	// FitsUnknown: nothing is known of its placements' requests yet (no
	// history, no declared volume): Reason says so.
	FitsUnknown = "unknown"
)

// TierTake is what one tier's booked campaigns take of the requests a
// proposed campaign matches.
type TierTake struct {
	Priority string
	Takes    float64
}

// Contender is a booked campaign that wants requests the proposed one
// matches: Shared are those requests, Takes what it wins of them.
type Contender struct {
	ID       int64   `json:"id,string"`
	Name     string  `json:"name"`
	Priority string  `json:"priority"`
	Shared   float64 `json:"shared"`
	Takes    float64 `json:"takes"`
}

// Loss is what a booked campaign would deliver without the proposed one
// and with it.
type Loss struct {
	ID       int64   `json:"id,string"`
	Name     string  `json:"name"`
	Priority string  `json:"priority"`
	Without  float64 `json:"without"`
	With     float64 `json:"with"`
}

// Forecast answers q against inv and the booked campaigns.
func Forecast(inv *Inventory, booked []Campaign, q Query) Result {
	in := &q.Campaign
	from, to := maxTime(in.StartAt, q.Now), in.EndAt
	placements := q.Placements
	if len(placements) == 0 {
		for name := range inv.Hourly {
			placements = append(placements, name)
		}
		slices.Sort(placements)
	}
	res := Result{From: from, To: to, Placements: placements}
	own := campaignOf(q.ID, in.Name, in, q.ECPM, DemandOf(in, delivery.Delivered{}, delivery.Spent{}, false), placements)
	if own.Goal > 0 || own.Daily > 0 {
		res.Goal = own.Goal
		if own.Daily > 0 {
			days := math.Ceil(to.Sub(from).Hours() / 24)
			if res.Goal == 0 || own.Daily*days < res.Goal {
				res.Goal = own.Daily * days
			}
		}
	}
	if in.Goal != nil && in.Goal.Metric != "impressions" {
		res.Notes = append(res.Notes, fmt.Sprintf("a %s goal sets no limit in decisions: the delivery is an upper bound", in.Goal.Metric))
	}
	if in.Budget != nil && !budgetInDecisions(in) {
		res.Notes = append(res.Notes, "a budget sets a limit in decisions only at a CPM price: the delivery is an upper bound")
	}
	if in.FrequencyCap != nil {
		res.Notes = append(res.Notes, "frequency caps are not modelled: the forecast is an upper bound for a capped campaign")
	}
	// A range needs weeks to compare, and targeting samples: say when
	// there were too few.
	res.Confidence, res.Why = inv.confidence(placements)
	// The requests it matches: each placement's hours × the share its
	// targeting matches there.
	byPlacement := inv.byPlacement()
	sampled := 0
	for _, name := range placements {
		f := inv.Hourly[name]
		if f == nil {
			continue
		}
		sampled += len(byPlacement[name])
		sh := ShareOf(own.Targeting, byPlacement[name])
		m := Matching(f, &sh, from, to)
		res.Matching.Mean, res.Matching.Low, res.Matching.High = res.Matching.Mean+m.Mean, res.Matching.Low+m.Low, res.Matching.High+m.High
	}
	if res.Matching.Mean < 0.5 {
		var known bool
		res.Reason, known = zeroWhy(inv, placements, sampled)
		res.Fits = FitsNone
		if !known {
			res.Fits, res.Confidence = FitsUnknown, ConfidenceLow
			res.Why = cmp.Or(res.Why, res.Reason)
		}
		return res
	}
	// Contention: the booked campaigns alone, with it wanting all it
	// can win, and with it as proposed.
	others := slices.DeleteFunc(slices.Clone(booked), func(c Campaign) bool { return q.ID != 0 && c.ID == q.ID })
	greedy := own
	greedy.Goal, greedy.Daily, greedy.Delivered, greedy.Today = 0, 0, 0, 0
	n := len(others)
	base := inv.Allocate(others, from, to, q.RemnantByECPM, own.Targeting)
	all := inv.Allocate(append(slices.Clone(others), greedy), from, to, q.RemnantByECPM, nil)
	with := inv.Allocate(append(slices.Clone(others), own), from, to, q.RemnantByECPM, nil)
	ratio := func(a Allocation, x float64) float64 {
		if a.Matched[n] <= 0 {
			return 0
		}
		return x / a.Matched[n]
	}
	scale := func(p Point, r float64) Point { return Point{Mean: p.Mean * r, Low: p.Low * r, High: p.High * r} }
	res.Available = scale(res.Matching, ratio(all, all.Won[n]))
	res.Delivery = scale(res.Matching, ratio(with, with.Won[n]))
	res.Unsold = scale(res.Matching, ratio(all, base.Unsold))
	if res.Goal > 0 {
		res.Delivery = Point{Mean: math.Min(res.Delivery.Mean, res.Goal), Low: math.Min(res.Delivery.Low, res.Goal), High: math.Min(res.Delivery.High, res.Goal)}
	}
	// Who is booked on its requests: the booked campaigns that match
	// them, what each wins of them, and what each tier takes.
	takes := map[int]float64{}
	for i, c := range others {
		if base.Shared[i] > 0 {
			res.Contending = append(res.Contending, Contender{ID: c.ID, Name: c.Name, Priority: marquee.Priorities[c.Tier],
				Shared: base.Shared[i], Takes: base.SharedWon[i]})
			takes[c.Tier] += base.SharedWon[i]
		}
	}
	slices.SortFunc(res.Contending, func(a, b Contender) int { return cmp.Or(cmp.Compare(b.Shared, a.Shared), cmp.Compare(a.ID, b.ID)) })
	for t, p := range marquee.Priorities {
		if t <= own.Tier {
			res.Tiers = append(res.Tiers, TierTake{Priority: p, Takes: takes[t]})
		}
	}
	guaranteedLoss := false
	for i, c := range others {
		if loss := base.Won[i] - with.Won[i]; loss > 0.005*base.Won[i] && loss >= 1 {
			res.TakesFrom = append(res.TakesFrom, Loss{ID: c.ID, Name: c.Name, Priority: marquee.Priorities[c.Tier], Without: base.Won[i], With: with.Won[i]})
			guaranteedLoss = guaranteedLoss || c.Tier < remnantTier && (c.Goal > 0 || c.Daily > 0)
		}
	}
	slices.SortFunc(res.TakesFrom, func(a, b Loss) int {
		return cmp.Or(cmp.Compare(b.Without-b.With, a.Without-a.With), cmp.Compare(a.ID, b.ID))
	})
	// Where it fits: as a guarantee when its tier is guaranteed, it
	// delivers its goal (or anything, without one) and no booked
	// guaranteed campaign with a goal delivers less for it (one without
	// a goal takes what it can: sharing with it breaks no promise); in
	// the remnant when the guaranteed campaigns leave requests unsold.
	met := res.Delivery.Mean >= 0.5 && (res.Goal == 0 || res.Delivery.Mean >= 0.995*res.Goal)
	switch {
	case own.Tier < remnantTier && met && !guaranteedLoss:
		res.Fits = FitsGuaranteed
	case res.Unsold.Mean >= 0.5:
		res.Fits = FitsRemnant
	default:
		res.Fits = FitsNone
	}
	if res.Available.Mean < 0.5 {
		var higher []string
		for _, t := range res.Tiers {
			if t.Takes > 0 {
				higher = append(higher, t.Priority)
			}
		}
		res.Reason = fmt.Sprintf("booked campaigns of the %s tier take every request it matches", strings.Join(higher, " and "))
	}
	return res
}

// byPlacement is inv's samples by placement: runs of Samples when they
// come by placement (Load's), copies else.
func (inv *Inventory) byPlacement() map[string][]Sample {
	out := map[string][]Sample{}
	for i := 0; i < len(inv.Samples); {
		j := i + 1
		for j < len(inv.Samples) && inv.Samples[j].Placement == inv.Samples[i].Placement {
			j++
		}
		name := inv.Samples[i].Placement
		if prev, ok := out[name]; ok { // not one run: copy
			out[name] = append(slices.Clip(prev), inv.Samples[i:j]...)
		} else {
			out[name] = inv.Samples[i:j:j]
		}
		i = j
	}
	return out
}

// MinRangeWeeks is how many weeks of history a range needs to measure
// the spread between weeks.
const MinRangeWeeks = 3

// zeroWhy says why a targeting matches nothing, and whether anything is
// known of its placements' requests (false: neither history, nor a
// declared volume, nor samples).
func zeroWhy(inv *Inventory, placements []string, samples int) (string, bool) {
	known := 0
	for _, name := range placements {
		if inv.Hourly[name] != nil {
			known++
		}
	}
	switch {
	case len(placements) == 0 || known == 0:
		return "no requests recorded in its placements yet, and none declared (a placement's expectedDailyRequests): a forecast reads their past or expected requests", false
	case len(inv.Samples) == 0:
		return "no sample of past requests yet: the forecast reads the requests' attributes from it (serve -forecast-sample)", false
	}
	return fmt.Sprintf("no sampled request of its placements matches its targeting (%d sampled over the last %d weeks)", samples, DefaultWeeks), true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
