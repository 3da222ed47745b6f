package delivery

import (
	"sync"
	"time"

	"marquee"
)

// Pacing decides whether a campaign with a goal may serve now, from what
// it delivered: the count the store's reports hold (all instances,
// refreshed by SetDelivered) or this instance's own decisions since the
// flight (or the day) began, whichever is more (the reports lag the
// decisions by a flush).
//
// A goal met stops the campaign. With even pacing a campaign serves only
// while what it delivered is below what the goal expects by now — the
// total × the share of the flight gone, the daily amount × the share of
// the UTC day gone — plus one: with unlimited traffic it delivers its goal
// as a straight line, never ahead of it. asap serves until the goal is
// met. Decisions count as deliveries of an impressions goal; clicks and
// conversions goals read the reports alone.
type Pacing struct {
	mu        sync.Mutex
	reported  map[int64]Delivered
	decisions map[int64]*local
}

// Delivered is what a campaign delivered of its goal's metric: over its
// flight so far, and today (UTC).
type Delivered struct {
	Total, Today int64
}

type local struct {
	total, today int64
	day          int64 // the UTC day (unix days) today counts
}

// NewPacing returns pacing with nothing delivered.
func NewPacing() *Pacing {
	return &Pacing{reported: map[int64]Delivered{}, decisions: map[int64]*local{}}
}

// SetDelivered replaces what the reports say the campaigns delivered.
func (p *Pacing) SetDelivered(d map[int64]Delivered) {
	p.mu.Lock()
	p.reported = d
	p.mu.Unlock()
}

// decided counts a decision of campaign c at now.
func (p *Pacing) decided(c *Campaign, now time.Time) {
	if c.Goal == nil || c.Goal.Metric != "impressions" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.decisions[c.ID]
	if l == nil {
		l = &local{}
		p.decisions[c.ID] = l
	}
	day := now.Unix() / 86400
	if l.day != day {
		l.day, l.today = day, 0
	}
	l.total++
	l.today++
}

// delivered is what c delivered: the more of the reports' and this
// instance's decisions.
func (p *Pacing) delivered(c *Campaign, now time.Time) Delivered {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.reported[c.ID]
	if l := p.decisions[c.ID]; l != nil {
		d.Total = max(d.Total, l.total)
		if l.day == now.Unix()/86400 {
			d.Today = max(d.Today, l.today)
		}
	}
	return d
}

// why says why campaign c may not serve at now (GoalMet, AheadOfPace),
// or "" when it may.
func (p *Pacing) why(c *Campaign, now time.Time) string {
	g := c.Goal
	if g == nil {
		return ""
	}
	d := p.delivered(c, now)
	if g.Total > 0 && d.Total >= g.Total || g.Daily > 0 && d.Today >= g.Daily {
		return GoalMet
	}
	if c.Pacing != marquee.PacingEven {
		return ""
	}
	total, today := c.ExpectedByNow(now)
	if g.Total > 0 && float64(d.Total) >= total+1 || g.Daily > 0 && float64(d.Today) >= today+1 {
		return AheadOfPace
	}
	return ""
}
