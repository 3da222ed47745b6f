package forecast

import (
	"time"
)

// Declared is a placement's requests before its history measures them
// (fewer than MinRangeWeeks weeks): the requests a day its publisher
// declared (expectedDailyRequests), blended with the history there is in
// proportion to how much of MinRangeWeeks weeks it covers. Its range is
// ±DeclaredSpread of its mean: a declaration is a publisher's estimate,
// not a measurement.
type Declared struct {
	PerHour float64 // the declared requests a day / 24
	Seen    Hours   // fitted on the history there is (nil: none)
	Weight  float64 // Seen's weight, 0 to 1: its hours / MinRangeWeeks weeks'
}

// DeclaredSpread is a declared volume's relative range (80%).
const DeclaredSpread = 0.5

// Hour is the forecast of the hour starting at t.
func (d *Declared) Hour(t time.Time) Point {
	mean := d.PerHour
	if d.Seen != nil {
		mean = d.Weight*d.Seen.Hour(t).Mean + (1-d.Weight)*d.PerHour
	}
	return Point{Mean: mean, Low: mean * (1 - DeclaredSpread), High: mean * (1 + DeclaredSpread)}
}

// standIns are samples of placement for a forecast with no sampled
// request of it: one a bucket, each matched by any targeting (Any), so
// that a targeted campaign's forecast there is an upper bound.
func standIns(placement string) []Sample {
	monday := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) // a Monday; the 6th a Saturday
	out := make([]Sample, 0, Buckets)
	for h := range 24 {
		out = append(out, Sample{At: monday.Add(time.Duration(h) * time.Hour), Placement: placement, Any: true},
			Sample{At: monday.AddDate(0, 0, 5).Add(time.Duration(h) * time.Hour), Placement: placement, Any: true})
	}
	return out
}
