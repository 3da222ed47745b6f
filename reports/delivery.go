package reports

import (
	"context"
	"fmt"
	"math"
	"time"

	"golang.org/x/text/currency"

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

// DefaultCurrency is the currency of prices and spend when none is
// configured (-currency).
const DefaultCurrency = "USD"

// ParseCurrency checks an ISO 4217 currency code (as x/text/currency
// knows them) and returns it in capitals.
func ParseCurrency(code string) (string, error) {
	u, err := currency.ParseISO(code)
	if err != nil {
		return "", fmt.Errorf("want an ISO 4217 currency code such as USD, EUR or TWD, got %q", code)
	}
	return u.String(), nil
}

// Spend is what campaign c costs over [from, to) with the verified
// counts m of that range: what its events cost at their decisions'
// prices (m.SpendNanos, rounded to micro-units once) and a flat fee's
// share of the range (FlatSpend). Nil without a price.
func Spend(c *marquee.Campaign, m Counts, from, to time.Time) *marquee.Micros {
	if c.Price == nil {
		return nil
	}
	s := marquee.Nanos(m.SpendNanos).Micros() + FlatSpend(c, from, to)
	return &s
}

// FlatSpend is a flat fee's share of [from, to): of a "flat" price, the
// amount × the part of the flight the range covers; of a "daily" price,
// the amount for each day of the flight (in the campaign's time zone:
// a day of 23 or 25 hours costs one day) × the part of that day in the
// range. Only the part of the range after the campaign was approved
// costs anything (marquee.Campaign.ApprovedAt): a draft's or a pending
// campaign's fee is 0. 0 for other prices.
func FlatSpend(c *marquee.Campaign, from, to time.Time) marquee.Micros {
	approved, ok := c.ApprovedAt()
	lo, hi := maxTime(maxTime(from, c.StartAt), approved), minTime(to, c.EndAt)
	if c.Price == nil || !ok || !hi.After(lo) {
		return 0
	}
	switch c.Price.Model {
	case marquee.PriceFlat:
		return c.Price.Amount.MulDiv(int64(hi.Sub(lo)/time.Second), int64(c.EndAt.Sub(c.StartAt)/time.Second))
	case marquee.PriceDaily:
		loc, _ := marquee.ParseTimeZone(c.TimeZone)
		if loc == nil {
			loc = time.UTC
		}
		// Each day's share in nano-units, rounded once at the end: a range
		// across midnight costs what one day's part of the same length does.
		var s marquee.Nanos
		for day := marquee.DayStart(lo, loc); day.Before(hi); {
			next := marquee.NextDay(day, loc)
			part := minTime(next, hi).Sub(maxTime(day, lo))
			s += marquee.Nanos((c.Price.Amount * 1000).MulDiv(int64(part/time.Second), int64(next.Sub(day)/time.Second)))
			day = next
		}
		return s.Micros()
	}
	return 0
}

// Price adds to rep, campaign c's report over q, what c's price makes of
// it: the spend of the range and of each bucket of its series (a bucket
// cut by the range counts its part), in the Reporter's currency. Nothing
// without a price.
func (rp *Reporter) Price(rep *Report, c *marquee.Campaign, q Query) {
	if rep.Spend = Spend(c, rep.Totals.Counts, q.From, q.To); rep.Spend == nil {
		return
	}
	rep.Currency = rp.Currency
	for i := range rep.Series {
		from, _ := time.Parse(time.RFC3339, rep.Series[i].T)
		to := q.To
		if i+1 < len(rep.Series) {
			to, _ = time.Parse(time.RFC3339, rep.Series[i+1].T)
		}
		rep.Series[i].Spend = Spend(c, rep.Series[i].Counts, maxTime(from, q.From), minTime(to, q.To))
	}
}

// AddSpend sets rep's spend to amount, in the Reporter's currency.
func (rp *Reporter) AddSpend(rep *Report, amount marquee.Micros) {
	rep.Spend, rep.Currency = &amount, rp.Currency
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Spending is what campaigns' prices make of a range: by campaign and by
// advertiser, in the Reporter's currency.
type Spending struct {
	Campaigns, Advertisers map[int64]marquee.Micros
}

// Spending answers what the prices of campaigns make of their verified
// counts of [q.From, q.To): one read of every campaign's sums over the
// range (bots left out), then each priced campaign's Spend.
func (rp *Reporter) Spending(ctx context.Context, q Query, campaigns []marquee.Campaign) (Spending, error) {
	sums := map[int64]*Counts{}
	sq := SumQuery{Entity: marquee.EntityCampaign, From: q.From.Unix(), To: q.To.Unix()}
	if err := rp.eachTop(ctx, sq, "impressions", 0, rp.r.ReportTop, func(s Sum) { addTo(sums, s.ID, &s.Counts) }); err != nil {
		return Spending{}, err
	}
	out := Spending{Campaigns: map[int64]marquee.Micros{}, Advertisers: map[int64]marquee.Micros{}}
	for i := range campaigns {
		c := &campaigns[i]
		var m Counts
		if p := sums[c.ID]; p != nil {
			m = *p
		}
		if s := Spend(c, m, q.From, q.To); s != nil {
			out.Campaigns[c.ID] = *s
			out.Advertisers[c.AdvertiserID] += *s
		}
	}
	return out, nil
}
