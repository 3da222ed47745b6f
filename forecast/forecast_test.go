package forecast_test

import (
	"math"
	"os"
	"testing"
	"time"

	"marquee/forecast"
)

// TestModelRecoversSeasonAndTrend: a series made of a known weekly shape
// and trend, without noise, is forecast exactly, its range empty.
func TestModelRecoversSeasonAndTrend(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	shape := func(h int) float64 { return 100 + 50*math.Sin(2*math.Pi*float64(h%24)/24) + 20*float64((h/24)%7) }
	var s forecast.Series
	s.Start = start
	for w := range 6 {
		for h := range forecast.Week {
			s.Counts = append(s.Counts, shape(h)*(1+0.1*float64(w)))
		}
	}
	f := forecast.Model{}.Fit(s)
	for _, h := range []int{0, 13, 100, 167} {
		at := start.Add(time.Duration(6*forecast.Week+h) * time.Hour)
		want := shape(h) * 1.6
		if got := f.Hour(at); math.Abs(got.Mean-want) > 1e-6*want {
			t.Errorf("hour %d of week 7: %.3f; want %.3f", h, got.Mean, want)
		}
	}
}

// TestBacktest: the backtest's error stays within the goal (10%
// MAPE, day by day, for targetings of at least 1% of requests) on its
// default traffic; the figures are in docs/benchmarks.md.
func TestBacktest(t *testing.T) {
	c := forecast.DefaultBacktest
	if testing.Short() {
		c.PerHour = 500
	}
	res := forecast.Backtest(c, os.Stdout)
	t.Logf("MAPE %.3f, 80%% range held the actual %.0f%% of %d days", res.MAPE, 100*res.Coverage, res.Days)
	if res.MAPE > 0.10 || res.Days == 0 {
		t.Errorf("MAPE %.3f over %d days; want at most 0.10", res.MAPE, res.Days)
	}
}
