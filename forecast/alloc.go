package forecast

import (
	"math"
	"time"

	"marquee"
)

// Contention: who wins the requests a forecast expects. Allocate runs the
// decision engine's rules over the forecast hours as a fluid — each
// sampled request carries its share of its placement's forecast volume
// for the hour, and each hour the tiers take it in turn, as Decide does:
//
//   - a higher tier takes first, whatever the lower ones want;
//   - within a tier, the campaigns that may serve share each request by
//     weight (remnant by eCPM when the engine competes on it: the highest
//     takes it, equal ones share by weight);
//   - a campaign with a goal takes no more than its pacing lets it: even
//     pacing, the straight line of its total (and of its daily amount,
//     by UTC day) up to the end of the hour, less what it delivered;
//     asap, what is left of its goal; what it leaves goes to the others
//     of its tier (water-filling), then to the tiers below;
//   - a campaign serves only inside its flight.
//
// What it leaves out, written in docs/api.md#forecasts: frequency caps
// (a capped campaign's figure is an upper bound), competitive exclusion
// and roadblocks between the slots of one page, and the share of
// decisions that never render.

// Campaign is a campaign a forecast allocates requests to: booked, or
// the one proposed.
type Campaign struct {
	ID     int64
	Name   string
	Tier   int // its priority's index in marquee.Priorities (0: the highest)
	Weight int
	ECPM   int64 // remnant by eCPM: what it earns a thousand impressions, in micros
	// From, To: its flight.
	From, To time.Time
	// Goal and Daily: decisions it wants over its flight, and a UTC day
	// (0: no limit); Delivered, what it has delivered of Goal already and
	// Today, of Daily today (before the hours allocated).
	Goal, Daily      float64
	Delivered, Today float64
	ASAP             bool
	Targeting        *Targeting
	// TargetFrom says what sets Goal and Daily: TargetGoal (an
	// impressions goal) or TargetBudget (a budget at a CPM price: what is
	// left ÷ the price × 1,000); "": no limit.
	TargetFrom string
}

// What sets a campaign's target in decisions (Campaign.TargetFrom).
const (
	TargetGoal   = "goal"
	TargetBudget = "budget"
)

// wants is how much more c may take in the hour starting at hourStart
// (+Inf: no limit), having won won over the window and today this UTC
// day: its pacing's line at the hour's end, less what it delivered.
func (c *Campaign) wants(hourStart time.Time, won, today float64) float64 {
	end := hourStart.Add(time.Hour)
	need := math.Inf(1)
	if c.Goal > 0 {
		line := c.Goal
		if !c.ASAP {
			line = c.Goal * marquee.Elapsed(c.From, c.To, end)
		}
		need = line - c.Delivered - won
	}
	if c.Daily > 0 {
		line := c.Daily
		if !c.ASAP {
			day := hourStart.UTC().Truncate(24 * time.Hour)
			line = c.Daily * marquee.Elapsed(day, day.Add(24*time.Hour), end)
		}
		need = math.Min(need, line-today)
	}
	return math.Max(0, need)
}

// Hours forecasts the requests of any hour: a Fitted model, a Declared
// volume, or a Series of known counts.
type Hours interface {
	Hour(t time.Time) Point
}

// Hour is the count of the hour starting at t (0 outside s): known
// traffic, its range empty.
func (s Series) Hour(t time.Time) Point {
	i := int(t.Sub(s.Start) / time.Hour)
	if t.Before(s.Start) || i >= len(s.Counts) {
		return Point{}
	}
	c := s.Counts[i]
	return Point{Mean: c, Low: c, High: c}
}

// Inventory is what forecasts read: each placement's hourly requests
// (fitted, or known) and a sample of past requests.
type Inventory struct {
	Hourly  map[string]Hours
	Samples []Sample
	// Low says, by placement, why its forecast is of low confidence (a
	// short history, a declared volume, no samples); none: measured.
	Low map[string]string
}

// Allocation is what each campaign (in the order given) won over the
// window, and the requests it matched there (its flight's hours); Shared
// and SharedWon, those of the requests the focus targeting matches too;
// Unsold, the requests the focus targeting matches that the guaranteed
// tiers (sponsorship, standard) leave.
type Allocation struct {
	Won, Matched      []float64
	Shared, SharedWon []float64
	Unsold            float64
}

// MaxGroup bounds the samples an allocation reads of one placement and
// bucket (chosen evenly among them, their weight kept): its cost is at
// most MaxGroup × buckets × placements samples × the campaigns each
// matches × the window's hours.
const MaxGroup = 64

// group is the samples of one bucket an allocation reads, with each one's
// share of its placement's hourly volume.
type group struct {
	placement []int     // index in placements
	share     []float64 // of its placement's volume in an hour of the bucket
	focus     []bool    // the focus campaign matches it
	// the campaigns each sample matches, by tier: pairs[t] lists (sample,
	// campaign) of tier t.
	pairs [][]pair
}

type pair struct{ s, c int32 }

// Allocate allocates the requests of [from, to) among cs by the engine's
// rules (see the top of this file); remnantByECPM says the remnant tier
// competes on eCPM; focus is the targeting whose requests Shared and
// Unsold count (nil: none).
func (inv *Inventory) Allocate(cs []Campaign, from, to time.Time, remnantByECPM bool, focus *Targeting) Allocation {
	from, to = from.Truncate(time.Hour), to.Truncate(time.Hour)
	tiers := 0
	for i := range cs {
		tiers = max(tiers, cs[i].Tier+1)
	}
	placements, fitted := []string{}, []Hours{}
	pIndex := map[string]int{}
	for name, f := range inv.Hourly {
		pIndex[name] = len(placements)
		placements, fitted = append(placements, name), append(fitted, f)
	}
	groups := inv.groups(cs, pIndex, tiers, focus)
	out := Allocation{Won: make([]float64, len(cs)), Matched: make([]float64, len(cs)), Shared: make([]float64, len(cs)), SharedWon: make([]float64, len(cs))}
	today := make([]float64, len(cs))
	need := make([]float64, len(cs))
	vol := make([]float64, len(placements))
	var avail, weight, top, prop, takes []float64
	prop = make([]float64, len(cs))
	day := time.Time{}
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		if d := h.UTC().Truncate(24 * time.Hour); !d.Equal(day) {
			day = d
			clear(today)
		}
		g := &groups[bucket(h)]
		if len(g.share) == 0 {
			continue
		}
		for p := range fitted {
			vol[p] = fitted[p].Hour(h).Mean
		}
		avail = append(avail[:0], make([]float64, len(g.share))...)
		for s := range avail {
			avail[s] = vol[g.placement[s]] * g.share[s]
		}
		weight, top = grow(weight, len(avail)), grow(top, len(avail))
		for i := range cs {
			need[i] = 0
			if !h.Before(cs[i].From) && h.Before(cs[i].To) {
				need[i] = cs[i].wants(h, out.Won[i], today[i])
			}
		}
		for _, pairs := range g.pairs { // what each matches, before any tier takes
			for _, p := range pairs {
				if !h.Before(cs[p.c].From) && h.Before(cs[p.c].To) {
					out.Matched[p.c] += avail[p.s]
					if g.focus[p.s] {
						out.Shared[p.c] += avail[p.s]
					}
				}
			}
		}
		for t := range max(len(g.pairs), remnantTier+1) {
			if t == remnantTier {
				for s := range avail {
					if g.focus[s] {
						out.Unsold += avail[s]
					}
				}
			}
			if t >= len(g.pairs) {
				continue
			}
			pairs := g.pairs[t]
			byECPM := remnantByECPM && t == remnantTier
			// Water-filling: the campaigns that want more share each
			// request by weight; one whose share exceeds its need takes
			// its need (the same part of each request); the rest is
			// shared again among those that still want more.
			for range 8 {
				clear(weight)
				clear(top)
				wanted := false
				for _, p := range pairs {
					if need[p.c] > 0 && avail[p.s] > 0 {
						wanted = true
						if byECPM {
							top[p.s] = math.Max(top[p.s], float64(cs[p.c].ECPM)+1)
						}
					}
				}
				if !wanted {
					break
				}
				for _, p := range pairs {
					if need[p.c] > 0 && avail[p.s] > 0 && (!byECPM || float64(cs[p.c].ECPM)+1 == top[p.s]) {
						weight[p.s] += float64(cs[p.c].Weight)
					}
				}
				clear(prop)
				share := func(p pair) float64 {
					if need[p.c] <= 0 || avail[p.s] <= 0 || weight[p.s] == 0 || byECPM && float64(cs[p.c].ECPM)+1 != top[p.s] {
						return 0
					}
					return avail[p.s] * float64(cs[p.c].Weight) / weight[p.s]
				}
				for _, p := range pairs {
					prop[p.c] += share(p)
				}
				// What each pair takes, read before any is taken.
				capped := false
				takes = grow(takes, len(pairs))
				for k, p := range pairs {
					takes[k] = 0
					if x := share(p); x > 0 {
						f := math.Min(1, need[p.c]/prop[p.c])
						capped = capped || f < 1
						takes[k] = x * f
					}
				}
				for k, p := range pairs {
					if x := takes[k]; x > 0 {
						avail[p.s] -= x
						out.Won[p.c] += x
						today[p.c] += x
						if g.focus[p.s] {
							out.SharedWon[p.c] += x
						}
					}
				}
				for i := range cs {
					if prop[i] > 0 {
						need[i] -= math.Min(prop[i], need[i]) // what it took
					}
				}
				if !capped {
					break
				}
			}
		}
	}
	return out
}

// remnantTier is the remnant tier's index in marquee.Priorities.
var remnantTier = marquee.TierOf(marquee.PriorityRemnant)

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// groups sorts the samples into buckets, at most MaxGroup of a placement
// and bucket, each with its share of the placement's volume, and lists
// the campaigns each one matches.
func (inv *Inventory) groups(cs []Campaign, pIndex map[string]int, tiers int, focus *Targeting) []group {
	type key struct{ p, b int }
	by := map[key][]int{}
	for i := range inv.Samples {
		s := &inv.Samples[i]
		p, ok := pIndex[s.Placement]
		if !ok {
			continue
		}
		k := key{p, bucket(s.At)}
		by[k] = append(by[k], i)
	}
	groups := make([]group, Buckets)
	for b := range groups {
		groups[b].pairs = make([][]pair, tiers)
	}
	for k, idx := range by {
		if len(idx) > MaxGroup { // evenly spaced: the samples are in time order
			kept := make([]int, MaxGroup)
			for j := range kept {
				kept[j] = idx[j*len(idx)/MaxGroup]
			}
			idx = kept
		}
		kept := 0.0
		for _, i := range idx {
			kept += inv.Samples[i].weight()
		}
		g := &groups[k.b]
		for _, i := range idx {
			s := &inv.Samples[i]
			si := int32(len(g.share))
			g.placement = append(g.placement, k.p)
			g.share = append(g.share, s.weight()/kept)
			g.focus = append(g.focus, focus != nil && focus.Matches(s))
			for c := range cs {
				if cs[c].Targeting.Matches(s) {
					t := cs[c].Tier
					g.pairs[t] = append(g.pairs[t], pair{si, int32(c)})
				}
			}
		}
	}
	return groups
}
