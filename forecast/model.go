// Package forecast predicts the requests a targeting will match over a
// flight (docs/api.md#forecasts): an hourly model of a placement's
// requests — the level and trend of its weekly totals, the shape of its
// week hour by hour — times the share of requests a targeting matches,
// read from a bounded sample of past requests with their attributes. It
// is a pure function of what it is given; the server keeps the counts and
// the sample.
package forecast

import (
	"math"
	"time"
)

// Week is the length of the seasonal cycle: 168 hours.
const Week = 7 * 24

// Series is hourly counts: Counts[i] of the hour starting Start + i hours
// (Start on an hour, UTC).
type Series struct {
	Start  time.Time
	Counts []float64
}

// Point is a forecast of one span: its expected count and a range that
// holds the actual count about four times in five (Low, High).
type Point struct {
	Mean, Low, High float64
}

// Model forecasts hourly counts from the Weeks last whole weeks of a
// series: the weekly totals' linear trend (least squares) extrapolated to
// the week asked for, spread over its hours by the average shape of those
// weeks (each hour of the week's share of its week's total). Its range is
// the trend's residual spread (weekly totals) and the shape's spread
// across weeks (each hour), ±1.28σ (80%).
type Model struct {
	Weeks int // 0: DefaultWeeks
}

// DefaultWeeks is how many past weeks a model reads.
const DefaultWeeks = 8

// Fitted is a model fitted to a series: it forecasts any hour after it.
type Fitted struct {
	slope, offset float64 // weekly total = offset + slope × week index (0: the first week read)
	resid         float64 // the weekly totals' residual standard deviation
	share         [Week]float64
	shareSD       [Week]float64
	origin        time.Time // the hour the weeks read start at
	// Weeks is how many whole weeks it was fitted on (0: less than one).
	Weeks int
}

// Fit fits m to s: its last whole weeks, at most m.Weeks of them (at least
// one; fewer than one week of history fits a flat series of its mean).
func (m Model) Fit(s Series) *Fitted {
	weeks := m.Weeks
	if weeks <= 0 {
		weeks = DefaultWeeks
	}
	n := len(s.Counts) / Week
	if n == 0 {
		f := &Fitted{origin: s.Start}
		mean := 0.0
		for _, c := range s.Counts {
			mean += c
		}
		if len(s.Counts) > 0 {
			mean /= float64(len(s.Counts))
		}
		f.offset = mean * Week
		for h := range f.share {
			f.share[h] = 1.0 / Week
		}
		return f
	}
	weeks = min(weeks, n)
	first := len(s.Counts) - weeks*Week
	f := &Fitted{origin: s.Start.Add(time.Duration(first) * time.Hour), Weeks: weeks}
	totals := make([]float64, weeks)
	shares := make([][Week]float64, weeks)
	for w := range weeks {
		for h := range Week {
			totals[w] += s.Counts[first+w*Week+h]
		}
		for h := range Week {
			if totals[w] > 0 {
				shares[w][h] = s.Counts[first+w*Week+h] / totals[w]
			}
		}
	}
	f.slope, f.offset, f.resid = line(totals)
	for h := range Week {
		mean := 0.0
		for w := range weeks {
			mean += shares[w][h]
		}
		mean /= float64(weeks)
		sd := 0.0
		for w := range weeks {
			sd += (shares[w][h] - mean) * (shares[w][h] - mean)
		}
		if weeks > 1 {
			sd = math.Sqrt(sd / float64(weeks-1))
		}
		f.share[h], f.shareSD[h] = mean, sd
	}
	return f
}

// line fits y = offset + slope × x to ys (x = 0, 1, …) by least squares
// and says the residuals' standard deviation; one point is flat.
func line(ys []float64) (slope, offset, resid float64) {
	n := float64(len(ys))
	if len(ys) == 1 {
		return 0, ys[0], 0
	}
	var sx, sy, sxx, sxy float64
	for i, y := range ys {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	offset = (sy - slope*sx) / n
	for i, y := range ys {
		d := y - (offset + slope*float64(i))
		resid += d * d
	}
	if len(ys) > 2 {
		resid = math.Sqrt(resid / (n - 2))
	} else {
		resid = 0
	}
	return slope, offset, resid
}

// z80 is the normal quantile of an 80% range.
const z80 = 1.2816

// Hour is the forecast of the hour starting at t (any hour, before or
// after the weeks fitted).
func (f *Fitted) Hour(t time.Time) Point {
	hours := int(t.Sub(f.origin) / time.Hour)
	week := math.Floor(float64(hours) / Week)
	h := ((hours % Week) + Week) % Week
	total := math.Max(0, f.offset+f.slope*week)
	mean := total * f.share[h]
	// The two spreads, as independent relative errors.
	rel := 0.0
	if total > 0 {
		rel = f.resid / total
	}
	if f.share[h] > 0 {
		r := f.shareSD[h] / f.share[h]
		rel = math.Sqrt(rel*rel + r*r)
	}
	return Point{Mean: mean, Low: math.Max(0, mean*(1-z80*rel)), High: mean * (1 + z80*rel)}
}

// span sums h's hours of [from, to).
func span(h Hours, from, to time.Time) Point {
	var p Point
	for t := from.Truncate(time.Hour); t.Before(to); t = t.Add(time.Hour) {
		x := h.Hour(t)
		p.Mean, p.Low, p.High = p.Mean+x.Mean, p.Low+x.Low, p.High+x.High
	}
	return p
}
