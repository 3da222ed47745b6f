package delivery

import (
	"sync/atomic"
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
	reported atomic.Pointer[map[int64]Delivered]
}

// Delivered is what a campaign delivered of its goal's metric: over its
// flight so far, and today (UTC).
type Delivered struct {
	Total, Today int64
}

// NewPacing returns pacing with nothing reported.
func NewPacing() *Pacing {
	p := &Pacing{}
	p.reported.Store(&map[int64]Delivered{})
	return p
}

// SetDelivered replaces what the reports say the campaigns delivered.
func (p *Pacing) SetDelivered(d map[int64]Delivered) { p.reported.Store(&d) }

// delivered is what c delivered: the more of the reports' and this
// instance's decisions (its stats, counted with atomics: no lock on the
// decision path), which are deliveries of an impressions goal.
func (p *Pacing) delivered(c *Campaign, now time.Time) Delivered {
	d := (*p.reported.Load())[c.ID]
	if c.Goal != nil && c.Goal.Metric == "impressions" && c.stats != nil {
		d.Total = max(d.Total, c.stats.decisions.Load())
		if c.stats.day.Load() == now.Unix()/86400 {
			d.Today = max(d.Today, c.stats.today.Load())
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
