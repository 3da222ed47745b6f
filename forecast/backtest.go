package forecast

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"marquee"
	"marquee/targeting"
)

// The backtest (`marquee forecast backtest`): generated traffic with
// daily and weekly seasonality, a trend and noise, whose requests carry a
// country, a device type and a page section that vary with the hour and
// the day; each of the last HeldOut weeks is forecast from the weeks
// before it (the model, and the shares read from a sample of SampleRate
// requests an hour), and compared with what the generated traffic
// actually matched, day by day.

// BacktestConfig says what traffic to generate and how to forecast it.
type BacktestConfig struct {
	Seed       uint64
	Weeks      int     // of traffic in all (12)
	HeldOut    int     // the last weeks forecast (4)
	PerHour    float64 // requests an average hour of the first week (2,000)
	Trend      float64 // growth a week (0.02: 2%)
	Noise      float64 // an hour's relative noise, standard deviation (0.05)
	SampleRate int     // requests kept an hour for the shares (100)
	Model      Model
}

// DefaultBacktest is the backtest the command runs without flags.
var DefaultBacktest = BacktestConfig{Seed: 1, Weeks: 12, HeldOut: 4, PerHour: 2000, Trend: 0.02, Noise: 0.05, SampleRate: 100}

// TargetingCase is a targeting the backtest forecasts, by name.
type TargetingCase struct {
	Name string
	In   marquee.CampaignInput
}

// BacktestTargetings are the targetings the backtest forecasts: the whole
// placement, single rules, combinations and a day-part.
func BacktestTargetings() []TargetingCase {
	tree := func(t marquee.Targeting) *marquee.Targeting { return &t }
	section := func(v ...string) marquee.Targeting { return marquee.Targeting{Key: "section", In: v} }
	return []TargetingCase{
		{"everyone", marquee.CampaignInput{}},
		{"country TW", marquee.CampaignInput{Conditions: []marquee.Condition{{Country: []string{"TW"}}}}},
		{"country DE", marquee.CampaignInput{Conditions: []marquee.Condition{{Country: []string{"DE"}}}}},
		{"ios", marquee.CampaignInput{Conditions: []marquee.Condition{{Platform: []string{"ios"}}}}},
		{"section sports", marquee.CampaignInput{Targeting: tree(section("sports"))}},
		{"sports in JP", marquee.CampaignInput{Targeting: tree(section("sports")), Conditions: []marquee.Condition{{Country: []string{"JP"}}}}},
		{"news or tech on android", marquee.CampaignInput{Targeting: tree(section("news", "tech")), Conditions: []marquee.Condition{{Platform: []string{"android"}}}}},
		{"evenings (18:00–23:00)", marquee.CampaignInput{Targeting: tree(marquee.Targeting{DayPart: &marquee.DayPart{From: "18:00", To: "23:00"}})}},
		{"not sports, US", marquee.CampaignInput{Targeting: tree(marquee.Targeting{Not: &marquee.Targeting{Key: "section", In: []string{"sports"}}}),
			Conditions: []marquee.Condition{{Country: []string{"US"}}}}},
	}
}

// backtestStart is the generated traffic's first hour: a Monday.
var backtestStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// request draws one request of the hour at t.
func request(r *rand.Rand, t time.Time) Sample {
	h, weekend := t.Hour(), t.Weekday() == time.Saturday || t.Weekday() == time.Sunday
	country := pick(r, []string{"TW", "JP", "US", "DE"}, []float64{0.4, 0.3, 0.2, 0.1})
	// More phones at night and on weekends; more sports on weekends and
	// evenings.
	mobile := 0.55 + 0.2*math.Cos(2*math.Pi*float64(h-2)/24)
	if weekend {
		mobile += 0.1
	}
	platform := "web"
	if r.Float64() < mobile {
		platform = pick(r, []string{"ios", "android"}, []float64{0.45, 0.55})
	}
	sports := 0.08
	if weekend {
		sports = 0.22
	}
	if h >= 18 {
		sports += 0.05
	}
	sec := pick(r, []string{"sports", "news", "tech", "life"}, []float64{sports, 0.5, 0.15, 0.35 - sports})
	v := targeting.ViewerOf(20+r.IntN(50), "", country, platform)
	v.KV = []targeting.KV{{Key: "section", Value: sec}}
	return Sample{At: t, Placement: "home", Viewer: v}
}

func pick(r *rand.Rand, vals []string, weights []float64) string {
	x := r.Float64()
	for i, w := range weights {
		if x < w {
			return vals[i]
		}
		x -= w
	}
	return vals[len(vals)-1]
}

// volume is the expected requests of the hour at t, week w.
func volume(c *BacktestConfig, t time.Time, w int) float64 {
	h := float64(t.Hour())
	daily := 1 + 0.6*math.Sin(2*math.Pi*(h-9)/24) // a peak in the afternoon, a trough at night
	weekly := 1.0
	switch t.Weekday() {
	case time.Saturday:
		weekly = 0.75
	case time.Sunday:
		weekly = 0.7
	case time.Monday:
		weekly = 1.1
	}
	return c.PerHour * daily * weekly * math.Pow(1+c.Trend, float64(w))
}

// BacktestResult is what the backtest measured: the error of every
// targeting that matched at least 1% of requests, day by day over the
// held-out weeks.
type BacktestResult struct {
	MAPE     float64 // mean absolute percentage error of the days' forecasts
	Coverage float64 // how often a day's actual count fell in the forecast's 80% range
	Days     int     // forecasts compared (targetings × days)
	ByCase   map[string]float64
}

// Backtest generates c's traffic and forecasts its held-out weeks,
// writing a line a targeting to w (nil: none).
func Backtest(c BacktestConfig, w io.Writer) BacktestResult {
	r := rand.New(rand.NewPCG(c.Seed, c.Seed^0x5eed))
	cases := BacktestTargetings()
	ts := make([]*Targeting, len(cases))
	for i := range cases {
		ts[i] = Compile(&cases[i].In, nil)
	}
	hours := c.Weeks * Week
	totals := make([]float64, hours)
	matched := make([][]float64, len(cases)) // by case, by hour
	for i := range matched {
		matched[i] = make([]float64, hours)
	}
	var samples []Sample
	for i := range hours {
		t := backtestStart.Add(time.Duration(i) * time.Hour)
		n := int(math.Max(0, math.Round(volume(&c, t, i/Week)*(1+c.Noise*r.NormFloat64()))))
		totals[i] = float64(n)
		for k := range n {
			s := request(r, t)
			for j, tg := range ts {
				if tg.Matches(&s) {
					matched[j][i]++
				}
			}
			if k < c.SampleRate {
				samples = append(samples, s)
			}
		}
	}
	res := BacktestResult{ByCase: map[string]float64{}}
	var sumErr, inRange float64
	caseErr := make([]float64, len(cases))
	caseDays := make([]int, len(cases))
	for held := c.Weeks - c.HeldOut; held < c.Weeks; held++ {
		upto := held * Week // the history: every hour before the week forecast
		f := c.Model.Fit(Series{Start: backtestStart, Counts: totals[:upto]})
		cut := backtestStart.Add(time.Duration(upto) * time.Hour)
		var hist []Sample
		for i := range samples {
			if samples[i].At.Before(cut) && !samples[i].At.Before(cut.Add(-time.Duration(c.Model.weeks()*Week)*time.Hour)) {
				hist = append(hist, samples[i])
			}
		}
		for j, tg := range ts {
			sh := ShareOf(tg, hist)
			for d := range 7 {
				from := cut.Add(time.Duration(d*24) * time.Hour)
				p := Matching(f, &sh, from, from.Add(24*time.Hour))
				actual, all := 0.0, 0.0
				for h := range 24 {
					actual += matched[j][upto+d*24+h]
					all += totals[upto+d*24+h]
				}
				if actual < 0.01*all { // the goal is stated for targetings of at least 1% of requests
					continue
				}
				e := math.Abs(p.Mean-actual) / actual
				sumErr += e
				caseErr[j] += e
				caseDays[j]++
				res.Days++
				if actual >= p.Low && actual <= p.High {
					inRange++
				}
			}
		}
	}
	if res.Days > 0 {
		res.MAPE, res.Coverage = sumErr/float64(res.Days), inRange/float64(res.Days)
	}
	for j, tc := range cases {
		if caseDays[j] > 0 {
			res.ByCase[tc.Name] = caseErr[j] / float64(caseDays[j])
			if w != nil {
				fmt.Fprintf(w, "%-26s MAPE %.3f over %d days\n", tc.Name, res.ByCase[tc.Name], caseDays[j])
			}
		}
	}
	return res
}

// weeks is how many weeks m reads.
func (m Model) weeks() int {
	if m.Weeks <= 0 {
		return DefaultWeeks
	}
	return m.Weeks
}
