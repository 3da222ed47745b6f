package forecast

import (
	"math"
	"slices"
	"time"

	"marquee"
	"marquee/targeting"
)

// Sample is a past request kept for forecasts: when, in which placement,
// and the viewer as its decision saw it (compiled: key-values, geo,
// device, page), with its keywords.
type Sample struct {
	At        time.Time
	Placement string
	Viewer    targeting.Viewer
	Keywords  []string
	// Weight is how many requests the sample stands for, relative to the
	// others (0: 1): an instance's reservoir keeps K of the n requests of
	// an hour, each standing for n/K.
	Weight float64
	// Any: a stand-in for requests nothing was sampled of (a declared
	// volume's), which every targeting of its placement matches.
	Any bool
}

func (s *Sample) weight() float64 {
	if s.Weight <= 0 {
		return 1
	}
	return s.Weight
}

// Targeting is what a forecast matches a sample against: a campaign's
// conditions, targeting tree (its day-parts in its time zone) and
// keywords, and the placements it may fill (none: any).
type Targeting struct {
	conds      []targeting.Cond
	tree       *targeting.Tree
	keywords   []string
	placements []string
}

// Compile compiles what in targets, in placements.
func Compile(in *marquee.CampaignInput, placements []string) *Targeting {
	loc, _ := marquee.ParseTimeZone(in.TimeZone)
	if loc == nil {
		loc = time.UTC
	}
	return &Targeting{conds: targeting.CompileAll(in.Conditions), tree: targeting.CompileTree(in.Targeting, loc),
		keywords: in.Keywords, placements: placements}
}

// Matches says whether t takes sample s, as a decision would (its
// placement, conditions, tree at the sample's time, and keywords).
func (t *Targeting) Matches(s *Sample) bool {
	if len(t.placements) > 0 && !slices.Contains(t.placements, s.Placement) {
		return false
	}
	if s.Any {
		return true
	}
	if len(t.keywords) > 0 && !slices.ContainsFunc(t.keywords, func(k string) bool { return slices.Contains(s.Keywords, k) }) {
		return false
	}
	return targeting.MatchesAny(t.conds, &s.Viewer) && t.tree.Matches(&s.Viewer, s.At.UnixNano())
}

// Targets says whether t takes only some requests of its placements
// (conditions, a tree or keywords).
func (t *Targeting) Targets() bool {
	return len(t.conds) > 0 || t.tree != nil || len(t.keywords) > 0
}

// Buckets are the hours a share is estimated for: the hour of the day, on
// a weekday or on a weekend day (48), in UTC.
const Buckets = 48

// bucket is the bucket of the hour at t.
func bucket(t time.Time) int {
	t = t.UTC()
	b := t.Hour()
	if d := t.Weekday(); d == time.Saturday || d == time.Sunday {
		b += 24
	}
	return b
}

// Shares are the shares of requests a targeting matches, by bucket (P),
// and the samples each was read from, its prior's included (N).
type Shares struct {
	P, N [Buckets]float64
}

// Prior is how many samples' weight the overall share counts for in each
// bucket's (shrinkage: a bucket with few samples leans on the overall).
const Prior = 100

// ShareOf estimates the share of requests t matches in each bucket from
// samples, each bucket's own share shrunk toward the overall share by
// Prior samples.
func ShareOf(t *Targeting, samples []Sample) Shares {
	var n, m [Buckets]float64
	var all, hit, weights float64
	for i := range samples {
		weights += samples[i].weight()
	}
	unit := float64(len(samples)) / weights // weights as counts of samples: the prior weighs against those
	for i := range samples {
		b, w := bucket(samples[i].At), samples[i].weight()*unit
		n[b] += w
		all += w
		if t.Matches(&samples[i]) {
			m[b] += w
			hit += w
		}
	}
	var out Shares
	if all == 0 {
		return out
	}
	overall := hit / all
	for b := range out.P {
		out.P[b], out.N[b] = (m[b]+Prior*overall)/(n[b]+Prior), n[b]+Prior
	}
	return out
}

// Matching is the forecast of the requests t matches over [from, to):
// each hour's requests (f) times the share of its bucket. Its 80% range
// adds up the errors as they move together: the week's total's (shared
// by every hour of a week), each day's share of its week's (shared by the
// hours of the day), each hour's share of its day's (its own), and each
// bucket's share's sampling error (binomial, from the samples it was read
// from; shared by the bucket's hours). Known counts (a Series) have no
// error of their own.
func Matching(f Hours, shares *Shares, from, to time.Time) Point {
	fitted, _ := f.(*Fitted)
	declared, _ := f.(*Declared)
	var mean, week, day, variance float64
	var shareErr [Buckets]float64
	today := time.Time{}
	for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		if d := h.UTC().Truncate(24 * time.Hour); !d.Equal(today) {
			variance += day * day
			today, day = d, 0
		}
		b := bucket(h)
		s := shares.P[b]
		var x float64
		var e relErrors
		if fitted != nil {
			x, e = fitted.errors(h)
		} else {
			x = f.Hour(h).Mean
		}
		if declared != nil {
			e.week = DeclaredSpread / z80 // one estimate, shared by every hour
		}
		m := x * s
		mean += m
		week += m * e.week
		day += m * e.day
		variance += (m * e.hour) * (m * e.hour)
		if s > 0 && shares.N[b] > 0 {
			shareErr[b] += m * math.Sqrt(s*(1-s)/shares.N[b]) / s
		}
	}
	variance += day*day + week*week
	for b := range shareErr {
		variance += shareErr[b] * shareErr[b]
	}
	sd := math.Sqrt(variance)
	return Point{Mean: mean, Low: math.Max(0, mean-z80*sd), High: mean + z80*sd}
}
