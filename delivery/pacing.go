package delivery

import (
	"math"
	"slices"
	"sync/atomic"
	"time"

	"marquee"
)

// Pacing decides whether a campaign with a goal may serve now, from what
// it delivered: the verified count the store's reports hold (every
// instance's events that a decision vouches for, refreshed by
// SetDelivered) — never decisions, never unsigned beacons.
//
// A goal is met only by the reports: it stops the campaign. The reports
// lag the decisions (a flush, then a refresh), so pacing bridges the lag
// with an estimate: this instance's decisions of the campaign since the
// reports' snapshot (its asOf), at most the last statWindow (60) seconds
// of them, times the share of its earlier decisions whose impressions
// were reported (1 before any report: a decision is assumed rendered
// until the reports say otherwise), plus two standard deviations of that
// binomial guess. The estimate never meets a goal; it
// holds a campaign back (GoalPending) while the reported count and the
// estimate reach the goal, and, with even pacing, counts toward the
// straight line. Decisions that never render so no longer deliver a goal
// in decisions, and a flood of anonymous decisions holds a campaign back
// only until the reports show their impressions never came.
//
// With even pacing a campaign serves only while what it delivered is
// below what the goal expects by now — the total × the share of the
// flight gone, the daily amount × the share of the UTC day gone — plus
// one: with unlimited traffic it delivers its goal as a straight line.
// asap serves until the goal is met. Only impressions goals have an
// estimate: clicks and conversions goals read the reports alone.
type Pacing struct {
	reported atomic.Pointer[reports]
}

// reports is a snapshot of what the reports say, complete for events
// before asOf (unix seconds).
type reports struct {
	by   map[int64]Delivered
	asOf int64
	gen  int64 // tells snapshots apart: a pacing hold stands for one
}

// Delivered is what a campaign delivered of its goal's metric, verified:
// over its flight so far, and today (UTC).
type Delivered struct {
	Total, Today int64
}

// NewPacing returns pacing with nothing reported.
func NewPacing() *Pacing {
	p := &Pacing{}
	p.reported.Store(&reports{by: map[int64]Delivered{}})
	return p
}

// SetDelivered replaces what the reports say the campaigns delivered,
// counting every event written before asOf (the time the reports were
// read, less the reports' flush interval).
func (p *Pacing) SetDelivered(d map[int64]Delivered, asOf time.Time) {
	p.reported.Store(&reports{by: d, asOf: asOf.Unix(), gen: snapshots.Add(1)})
}

// Reported is what the reports last said campaign id delivered of its
// goal's metric (SetDelivered).
func (p *Pacing) Reported(id int64) Delivered { return p.reported.Load().by[id] }

// delivered is what the reports say c delivered, and the estimate of what
// its decisions since the reports' snapshot will add (impressions goals;
// see Pacing).
func (p *Pacing) delivered(c *Campaign, now time.Time) (Delivered, int64) {
	r := p.reported.Load()
	d := r.by[c.ID]
	if c.Goal == nil || c.Goal.Metric != "impressions" || c.stats == nil {
		return d, 0
	}
	sec := now.Unix()
	var since int64
	for i := range c.stats.recent {
		b := &c.stats.recent[i]
		if s := b.sec.Load(); s >= r.asOf && s > sec-statWindow && s <= sec {
			since += b.decisions.Load()
		}
	}
	before := c.stats.decisions.Load() - since // decisions whose impressions the reports had time to count
	rate := min(1, float64(d.Total+1)/float64(before+1))
	// The expected renders, and two standard deviations of a binomial
	// more: a campaign near its goal waits rather than overshoots.
	n := float64(since)
	return d, int64(math.Ceil(n*rate + 2*math.Sqrt(n*rate*(1-rate))))
}

// holdFor is how long pacing's "not now" for a campaign stands before it
// is weighed again: at tens of thousands of decisions a second, the
// hundreds of that moment read it rather than each add up a minute of
// decisions; a campaign so waits at most 10 ms longer than it must.
const holdFor = 10 * time.Millisecond

// heldWhy are the reasons a hold keeps (held is an index).
var heldWhy = [...]string{GoalMet, GoalPending, AheadOfPace}

// why says why campaign c may not serve at now (GoalMet, GoalPending,
// AheadOfPace), or "" when it may.
func (p *Pacing) why(c *Campaign, now time.Time) string {
	g := c.Goal
	if g == nil {
		return ""
	}
	s, at, gen := c.stats, now.UnixNano(), p.reported.Load().gen
	if s != nil && at < s.heldUntil.Load() && s.heldFor.Load() == gen && at >= s.heldFrom.Load() {
		return heldWhy[s.held.Load()]
	}
	w := p.weigh(c, now)
	if s != nil && w != "" { // racing holds of one moment: any of them stands
		s.held.Store(int32(slices.Index(heldWhy[:], w)))
		s.heldFor.Store(gen)
		s.heldFrom.Store(at)
		s.heldUntil.Store(at + int64(holdFor))
	}
	return w
}

// snapshots numbers the reports' snapshots.
var snapshots atomic.Int64

// weigh says why campaign c, with a goal, may not serve at now, or "".
func (p *Pacing) weigh(c *Campaign, now time.Time) string {
	g := c.Goal
	d, est := p.delivered(c, now)
	if g.Total > 0 && d.Total >= g.Total || g.Daily > 0 && d.Today >= g.Daily {
		return GoalMet
	}
	if g.Total > 0 && d.Total+est >= g.Total || g.Daily > 0 && d.Today+est >= g.Daily {
		return GoalPending
	}
	if c.Pacing != marquee.PacingEven {
		return ""
	}
	total, today := c.ExpectedByNow(now)
	if g.Total > 0 && float64(d.Total+est) >= total+1 || g.Daily > 0 && float64(d.Today+est) >= today+1 {
		return AheadOfPace
	}
	return ""
}
