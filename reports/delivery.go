package reports

import (
	"context"
	"math"
	"strconv"
	"time"

	"marquee"
)

// GoalProgress is how far a campaign is towards its goal: what it
// delivered of the goal's metric — verified events only
// (reportrow.Counts.Verified) — over its flight so far (and today, for a
// daily goal), the share of the total, what even pacing expects by now,
// and a status.
type GoalProgress struct {
	marquee.Goal
	Delivered      int64   `json:"delivered"`
	DeliveredToday *int64  `json:"deliveredToday,omitempty"` // with a daily goal (the UTC day)
	Progress       float64 `json:"progress"`                 // delivered ÷ total (today's ÷ daily without a total), at most 1
	ExpectedByNow  *int64  `json:"expectedByNow,omitempty"`  // even pacing: the goal × the share of its period gone
	// Status: "complete" (the goal is met), "paused" or "archived" (the
	// campaign's state: nothing to judge its pace by), "ahead", "on track"
	// or "behind" (even pacing, within 10% of expected is on track),
	// "asap" (no pacing to judge), "not started" or "ended".
	Status string `json:"status"`
}

// Progress answers c's goal progress at now, from its rows of the whole
// flight (bots left out), or nil when c has no goal.
func (rp *Reporter) Progress(ctx context.Context, c *marquee.Campaign, now time.Time) (*GoalProgress, error) {
	if c.Goal == nil {
		return nil, nil
	}
	g := &GoalProgress{Goal: *c.Goal, Status: "asap"}
	end := min(now.Unix(), c.EndAt.Unix())
	day := now.Unix() / 86400 * 86400
	sum := func(from, to int64) (int64, error) {
		var n int64
		if from >= to {
			return 0, nil
		}
		for _, daily := range []bool{false, true} {
			sums, err := rp.r.ReportSums(ctx, SumQuery{Entity: marquee.EntityCampaign, ID: c.ID, From: from, To: to}, daily)
			if err != nil {
				return 0, err
			}
			for _, s := range sums {
				n += s.Counts.Verified(g.Metric)
			}
		}
		return n, nil
	}
	start := c.StartAt.Unix() / 3600 * 3600 // rows are hours
	var err error
	if g.Delivered, err = sum(start, end+1); err != nil {
		return nil, err
	}
	if g.Daily > 0 {
		today, err := sum(max(day, start), end+1)
		if err != nil {
			return nil, err
		}
		g.DeliveredToday = &today
	}
	total, today := c.ExpectedByNow(now)
	var expected int64
	switch {
	case g.Total > 0:
		g.Progress = math.Min(1, float64(g.Delivered)/float64(g.Total))
		expected = int64(total)
	default:
		g.Progress = math.Min(1, float64(*g.DeliveredToday)/float64(g.Daily))
		expected = int64(today)
	}
	delivered := g.Delivered
	if g.Total == 0 {
		delivered = *g.DeliveredToday
	}
	switch {
	case g.Progress >= 1:
		g.Status = "complete"
	case c.State == marquee.StatePaused || c.State == marquee.StateArchived:
		g.Status = c.State
	case now.Before(c.StartAt):
		g.Status = "not started"
	case !now.Before(c.EndAt):
		g.Status = "ended"
	case c.Pacing == marquee.PacingEven:
		g.ExpectedByNow = &expected
		switch {
		case float64(delivered) > 1.1*float64(expected):
			g.Status = "ahead"
		case float64(delivered) < 0.9*float64(expected):
			g.Status = "behind"
		default:
			g.Status = "on track"
		}
	}
	return g, nil
}

// Spend is what c's price makes of the verified figures m of [from, to)
// (an unsigned beacon never bills): per thousand impressions (cpm), per
// click (cpc), per conversion (cpa), or
// the flat amount's share of the flight that the range covers; rounded to
// 1/10,000. Nil without a price.
func Spend(c *marquee.Campaign, m Metrics, from, to time.Time) *float64 {
	if c.Price == nil {
		return nil
	}
	amount, err := strconv.ParseFloat(string(c.Price.Amount), 64)
	if err != nil {
		return nil
	}
	var s float64
	switch c.Price.Model {
	case "cpm":
		s = float64(m.Verified("impressions")) / 1000 * amount
	case "cpc":
		s = float64(m.Verified("clicks")) * amount
	case "cpa":
		s = float64(m.Verified("conversions")) * amount
	case "flat":
		lo, hi := max(from.Unix(), c.StartAt.Unix()), min(to.Unix(), c.EndAt.Unix())
		if hi > lo {
			s = amount * float64(hi-lo) / float64(c.EndAt.Unix()-c.StartAt.Unix())
		}
	}
	s = math.Round(s*1e4) / 1e4
	return &s
}
