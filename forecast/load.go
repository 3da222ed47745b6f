package forecast

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"marquee/reportrow"
	"marquee/reports"
)

// Source is what a forecast reads of the store: the requests counted by
// hour and placement, and the samples of them (reports.Samples).
type Source interface {
	RequestSums(ctx context.Context, q reportrow.RequestQuery) ([]reportrow.RequestRow, error)
	RequestSamples(ctx context.Context, from, to int64, placements []int64) ([]reportrow.RequestSample, error)
}

// Load reads the inventory of the m.Weeks weeks before now's hour: each
// placement's hourly requests (from its first hour with any: a placement
// younger than that is fitted on what it has), fitted by m, and every
// instance's samples, each weighing the requests it stands for. names are
// the placements by id (a placement not in it is left out); declared, the
// requests a day their publishers expect (expectedDailyRequests, by
// name): a placement with fewer than MinRangeWeeks weeks of history and a
// declared volume is forecast from both (Declared), one without samples
// from stand-ins (an upper bound for a targeted campaign), and the
// inventory says why its forecast is of low confidence (Low).
func Load(ctx context.Context, src Source, names map[int64]string, declared map[string]float64, now time.Time, m Model) (*Inventory, error) {
	to := now.UTC().Truncate(time.Hour)
	from := to.Add(-time.Duration(m.weeks()*Week) * time.Hour)
	rows, err := src.RequestSums(ctx, reportrow.RequestQuery{From: from.Unix(), To: to.Unix(), By: []string{"hour", "placement"}})
	if err != nil {
		return nil, err
	}
	hours := int(to.Sub(from) / time.Hour)
	counts := map[string][]float64{}
	for _, r := range rows {
		name, ok := names[r.Placement]
		i := int((r.Hour - from.Unix()) / 3600)
		if !ok || i < 0 || i >= hours {
			continue
		}
		if counts[name] == nil {
			counts[name] = make([]float64, hours)
		}
		counts[name][i] += float64(r.Requests())
	}
	inv := &Inventory{Hourly: map[string]Hours{}, Low: map[string]string{}}
	for name, c := range counts {
		first := slices.IndexFunc(c, func(x float64) bool { return x > 0 })
		if first < 0 {
			continue
		}
		f := m.Fit(Series{Start: from.Add(time.Duration(first) * time.Hour), Counts: c[first:]})
		seen, enough := len(c)-first, MinRangeWeeks*Week
		switch d := declared[name]; {
		case d > 0 && seen < enough:
			w := float64(seen) / float64(enough)
			inv.Hourly[name] = &Declared{PerHour: d / 24, Seen: f, Weight: w}
			inv.Low[name] = fmt.Sprintf("%s: %d hours of requests recorded, fewer than %d weeks: its declared %.0f requests a day weigh %.0f%%", name, seen, MinRangeWeeks, d, 100*(1-w))
		default:
			inv.Hourly[name] = f
			if f.Weeks < MinRangeWeeks {
				inv.Low[name] = fmt.Sprintf("%s: fewer than %d weeks of requests recorded: the range does not yet measure how weeks differ", name, MinRangeWeeks)
			}
		}
	}
	for name, d := range declared {
		if _, ok := inv.Hourly[name]; !ok && d > 0 {
			inv.Hourly[name] = &Declared{PerHour: d / 24}
			inv.Low[name] = fmt.Sprintf("%s: no requests recorded yet: the forecast reads its declared %.0f requests a day", name, d)
		}
	}
	samples, err := src.RequestSamples(ctx, from.Unix(), to.Unix(), nil)
	if err != nil {
		return nil, err
	}
	// Decoded first, then copied once into a slice of the right size (a
	// sample is a few hundred bytes: growing the slice cost a third of a
	// forecast). The rows come by placement: so do the samples.
	decoded := make([][]reports.Sample, len(samples))
	total := 0
	for i, r := range samples {
		if name, ok := names[r.Placement]; ok && inv.Hourly[name] != nil {
			decoded[i], _ = reports.DecodeSamples(r.Doc) // a row this build cannot read: the others serve
			total += len(decoded[i])
		}
	}
	inv.Samples = make([]Sample, 0, total)
	for i, r := range samples {
		if len(decoded[i]) == 0 {
			continue
		}
		w, name := math.Max(1, float64(r.Offered)/float64(len(decoded[i]))), names[r.Placement]
		for _, k := range decoded[i] {
			inv.Samples = append(inv.Samples, Sample{At: k.At, Placement: name, Viewer: k.Viewer, Keywords: k.Keywords, Weight: w})
		}
	}
	sampled := map[string]bool{}
	for i := range inv.Samples {
		sampled[inv.Samples[i].Placement] = true
	}
	for name, h := range inv.Hourly {
		if _, ok := h.(*Declared); ok && !sampled[name] {
			inv.Samples = append(inv.Samples, standIns(name)...)
			inv.Low[name] += "; no request of it sampled yet: a targeted campaign's forecast there is an upper bound"
		}
	}
	return inv, nil
}
