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
	// The weeks fitted: how many, their indexes' mean and sum of squared
	// deviations (a prediction's error grows away from them).
	n, xbar, sxx float64
	share        [Week]float64 // each hour's share of its week, on average
	// The shape's spread across weeks, relative: each day's share of its
	// week (a day above its usual share is above it every hour) and each
	// hour's share of its day (hour by hour).
	dayRel  [7]float64
	hourRel [Week]float64
	origin  time.Time // the hour the weeks read start at
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
	f.n, f.xbar = float64(weeks), float64(weeks-1)/2
	for w := range weeks {
		f.sxx += (float64(w) - f.xbar) * (float64(w) - f.xbar)
	}
	for h := range Week {
		var xs []float64
		for w := range weeks {
			xs = append(xs, shares[w][h])
		}
		f.share[h], _ = meanSD(xs)
	}
	for d := range 7 {
		var days []float64
		for w := range weeks {
			day := 0.0
			for h := d * 24; h < d*24+24; h++ {
				day += shares[w][h]
			}
			days = append(days, day)
		}
		f.dayRel[d] = rel(meanSD(days))
		for h := d * 24; h < d*24+24; h++ {
			var xs []float64
			for w := range weeks {
				if days[w] > 0 {
					xs = append(xs, shares[w][h]/days[w])
				}
			}
			f.hourRel[h] = rel(meanSD(xs))
		}
	}
	return f
}

// meanSD is xs's mean and sample standard deviation (0 for one).
func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			sd += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(sd / float64(len(xs)-1))
	}
	return mean, sd
}

// rel is sd relative to mean (0 for a mean of 0).
func rel(mean, sd float64) float64 {
	if mean <= 0 {
		return 0
	}
	return sd / mean
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
	mean, e := f.errors(t)
	rel := math.Sqrt(e.week*e.week + e.day*e.day + e.hour*e.hour) // the spreads, as independent relative errors
	return Point{Mean: mean, Low: math.Max(0, mean*(1-z80*rel)), High: mean * (1 + z80*rel)}
}

// relErrors are an hour's forecast's relative errors (standard
// deviations): the week's total's, which every hour of a week shares;
// its day's share of the week's, which the hours of a day share; its
// share of its day's, its own.
type relErrors struct{ week, day, hour float64 }

// errors is the forecast of the hour at t and its relative errors.
func (f *Fitted) errors(t time.Time) (float64, relErrors) {
	hours := int(t.Sub(f.origin) / time.Hour)
	w := math.Floor(float64(hours) / Week)
	h := ((hours % Week) + Week) % Week
	total := math.Max(0, f.offset+f.slope*w)
	e := relErrors{day: f.dayRel[h/24], hour: f.hourRel[h]}
	if total > 0 {
		// A prediction from a fitted line: its residual spread, widened
		// by the line's own uncertainty at week w.
		grow := 1.0
		if f.n > 0 && f.sxx > 0 {
			grow = math.Sqrt(1 + 1/f.n + (w-f.xbar)*(w-f.xbar)/f.sxx)
		}
		e.week = f.resid * grow / total
	}
	return total * f.share[h], e
}
