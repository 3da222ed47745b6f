package delivery

import (
	"sync/atomic"
	"time"

	"marquee"
)

// statWindow is the span decisions per second and caps reached per
// minute are measured over.
const statWindow = 60

// campStats is what this instance decided for a campaign since it
// started: kept across plans (a new plan takes the old one's, by
// campaign id) and counted with atomics on the decision path.
type campStats struct {
	decisions, capsReached atomic.Int64
	recent                 [statWindow]bucket // by unix second mod statWindow
	// today counts the decisions of the UTC day day (unix days), for
	// pacing.
	day, today atomic.Int64
	// held (an index in heldWhy) is pacing's last "not now", standing
	// from heldFrom to heldUntil (unix ns) while the reports' snapshot is
	// heldFor, so that the decisions of that moment do not all weigh it
	// again.
	heldFrom, heldUntil, heldFor atomic.Int64
	held                         atomic.Int32
}

// bucket counts one second's decisions and caps reached.
type bucket struct {
	sec                    atomic.Int64
	decisions, capsReached atomic.Int64
}

// count records a decision of the campaign at unix ns at; reached says it
// brought the user to the campaign's cap. A bucket is reset by the first
// decision of its second (an increment racing that reset may be lost: the
// rates are approximate, the totals exact).
func (s *campStats) count(at int64, reached bool) {
	sec := at / int64(time.Second)
	b := &s.recent[sec%statWindow]
	if rolled(&b.sec, sec) {
		b.decisions.Store(0)
		b.capsReached.Store(0)
	}
	if rolled(&s.day, at/int64(24*time.Hour)) {
		s.today.Store(0)
	}
	s.decisions.Add(1)
	s.today.Add(1)
	b.decisions.Add(1)
	if reached {
		s.capsReached.Add(1)
		b.capsReached.Add(1)
	}
}

// rolled moves *period to p and reports whether this call did it: the
// first to see a new period resets its counts.
func rolled(period *atomic.Int64, p int64) bool {
	old := period.Load()
	return old != p && period.CompareAndSwap(old, p)
}

// Delivery is a campaign's delivery as this instance sees it: its own
// decisions (totals since it started, and over the last minute), and
// pacing's view, which counts every instance's delivery through the
// reports.
type Delivery struct {
	Since                 time.Time `json:"since"`
	Decisions             int64     `json:"decisions"`
	DecisionsPerSecond    float64   `json:"decisionsPerSecond"` // over the last minute
	CapsReached           int64     `json:"capsReached"`        // serves that brought a user to the cap
	CapsReachedLastMinute int64     `json:"capsReachedLastMinute"`
	Delivered             *int64    `json:"delivered,omitempty"`      // of the goal's metric over the flight, verified: the reports'
	DeliveredToday        *int64    `json:"deliveredToday,omitempty"` // likewise, today (UTC)
	Estimated             *int64    `json:"estimated,omitempty"`      // impressions this instance's decisions since the reports' snapshot are expected to add (pacing's bridge; never meets a goal)
	ExpectedByNow         *int64    `json:"expectedByNow,omitempty"`  // what even pacing allows by now (the total goal's, else the daily)
	// Budget is the campaign's budget and what it spent (every
	// instance's, as of the last sync), and its advertiser's budget.
	Budget           *BudgetSpend `json:"budget,omitempty"`
	AdvertiserBudget *BudgetSpend `json:"advertiserBudget,omitempty"`
	Serving          bool         `json:"serving"`
	Why              string       `json:"why,omitempty"` // why not: not active, goal met, ahead of even pacing, budget spent
}

// BudgetSpend is a budget and what was spent of it: today (in its time
// zone) and in all, and, with even pacing to a daily budget, what the
// straight line allows by now.
type BudgetSpend struct {
	marquee.Budget
	SpentToday    marquee.Micros  `json:"spentToday"`
	Spent         marquee.Micros  `json:"spent"`
	ExpectedByNow *marquee.Micros `json:"expectedByNow,omitempty"`
	Known         bool            `json:"known"` // false: no sync has read it yet
	// Credited is what a prepaid advertiser's balance was given (its
	// balance is Credited less Spent).
	Credited *marquee.Micros `json:"credited,omitempty"`
}

// Archived is why a campaign the plan does not hold does not serve.
const Archived = "archived (or unknown)"

// Delivery returns campaign id's delivery at now; false when the plan has
// no such campaign (archived, or unknown: not serving, nothing counted).
func (e *Engine) Delivery(id int64, now time.Time) (Delivery, bool) {
	c := e.plan.Load().campaigns[id]
	if c == nil {
		return Delivery{Since: e.started, Why: Archived}, false
	}
	d := Delivery{Since: e.started, Decisions: c.stats.decisions.Load(), CapsReached: c.stats.capsReached.Load()}
	sec := now.Unix()
	var recent int64
	for i := range c.stats.recent {
		b := &c.stats.recent[i]
		if s := b.sec.Load(); s > sec-statWindow && s <= sec {
			recent += b.decisions.Load()
			d.CapsReachedLastMinute += b.capsReached.Load()
		}
	}
	span := int64(statWindow) // the last minute, or the seconds since the engine started when fewer
	if up := sec - e.started.Unix() + 1; up > 0 && up < statWindow {
		span = up
	}
	d.DecisionsPerSecond = float64(recent) / float64(span)
	if g := c.Goal; g != nil {
		got, est := e.pacing.delivered(c, now)
		d.Delivered, d.DeliveredToday, d.Estimated = &got.Total, &got.Today, &est
		if c.Pacing == marquee.PacingEven {
			total, today := c.ExpectedByNow(now)
			expected := int64(today)
			if g.Total > 0 {
				expected = int64(total)
			}
			d.ExpectedByNow = &expected
		}
	}
	if b := e.budgets; b != nil {
		if c.Budget != nil {
			sp, ok := b.SpentOf('c', c.ID, c.loc, now)
			d.Budget = &BudgetSpend{Budget: *c.Budget, SpentToday: sp.Today, Spent: sp.Total, Known: ok}
			if c.Pacing == marquee.PacingEven && c.Goal == nil && c.Budget.Daily > 0 {
				day := marquee.DayStart(now, c.loc)
				x := marquee.Micros(float64(c.Budget.Daily) * marquee.Elapsed(day, marquee.NextDay(day, c.loc), now))
				d.Budget.ExpectedByNow = &x
			}
		}
		if a := (*b.advertisers.Load())[c.AdvertiserID]; a != nil {
			sp, ok := b.SpentOf('a', a.id, a.loc, now)
			d.AdvertiserBudget = &BudgetSpend{Budget: a.budget, SpentToday: sp.Today, Spent: sp.Total, Known: ok}
			if a.prepaid {
				cr := marquee.Nanos(a.credited).Micros()
				d.AdvertiserBudget.Credited = &cr
			}
		}
	}
	switch {
	case !c.ActiveAt(now):
		d.Why = notActive(c.State)
	default:
		d.Why = e.paceWhy(c, now, now.UnixNano())
	}
	d.Serving = d.Why == ""
	return d, true
}
