package reports_test

import (
	"testing"
	"time"

	"marquee"
	"marquee/reports"
)

// TestFlatSpend: a flat fee's share of a range, exact to the micro-unit:
// the flight's by time; a day's fee by each day of the range, a range
// across midnight costing what the same length within a day does, a
// 23-hour day (New York's spring) costing a whole day.
func TestFlatSpend(t *testing.T) {
	t.Parallel()
	ny, _ := time.LoadLocation("America/New_York")
	at := func(d, h, m int, loc *time.Location) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, loc) }
	camp := func(model marquee.PriceModel, amount marquee.Micros, tz string, from, to time.Time) *marquee.Campaign {
		return &marquee.Campaign{State: marquee.StateActive, CampaignInput: marquee.CampaignInput{StartAt: from, EndAt: to, TimeZone: tz, Price: &marquee.Price{Model: model, Amount: amount}}}
	}
	for _, c := range []struct {
		name     string
		c        *marquee.Campaign
		from, to time.Time
		want     marquee.Micros
	}{
		{"a flight's third", camp("flat", 100_000_000, "", at(1, 0, 0, time.UTC), at(4, 0, 0, time.UTC)), at(1, 0, 0, time.UTC), at(2, 0, 0, time.UTC), 33_333_333},
		{"two hours of a day's 12", camp("daily", 12_000_000, "", at(1, 0, 0, time.UTC), at(9, 0, 0, time.UTC)), at(2, 10, 0, time.UTC), at(2, 12, 0, time.UTC), 1_000_000},
		{"two hours across midnight", camp("daily", 12_000_000, "", at(1, 0, 0, time.UTC), at(9, 0, 0, time.UTC)), at(2, 23, 17, time.UTC), at(3, 1, 17, time.UTC), 1_000_000},
		{"seven minutes across midnight", camp("daily", 1_000_000, "", at(1, 0, 0, time.UTC), at(9, 0, 0, time.UTC)), at(2, 23, 57, time.UTC), at(3, 0, 4, time.UTC), 4_861},
		{"New York's 23-hour day in full", camp("daily", 24_000_000, "America/New_York", at(1, 0, 0, ny), at(20, 0, 0, ny)), at(8, 0, 0, ny), at(9, 0, 0, ny), 24_000_000},
		{"the range past the flight", camp("daily", 24_000_000, "", at(1, 0, 0, time.UTC), at(1, 12, 0, time.UTC)), at(1, 0, 0, time.UTC), at(5, 0, 0, time.UTC), 12_000_000},
		{"a CPM price has no flat part", camp("cpm", 5_000_000, "", at(1, 0, 0, time.UTC), at(9, 0, 0, time.UTC)), at(1, 0, 0, time.UTC), at(2, 0, 0, time.UTC), 0},
	} {
		if got := reports.FlatSpend(c.c, c.from, c.to); got != c.want {
			t.Errorf("%s: FlatSpend = %s; want %s", c.name, got, c.want)
		}
	}
}
