package delivery_test

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/fixture"
	"marquee/targeting"
	"marquee/targeting/targetingtest"
)

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// world is an engine over a catalog made with camp and ad.
type world struct {
	t         *testing.T
	e         *delivery.Engine
	campaigns []marquee.Campaign
	ads       []*marquee.Ad
	counters  *counters.Memory
}

func newWorld(t *testing.T) *world {
	c := counters.NewMemory(counters.DefaultMemory)
	return &world{t: t, e: delivery.New(c), counters: c}
}

// camp adds an active campaign of tier and weight.
func (w *world) camp(tier string, weight int, set func(*marquee.Campaign)) int64 {
	c := marquee.Campaign{ID: int64(len(w.campaigns) + 1), State: marquee.StateActive, CampaignInput: marquee.CampaignInput{
		AdvertiserID: 1, Name: "c", StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Priority: tier, Weight: weight, Pacing: marquee.PacingASAP}}
	if set != nil {
		set(&c)
	}
	w.campaigns = append(w.campaigns, c)
	return c.ID
}

// ad adds an active ad of campaign with an HTML creative of size.
func (w *world) ad(campaign int64, size string, set func(*marquee.Ad)) int64 {
	a := &marquee.Ad{ID: int64(len(w.ads) + 1), Title: "a", StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), CampaignID: campaign}
	if size != "" {
		a.Creative = &marquee.Creative{Type: marquee.CreativeHTML, HTML: "x"}
		var wd, h int
		for i, part := range []*int{&wd, &h} {
			*part = []int{300, 250}[i]
		}
		if size == "728x90" {
			wd, h = 728, 90
		}
		a.Creative.Width, a.Creative.Height = wd, h
	}
	if set != nil {
		set(a)
	}
	w.ads = append(w.ads, a)
	return a.ID
}

// ready loads the catalog into the index and the engine.
func (w *world) ready(placements ...marquee.Placement) {
	w.e.SetCampaigns(w.campaigns, placements)
	w.e.PutAds(w.ads, nil, true)
}

var side = marquee.Placement{ID: 1, PlacementInput: marquee.PlacementInput{Name: "side", Sizes: []string{"300x250"}, Types: marquee.CreativeTypes}}
var top = marquee.Placement{ID: 2, PlacementInput: marquee.PlacementInput{Name: "top", Sizes: []string{"728x90"}, Types: marquee.CreativeTypes}}

func slot(placement string, n int) []delivery.Slot {
	return []delivery.Slot{{Div: "d", Placement: placement, Count: n}}
}

// chosen returns the campaigns of n decisions of r.
func (w *world) chosen(r *delivery.Request, n int, rnd *rand.Rand) map[int64]int {
	got := map[int64]int{}
	for range n {
		for _, s := range w.e.Decide(context.Background(), r, now, rnd) {
			for _, c := range s {
				got[c.Campaign.ID]++
			}
		}
	}
	return got
}

// A higher tier always wins when it has an eligible ad; house fills only
// what nothing else does.
func TestTiers(t *testing.T) {
	w := newWorld(t)
	sponsor := w.camp(marquee.PrioritySponsorship, 1, nil)
	standard := w.camp(marquee.PriorityStandard, 1000, func(c *marquee.Campaign) { c.Conditions = []marquee.Condition{{Country: []string{"TW"}}} })
	house := w.camp(marquee.PriorityHouse, 1000, nil)
	w.ad(sponsor, "300x250", func(a *marquee.Ad) { a.Placements = []string{"side"} })
	w.ad(standard, "300x250", nil)
	w.ad(house, "300x250", nil)
	w.ad(house, "728x90", nil)
	w.ready(side, top)
	rnd := rand.New(rand.NewPCG(1, 1))
	if got := w.chosen(&delivery.Request{Slots: slot("side", 1), Viewer: targeting.ViewerOf(0, "", "TW", "")}, 1000, rnd); got[sponsor] != 1000 {
		t.Errorf("side for TW: %v; want the sponsorship every time", got)
	}
	if got := w.chosen(&delivery.Request{Slots: slot("top", 1), Viewer: targeting.ViewerOf(0, "", "TW", "")}, 200, rnd); got[house] != 200 {
		t.Errorf("top for TW: %v; want house (the others do not fit or may not run there)", got)
	}
	// Three slots: the sponsorship, then the standard (TW), then house.
	r := &delivery.Request{Slots: []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "side", Count: 1}, {Div: "c", Placement: "side", Count: 1}}, Viewer: targeting.ViewerOf(0, "", "TW", "")}
	out := w.e.Decide(context.Background(), r, now, rnd)
	if len(out) != 3 || len(out[0]) != 1 || out[0][0].Campaign.ID != sponsor || out[1][0].Campaign.ID != standard || out[2][0].Campaign.ID != house {
		t.Errorf("three side slots = %v; want sponsorship, standard, house", out)
	}
	// A fourth slot: nothing left (no ad or campaign twice in a request).
	r.Slots = append(r.Slots, delivery.Slot{Div: "d", Placement: "side", Count: 1})
	if out := w.e.Decide(context.Background(), r, now, rnd); len(out[3]) != 0 {
		t.Errorf("a fourth slot got %v; want it empty", out[3])
	}
	// An unknown placement fills nothing (the route refuses it first).
	if out := w.e.Decide(context.Background(), &delivery.Request{Slots: slot("nowhere", 2)}, now, rnd); len(out[0]) != 0 {
		t.Errorf("an unknown placement got %v", out[0])
	}
}

// Within a tier, shares follow the weights: within 1 point over 100,000.
func TestWeights(t *testing.T) {
	w := newWorld(t)
	weights := map[int64]int{}
	for _, wt := range []int{1, 2, 7, 90} {
		id := w.camp(marquee.PriorityStandard, wt, nil)
		weights[id] = wt
		w.ad(id, "300x250", nil)
		w.ad(id, "300x250", nil) // two ads: a campaign's chance is its weight, not its ads'
	}
	many := w.camp(marquee.PriorityStandard, 10, nil)
	weights[many] = 10
	for range 6 {
		w.ad(many, "300x250", nil) // six ads do not make a campaign six times as likely
	}
	w.ready(side)
	total := 0
	for _, wt := range weights {
		total += wt
	}
	const n = 100_000
	got := w.chosen(&delivery.Request{Slots: slot("side", 1)}, n, rand.New(rand.NewPCG(7, 7)))
	for id, wt := range weights {
		share, want := float64(got[id])/n, float64(wt)/float64(total)
		if math.Abs(share-want) > 0.01 {
			t.Errorf("campaign of weight %d: share %.4f; want %.2f ± 0.01", wt, share, want)
		}
	}
}

// TestWeightsWithTrees: among campaigns with targeting trees, those the
// request meets are chosen in proportion to their weights and the others
// never — whether most campaigns pass the filters (draws over every
// campaign, a miss where a filter left one out) or few do (draws among
// those the filters let through), through a key-value's part and the
// part of campaigns without an index key, with a paused campaign among
// those that meet it.
func TestWeightsWithTrees(t *testing.T) {
	one := 1.0
	for _, tc := range []struct {
		name   string
		others int // campaigns the request does not meet, of weight 50 each
	}{{"most meet", 1}, {"few meet", 60}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			weights := map[int64]int{}
			for i, wt := range []int{1, 2, 7, 90, 10} {
				tree := &marquee.Targeting{All: []marquee.Targeting{{Key: "section", In: []string{"news", "sport"}}, {Key: "score", Gte: &one}}}
				if i == 4 {
					tree = &marquee.Targeting{Key: "pos", NotIn: []string{"btf"}} // no index key: the open part
				}
				id := w.camp(marquee.PriorityStandard, wt, func(c *marquee.Campaign) { c.Targeting = tree })
				weights[id] = wt
				w.ad(id, "300x250", nil)
			}
			paused := w.camp(marquee.PriorityStandard, 400, func(c *marquee.Campaign) {
				c.Targeting = &marquee.Targeting{Key: "section", In: []string{"news"}}
				c.State = marquee.StatePaused
			})
			w.ad(paused, "300x250", nil)
			for i := range tc.others {
				var tree *marquee.Targeting
				if i%2 == 1 {
					tree = &marquee.Targeting{All: []marquee.Targeting{{Key: "section", In: []string{"news"}}, {Key: "score", Gte: &one}, {Key: "region", In: []string{"TW-TPE"}}}}
				} else {
					tree = &marquee.Targeting{Key: "section", In: []string{"arts"}}
				}
				w.ad(w.camp(marquee.PriorityStandard, 50, func(c *marquee.Campaign) { c.Targeting = tree }), "300x250", nil)
			}
			w.ready(side)
			total := 0
			for _, wt := range weights {
				total += wt
			}
			const n = 100_000
			req := &delivery.Request{Slots: slot("side", 1), Viewer: targeting.Viewer{
				KV: []targeting.KV{{Key: "pos", Value: "atf"}, {Key: "score", Value: "3"}, {Key: "section", Value: "news"}}}} // by key, as a compiled viewer holds them
			got := w.chosen(req, n, rand.New(rand.NewPCG(7, 8)))
			for id, k := range got {
				if _, ok := weights[id]; !ok {
					t.Errorf("campaign %d chosen %d times; want never (the request does not meet its tree, or it is paused)", id, k)
				}
			}
			for id, wt := range weights {
				share, want := float64(got[id])/n, float64(wt)/float64(total)
				if math.Abs(share-want) > 0.01 {
					t.Errorf("campaign of weight %d: share %.4f; want %.3f ± 0.01", wt, share, want)
				}
			}
		})
	}
}

// Within a campaign, its eligible ads are equally likely, and the others
// never chosen (the draw-and-check of an ad, then the full pass, as few
// are eligible).
func TestAdsOfACampaign(t *testing.T) {
	for _, ineligible := range []int{1, 9} {
		w := newWorld(t)
		c := w.camp(marquee.PriorityStandard, 1, nil)
		var ok []int64
		for range 3 {
			ok = append(ok, w.ad(c, "300x250", nil))
		}
		for range ineligible {
			w.ad(c, "300x250", func(a *marquee.Ad) { a.Conditions = []marquee.Condition{{Country: []string{"JP"}}} })
		}
		w.ready(side)
		const n = 30_000
		got := map[int64]int{}
		rnd := rand.New(rand.NewPCG(3, 3))
		for range n {
			for _, s := range w.e.Decide(context.Background(), &delivery.Request{Slots: slot("side", 1), Viewer: targeting.ViewerOf(0, "", "TW", "")}, now, rnd) {
				for _, ch := range s {
					got[ch.Ad.ID]++
				}
			}
		}
		for _, id := range ok {
			if share := float64(got[id]) / n; math.Abs(share-1.0/3) > 0.01 {
				t.Errorf("%d ineligible ads beside: eligible ad %d has share %.4f; want 0.333 ± 0.01", ineligible, id, share)
			}
		}
		if sum := got[ok[0]] + got[ok[1]] + got[ok[2]]; sum != n {
			t.Errorf("%d ineligible ads beside: %d of %d decisions chose an ad the country excludes", ineligible, n-sum, n)
		}
	}
}

// A cap is exact on one instance, per user; without a user key it cannot
// apply.
func TestCaps(t *testing.T) {
	w := newWorld(t)
	capped := w.camp(marquee.PrioritySponsorship, 1, func(c *marquee.Campaign) { c.FrequencyCap = &marquee.FrequencyCap{Count: 3, Window: "24h"} })
	other := w.camp(marquee.PriorityStandard, 1, nil)
	w.ad(capped, "300x250", nil)
	w.ad(other, "300x250", nil)
	w.ready(side)
	rnd := rand.New(rand.NewPCG(3, 3))
	for _, user := range []uint64{11, 12} {
		got := w.chosen(&delivery.Request{Slots: slot("side", 1), User: user}, 10, rnd)
		if got[capped] != 3 || got[other] != 7 {
			t.Errorf("user %d over 10 decisions: %v; want the capped campaign 3 times", user, got)
		}
	}
	if got := w.chosen(&delivery.Request{Slots: slot("side", 1)}, 10, rnd); got[capped] != 10 {
		t.Errorf("no user key: %v; want no cap", got)
	}
	if got, _ := w.counters.Reached(context.Background(), 11, now.Add(25*time.Hour), nil); len(got) != 0 {
		t.Errorf("a day later the user's reached caps are %v; want none", got)
	}
}

// Keywords and a campaign's own targeting filter its ads.
func TestCampaignTargetingAndKeywords(t *testing.T) {
	w := newWorld(t)
	sports := w.camp(marquee.PrioritySponsorship, 1, func(c *marquee.Campaign) {
		c.Keywords = []string{"sports"}
		c.Conditions = []marquee.Condition{{AgeStart: 20, AgeEnd: 30, Platform: []string{"ios"}}}
	})
	fallback := w.camp(marquee.PriorityHouse, 1, nil)
	w.ad(sports, "300x250", nil)
	w.ad(fallback, "300x250", nil)
	w.ready(side)
	rnd := rand.New(rand.NewPCG(5, 5))
	for _, c := range []struct {
		r    delivery.Request
		want int64
	}{
		{delivery.Request{Keywords: []string{"news", "sports"}, Viewer: targeting.ViewerOf(25, "", "", "ios")}, sports},
		{delivery.Request{Keywords: []string{"sports"}}, fallback},                                               // targeting fails closed: unknown age and platform match no restriction
		{delivery.Request{Keywords: []string{"sports"}, Viewer: targeting.ViewerOf(25, "", "", "")}, fallback},   // nor does an unknown platform alone
		{delivery.Request{Keywords: []string{"sports"}, Viewer: targeting.ViewerOf(0, "", "", "ios")}, fallback}, // nor an unknown age
		{delivery.Request{Keywords: []string{"news"}, Viewer: targeting.ViewerOf(25, "", "", "ios")}, fallback},
		{delivery.Request{Keywords: []string{"sports"}, Viewer: targeting.ViewerOf(40, "", "", "")}, fallback},
		{delivery.Request{Keywords: []string{"sports"}, Viewer: targeting.ViewerOf(0, "", "", "android")}, fallback},
	} {
		c.r.Slots = slot("side", 1)
		if out := w.e.Decide(context.Background(), &c.r, now, rnd); len(out[0]) != 1 || out[0][0].Campaign.ID != c.want {
			t.Errorf("Decide(%+v) = %v; want campaign %d", c.r, out, c.want)
		}
	}
}

// Against a slow reference over random catalogs and requests: the engine
// chooses only ads the reference finds eligible in the best tier, and
// every one of them in time.
func TestAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for round := range 200 {
		w := newWorld(t)
		for range 1 + r.IntN(6) {
			id := w.camp(marquee.Priorities[r.IntN(4)], 1+r.IntN(5), func(c *marquee.Campaign) {
				if r.IntN(3) == 0 {
					c.Conditions = []marquee.Condition{{Country: []string{"TW", "JP"}[:1+r.IntN(2)]}}
				}
				if r.IntN(4) == 0 {
					c.State = marquee.StatePaused
				}
			})
			for range 1 + r.IntN(3) {
				w.ad(id, []string{"300x250", "728x90", ""}[r.IntN(3)], func(a *marquee.Ad) {
					if r.IntN(3) == 0 {
						a.Conditions = []marquee.Condition{{Country: []string{"TW"}}}
					}
					if r.IntN(3) == 0 {
						a.Conditions = append(a.Conditions, marquee.Condition{Platform: []string{"ios", "web"}[:1+r.IntN(2)], AgeStart: r.IntN(40), AgeEnd: []int{0, 50}[r.IntN(2)],
							Gender: []string{"F"}[:r.IntN(2)]})
					}
					if r.IntN(4) == 0 {
						a.Placements = []string{"top"}
					}
				})
			}
		}
		w.ready(side, top)
		req := &delivery.Request{Slots: slot([]string{"side", "top"}[r.IntN(2)], 1), Viewer: targeting.ViewerOf(18+r.IntN(50), []string{"M", "F"}[r.IntN(2)], []string{"TW", "JP", "DE"}[r.IntN(3)], []string{"ios", "android"}[r.IntN(2)])}
		want := w.reference(req)
		seen := map[int64]bool{}
		for range 400 {
			out := w.e.Decide(context.Background(), req, now, r)
			if len(want) == 0 {
				if len(out[0]) != 0 {
					t.Fatalf("round %d: chose %d; the reference finds nothing eligible", round, out[0][0].Ad.ID)
				}
				continue
			}
			if len(out[0]) != 1 || !slices.Contains(want, out[0][0].Ad.ID) {
				t.Fatalf("round %d: chose %v; the reference's best-tier ads are %v", round, out[0], want)
			}
			seen[out[0][0].Ad.ID] = true
		}
		if len(seen) != len(want) {
			t.Errorf("round %d: chose %v over 400 decisions; want every one of %v", round, seen, want)
		}
	}
}

// reference is the eligible ads of the best tier for r, found by checking
// every ad and campaign one by one.
func (w *world) reference(r *delivery.Request) []int64 {
	pl := map[string]marquee.Placement{"side": side, "top": top}[r.Slots[0].Placement]
	best, tier := []int64(nil), 99
	for _, a := range w.ads {
		c := w.campaigns[a.CampaignID-1]
		matches := func(conds []marquee.Condition) bool {
			if len(conds) == 0 {
				return true
			}
			for _, cd := range conds {
				if (len(cd.Country) == 0 || slices.Contains(cd.Country, r.Viewer.CountryCode())) && (len(cd.Platform) == 0 || slices.Contains(cd.Platform, targeting.PlatformName(r.Viewer.Platform))) &&
					(len(cd.Gender) == 0 || slices.Contains(cd.Gender, targeting.GenderName(r.Viewer.Gender))) && (cd.AgeStart == 0 || r.Viewer.Age >= cd.AgeStart) && (cd.AgeEnd == 0 || r.Viewer.Age <= cd.AgeEnd) {
					return true
				}
			}
			return false
		}
		if c.State != marquee.StateActive || !matches(a.Conditions) || !matches(c.Conditions) || !pl.Accepts(a.Creative) ||
			len(a.Placements) > 0 && !slices.Contains(a.Placements, pl.Name) {
			continue
		}
		t := slices.Index(marquee.Priorities, c.Priority)
		switch {
		case t < tier:
			best, tier = []int64{a.ID}, t
		case t == tier:
			best = append(best, a.ID)
		}
	}
	return best
}

// Choosing allocates nothing per candidate: a decision over 2,000
// candidates allocates as much as one over 20.
func TestDecideAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random: allocation counts mean nothing under it")
	}
	allocs := func(ads int) float64 {
		w := newWorld(t)
		for i := range 20 {
			id := w.camp(marquee.PriorityStandard, 1+i, nil)
			for range ads / 20 {
				w.ad(id, "300x250", nil)
			}
		}
		w.ready(side)
		r := &delivery.Request{Slots: slot("side", 3)}
		rnd := rand.New(rand.NewPCG(1, 2))
		w.e.Decide(context.Background(), r, now, rnd)
		return testing.AllocsPerRun(200, func() { w.e.Decide(context.Background(), r, now, rnd) })
	}
	if few, many := allocs(20), allocs(2000); many > few {
		t.Errorf("a decision over 2,000 candidates allocates %.1f times; over 20, %.1f: want the same", many, few)
	}
}

func BenchmarkDecide(b *testing.B) {
	w := newWorld(&testing.T{})
	for i := range 1000 {
		id := w.camp(marquee.Priorities[i%4], 1+i%100, func(c *marquee.Campaign) {
			c.FrequencyCap = &marquee.FrequencyCap{Count: 5, Window: "24h"}
		})
		for range 10 {
			w.ad(id, []string{"300x250", "728x90"}[i%2], nil)
		}
	}
	w.ready(side, top)
	rnd := rand.New(rand.NewPCG(1, 2))
	slots := []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "top", Count: 1}, {Div: "c", Placement: "side", Count: 1}}
	b.Run("fresh", func(b *testing.B) {
		r := &delivery.Request{Slots: slots}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.User = uint64(1_000_000 + i)
			w.e.Decide(context.Background(), r, now, rnd)
		}
	})
	// The same page with five header-bidding bids a slot (each weighed
	// against the floor, the size and the campaign drawn).
	b.Run("bids", func(b *testing.B) {
		var bids []delivery.Bid
		for i := range 5 {
			bids = append(bids, delivery.Bid{Bidder: fmt.Sprint("bidder", i), CPM: int64(500_000 * (i + 1)), AdID: fmt.Append(nil, "pb", i), Size: "300x250"})
		}
		withBids := slices.Clone(slots)
		for i := range withBids {
			withBids[i].Bids = bids
		}
		r := &delivery.Request{Slots: withBids}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.User = uint64(1_000_000 + i)
			w.e.Decide(context.Background(), r, now, rnd)
		}
	})
	// A user who reached the cap of every campaign: what a decision costs
	// when history, not the catalog, is large (5,000 serves remembered).
	b.Run("capped", func(b *testing.B) {
		r := &delivery.Request{Slots: slots, User: 7}
		for n := 0; ; n++ {
			out := w.e.Decide(context.Background(), r, now, rnd)
			if len(out[0])+len(out[1])+len(out[2]) == 0 {
				break
			}
			if n > 10_000 {
				b.Fatal("the user never reached every cap")
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			if out := w.e.Decide(context.Background(), r, now, rnd); len(out[0])+len(out[1])+len(out[2]) != 0 {
				b.Fatal("a user at every cap was served")
			}
		}
	})
}

// paced is a world of one campaign with goal and pacing, flight [from, to).
func paced(t *testing.T, goal marquee.Goal, pacing string, from, to time.Time) (*world, int64) {
	w := newWorld(t)
	id := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
		c.Goal, c.Pacing, c.StartAt, c.EndAt = &goal, pacing, from, to
	})
	w.ad(id, "300x250", func(a *marquee.Ad) { a.StartAt, a.EndAt = from.Add(-time.Hour), to.Add(time.Hour) })
	w.ready(side)
	return w, id
}

// reportsOf plays the reports for pacing, as the server's do: what
// rendered (an impression fired and counted) reaches SetDelivered once
// lag has passed, read every refresh.
type reportsOf struct {
	w            *world
	id           int64
	lag, refresh time.Duration
	rendered     []time.Time
	last         time.Time
}

// decide decides at at, renders a chosen ad when render says so, and
// refreshes the reports when refresh has passed; it reports whether the
// campaign was chosen.
func (rp *reportsOf) decide(r *delivery.Request, at time.Time, rnd *rand.Rand, render bool) bool {
	if at.Sub(rp.last) >= rp.refresh {
		rp.last = at
		asOf := at.Add(-rp.lag)
		day := at.Truncate(24 * time.Hour)
		var d delivery.Delivered
		for _, t := range rp.rendered {
			if t.Before(asOf) {
				d.Total++
				if !t.Before(day) {
					d.Today++
				}
			}
		}
		rp.w.e.Pacing().SetDelivered(map[int64]delivery.Delivered{rp.id: d}, asOf)
	}
	out := rp.w.e.Decide(context.Background(), r, at, rnd)
	if len(out[0]) == 1 && render {
		rp.rendered = append(rp.rendered, at)
	}
	return len(out[0]) == 1
}

// Even pacing of a lifetime goal with unlimited traffic: a straight line,
// not the whole goal at once; the goal, whole, by the end — with reports
// 2 s behind, read every second.
func TestPacingLifetime(t *testing.T) {
	from := now
	w, id := paced(t, marquee.Goal{Metric: "impressions", Total: 600}, marquee.PacingEven, from, from.Add(10*time.Minute))
	rp := &reportsOf{w: w, id: id, lag: 2 * time.Second, refresh: time.Second}
	rnd := rand.New(rand.NewPCG(1, 1))
	r := &delivery.Request{Slots: slot("side", 1)}
	served, firstMinute := 0, 0
	for at := from.Add(50 * time.Millisecond); at.Before(from.Add(10 * time.Minute)); at = at.Add(100 * time.Millisecond) {
		if rp.decide(r, at, rnd, true) {
			served++
			if at.Before(from.Add(time.Minute)) {
				firstMinute++
			}
		}
	}
	if firstMinute < 55 || firstMinute > 65 {
		t.Errorf("first minute: %d served; want 55-65 of the 600", firstMinute)
	}
	if served != 600 {
		t.Errorf("by the end: %d served; want the goal, 600", served)
	}
}

// Even pacing of a daily goal: spread over the day's hours within 15%.
func TestPacingDaily(t *testing.T) {
	day := now.Truncate(24 * time.Hour)
	w, id := paced(t, marquee.Goal{Metric: "impressions", Daily: 2400}, marquee.PacingEven, day.Add(-time.Hour), day.Add(48*time.Hour))
	rp := &reportsOf{w: w, id: id, lag: 5 * time.Second, refresh: 5 * time.Second}
	rnd := rand.New(rand.NewPCG(2, 2))
	r := &delivery.Request{Slots: slot("side", 1)}
	var hours [24]int
	for at := day.Add(time.Second); at.Before(day.Add(24 * time.Hour)); at = at.Add(10 * time.Second) {
		if rp.decide(r, at, rnd, true) {
			hours[at.Sub(day)/time.Hour]++
		}
	}
	for h, n := range hours {
		if n < 85 || n > 115 {
			t.Errorf("hour %d: %d served; want 100 ± 15%%", h, n)
		}
	}
}

// Only the reports meet a goal: decisions hold a campaign back while
// their impressions may still come (GoalPending), never end it; a clicks
// goal reads the reports alone.
func TestGoalMetStops(t *testing.T) {
	w, id := paced(t, marquee.Goal{Metric: "impressions", Total: 5}, marquee.PacingASAP, now.Add(-time.Hour), now.Add(time.Hour))
	rnd := rand.New(rand.NewPCG(3, 3))
	r := &delivery.Request{Slots: slot("side", 1)}
	if got := w.chosen(r, 20, rnd); got[id] != 5 {
		t.Errorf("asap with a goal of 5: served %d of 20; want 5 (then held for the reports)", got[id])
	}
	if d, _ := w.e.Delivery(id, now); d.Why != delivery.GoalPending || *d.Delivered != 0 {
		t.Errorf("after 5 decisions and no report: %q, delivered %d; want %q and 0", d.Why, *d.Delivered, delivery.GoalPending)
	}
	w.e.Pacing().SetDelivered(map[int64]delivery.Delivered{id: {Total: 5}}, now.Add(time.Second))
	if d, _ := w.e.Delivery(id, now); d.Why != delivery.GoalMet {
		t.Errorf("once the reports count 5: %q; want %q", d.Why, delivery.GoalMet)
	}
	w2, id2 := paced(t, marquee.Goal{Metric: "clicks", Total: 100}, marquee.PacingASAP, now.Add(-time.Hour), now.Add(time.Hour))
	if got := w2.chosen(r, 3, rnd); got[id2] != 3 {
		t.Fatalf("a clicks goal not met: served %d of 3", got[id2])
	}
	w2.e.Pacing().SetDelivered(map[int64]delivery.Delivered{id2: {Total: 100}}, now)
	if got := w2.chosen(r, 3, rnd); got[id2] != 0 {
		t.Errorf("after the reports say the goal is met: served %d; want 0", got[id2])
	}
}

// Half the decisions never render: the impressions goal is still
// delivered in impressions (within 1%), about twice as many decisions
// later; and decisions of which none render (an anonymous flood) hold the
// campaign back only until the reports show it, never meet its goal.
func TestGoalInImpressionsNotDecisions(t *testing.T) {
	w, id := paced(t, marquee.Goal{Metric: "impressions", Total: 1000}, marquee.PacingASAP, now.Add(-time.Hour), now.Add(time.Hour))
	rp := &reportsOf{w: w, id: id, lag: 2 * time.Second, refresh: time.Second}
	rnd := rand.New(rand.NewPCG(4, 4))
	r := &delivery.Request{Slots: slot("side", 1)}
	decisions := 0
	at := now
	for ; at.Before(now.Add(30 * time.Minute)); at = at.Add(10 * time.Millisecond) {
		if rp.decide(r, at, rnd, rnd.IntN(2) == 0) {
			decisions++
		}
		if d, _ := w.e.Delivery(id, at); d.Why == delivery.GoalMet {
			break
		}
	}
	if n := len(rp.rendered); n < 1000 || n > 1010 {
		t.Errorf("rendered %d impressions of a goal of 1,000 (%d decisions); want 1,000-1,010", n, decisions)
	}
	if decisions < 1800 || decisions > 2200 {
		t.Errorf("%d decisions for 1,000 impressions at half rendered; want about 2,000", decisions)
	}

	w2, id2 := paced(t, marquee.Goal{Metric: "impressions", Total: 30}, marquee.PacingASAP, now.Add(-time.Hour), now.Add(time.Hour))
	rp2 := &reportsOf{w: w2, id: id2, lag: 2 * time.Second, refresh: time.Second}
	for i := range 40 {
		rp2.decide(r, now.Add(time.Duration(i)*time.Millisecond), rnd, false)
	}
	for i := range 5 { // the reports catch up: none of the 40 rendered
		rp2.decide(r, now.Add(time.Duration(i+3)*time.Second), rnd, false)
	}
	if d, _ := w2.e.Delivery(id2, now.Add(8*time.Second)); !d.Serving || *d.Delivered != 0 {
		t.Errorf("after 40 decisions that never rendered: serving %v (%q), delivered %d; want serving, 0 delivered", d.Serving, d.Why, *d.Delivered)
	}
}

// Three instances on one Redis, deciding for one user at once: the capped
// campaign is served exactly its cap in all, the rest goes to the other.
func TestCapsAcrossInstances(t *testing.T) {
	url := os.Getenv("MARQUEE_TEST_REDIS")
	if url == "" {
		t.Skip("MARQUEE_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0): caps across instances are not tested")
	}
	var prefix [6]byte
	crand.Read(prefix[:])
	var engines []*world
	var capped int64
	for range 3 {
		c, err := counters.NewRedis(url, "marquee-test:"+hex.EncodeToString(prefix[:])+":")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		w := newWorld(t)
		w.e = delivery.New(c)
		capped = w.camp(marquee.PrioritySponsorship, 1, func(c *marquee.Campaign) { c.FrequencyCap = &marquee.FrequencyCap{Count: 4, Window: "24h"} })
		other := w.camp(marquee.PriorityStandard, 1, nil)
		w.ad(capped, "300x250", nil)
		w.ad(other, "300x250", nil)
		w.ready(side)
		engines = append(engines, w)
	}
	var mu sync.Mutex
	served := map[int64]int{}
	var wg sync.WaitGroup
	for g := range 30 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			for range 10 {
				out := engines[g%3].e.Decide(context.Background(), &delivery.Request{Slots: slot("side", 1), User: 99}, now, rnd)
				mu.Lock()
				for _, ch := range out[0] {
					served[ch.Campaign.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if served[capped] != 4 || served[capped]+served[capped+1] != 300 {
		t.Errorf("300 decisions at once over three instances: %v; want the capped campaign exactly 4 times", served)
	}
}

// Remnant by eCPM: the highest eCPM among the eligible wins (a CPC price
// weighed by its measured click rate once the reports give one); equal
// eCPMs share by weight; a capped leader leaves the impression to the
// next; by weight (the default), prices do not matter.
func TestRemnantECPM(t *testing.T) {
	w := newWorld(t)
	price := func(model marquee.PriceModel, amount string) func(*marquee.Campaign) {
		m, err := marquee.ParseMicros(amount)
		if err != nil {
			t.Fatal(err)
		}
		return func(c *marquee.Campaign) { c.Price = &marquee.Price{Model: model, Amount: m} }
	}
	cpm := w.camp(marquee.PriorityRemnant, 1, price("cpm", "2"))
	cpc := w.camp(marquee.PriorityRemnant, 1, price("cpc", "0.5"))
	flat := w.camp(marquee.PriorityRemnant, 1, price("flat", "100"))
	capped := w.camp(marquee.PriorityRemnant, 1, func(c *marquee.Campaign) {
		price("cpm", "9")(c)
		c.FrequencyCap = &marquee.FrequencyCap{Count: 1, Window: "24h"}
	})
	for _, c := range []int64{cpm, cpc, flat, capped} {
		w.ad(c, "300x250", nil)
	}
	w.ready(side)
	rnd := rand.New(rand.NewPCG(5, 5))
	const n = 4000
	if got := w.chosen(&delivery.Request{Slots: slot("side", 1)}, n, rnd); got[cpm] < n/5 || got[cpc] < n/5 || got[flat] < n/5 {
		t.Fatalf("by weight: %v; want every campaign about a quarter", got)
	}
	if err := w.e.SetRemnant("price"); err == nil {
		t.Error(`SetRemnant("price") was accepted`)
	}
	if err := w.e.SetRemnant(delivery.RemnantECPM); err != nil {
		t.Fatal(err)
	}
	if got := w.chosen(&delivery.Request{Slots: slot("side", 1), User: 1}, 5, rnd); got[capped] != 1 || got[cpm] != 4 {
		t.Errorf("by eCPM, a user capped at 1: %v; want the CPM 9 once (its cap), then the CPM 2", got)
	}
	// CPC 0.5 at the prior's 0.1%: eCPM 0.5; at a measured 1%: eCPM 5.
	w.e.SetRates(map[int64]delivery.Rates{cpc: {Impressions: 99_000, Clicks: 999}})
	if got := w.chosen(&delivery.Request{Slots: slot("side", 1), User: 2}, 5, rnd); got[capped] != 1 || got[cpc] != 4 {
		t.Errorf("by eCPM, the CPC at a 1%% click rate: %v; want the CPM 9 once, then the CPC (eCPM 5 > 2)", got)
	}
	_, why := w.e.Explain(context.Background(), &delivery.Request{Slots: slot("side", 1), User: 3}, now, rnd, nil)
	status := map[int64]string{}
	for _, c := range why[0] {
		status[c.CampaignID] = fmt.Sprintf("%s %g", c.Status, c.ECPM)
	}
	if status[capped] != "chosen 9" || status[cpc] != delivery.Outbid+" 5" || status[cpm] != delivery.Outbid+" 2" || status[flat] != delivery.Outbid+" 0" {
		t.Errorf("explain by eCPM: %v; want the CPM 9 chosen, the others outbid with their eCPMs", status)
	}
	w.campaigns[cpm-1].Price.Amount = 5_000_000 // now equal to the CPC's eCPM: they share by weight
	w.campaigns[cpm-1].Weight = 3
	w.campaigns[capped-1].State = marquee.StatePaused
	w.ready(side)
	got := w.chosen(&delivery.Request{Slots: slot("side", 1)}, 20_000, rnd)
	if share := float64(got[cpm]) / 20_000; math.Abs(share-0.75) > 0.02 || got[flat] != 0 {
		t.Errorf("equal eCPMs of weights 3 and 1, the CPM 9 paused: %v; want the CPM 75%% ± 2, the flat never", got)
	}
}

// A campaign's delivery: this instance's decisions, over the last minute
// too, the serves that brought a user to its cap, and pacing's view.
func TestDelivery(t *testing.T) {
	w := newWorld(t)
	capped := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
		c.FrequencyCap = &marquee.FrequencyCap{Count: 3, Window: "24h"}
		c.Goal = &marquee.Goal{Metric: "impressions", Total: 1200}
		c.Pacing = marquee.PacingEven
	})
	w.ad(capped, "300x250", nil)
	idle := w.camp(marquee.PriorityHouse, 1, nil)
	w.ad(idle, "300x250", nil)
	w.ready(side)
	rnd := rand.New(rand.NewPCG(1, 1))
	for u := range uint64(10) {
		for range 5 { // three of the capped campaign, then the house one
			w.e.Decide(context.Background(), &delivery.Request{Slots: slot("side", 1), User: u + 1}, now, rnd)
		}
	}
	d, ok := w.e.Delivery(capped, now)
	// A flight of two hours, half gone: 600 expected by now.
	if !ok || d.Decisions != 30 || d.CapsReached != 10 || d.CapsReachedLastMinute != 10 || d.DecisionsPerSecond != 0.5 ||
		d.Delivered == nil || *d.Delivered != 0 || d.Estimated == nil || *d.Estimated != 30 || d.ExpectedByNow == nil || *d.ExpectedByNow != 600 || !d.Serving {
		t.Errorf("Delivery(capped) = %+v, %v; want 30 decisions (0.5/s over the minute), 10 caps reached, none reported and 30 estimated of 600 expected, serving", d, ok)
	}
	if d, _ := w.e.Delivery(capped, now.Add(2*time.Minute)); d.DecisionsPerSecond != 0 || d.Decisions != 30 || d.CapsReachedLastMinute != 0 {
		t.Errorf("two minutes later: %+v; want no recent decisions, the totals kept", d)
	}
	if d, _ := w.e.Delivery(idle, now); d.Decisions != 20 || d.CapsReached != 0 || d.Delivered != nil {
		t.Errorf("Delivery(house) = %+v; want its 20 decisions, no cap, no goal", d)
	}
	w.campaigns[capped-1].State = marquee.StatePaused
	w.ready(side)
	if d, _ := w.e.Delivery(capped, now); d.Decisions != 30 || d.Serving || d.Why != delivery.NotActive {
		t.Errorf("paused: %+v; want the counts kept across plans, not serving (%q)", d, delivery.NotActive)
	}
	if _, ok := w.e.Delivery(99, now); ok {
		t.Error("Delivery of an unknown campaign: ok")
	}
}

// When the counters do not answer (a Redis nobody listens on), a user's
// decision leaves capped campaigns out and serves the others: a cap holds
// even then. Without a user key no cap applies, and nothing is asked.
func TestCountersDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	down, err := counters.NewRedis("redis://"+addr+"/0", "t:")
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	e := delivery.New(down)
	w := &world{t: t, e: e}
	capped := w.camp(marquee.PrioritySponsorship, 1, func(c *marquee.Campaign) { c.FrequencyCap = &marquee.FrequencyCap{Count: 5, Window: "24h"} })
	free := w.camp(marquee.PriorityStandard, 1, nil)
	w.ad(capped, "300x250", nil)
	w.ad(free, "300x250", nil)
	w.ready(side)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond) // as a decision bounds its calls
	defer cancel()
	rnd := rand.New(rand.NewPCG(2, 2))
	if out := e.Decide(ctx, &delivery.Request{Slots: slot("side", 1), User: 7}, now, rnd); len(out[0]) != 1 || out[0][0].Campaign.ID != free {
		t.Errorf("counters down, a user: %v; want the uncapped campaign %d", out[0], free)
	}
	if out := e.Decide(ctx, &delivery.Request{Slots: slot("side", 1)}, now, rnd); len(out[0]) != 1 || out[0][0].Campaign.ID != capped {
		t.Errorf("counters down, no user key: %v; want the sponsorship %d (no cap applies)", out[0], capped)
	}
}

// remoteCounters are Memory seen as a shared server is (counters.Redis):
// no memo, caps learnt from refused takes rather than read first.
type remoteCounters struct{ m *counters.Memory }

func (r remoteCounters) Reached(ctx context.Context, user uint64, now time.Time, into []counters.Reached) ([]counters.Reached, error) {
	return r.m.Reached(ctx, user, now, into)
}

func (r remoteCounters) Take(ctx context.Context, user uint64, now time.Time, takes []counters.Take, took []int, reached []counters.Reached) ([]counters.Reached, error) {
	return r.m.Take(ctx, user, now, takes, took, reached)
}

// Caps against a reference: one user decides thousands of times, minutes
// apart, over 50 capped campaigns in two tiers (most capped by the day)
// and an uncapped house one, so that the user is often at every cap and
// campaigns come back as their windows pass; the caps change halfway. Every decision keeps every cap, and serves a
// lower tier only when each campaign of the higher tiers is at its cap —
// with the caps read first and remembered (in-process counters, the
// user's blocked set kept as a memo), and learnt from refusals (shared
// counters).
func TestCapsAgainstReference(t *testing.T) {
	for _, mode := range []string{"in-process", "shared"} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			if mode == "shared" {
				w.e = delivery.New(remoteCounters{w.counters})
			}
			rnd := rand.New(rand.NewPCG(7, 7))
			windows := map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour}
			for i := range 50 {
				tier := []string{marquee.PrioritySponsorship, marquee.PriorityStandard}[i%2]
				id := w.camp(tier, 1+rnd.IntN(5), func(c *marquee.Campaign) {
					c.StartAt, c.EndAt = now.Add(-time.Hour), now.Add(30*24*time.Hour)
					c.FrequencyCap = &marquee.FrequencyCap{Count: 1 + rnd.IntN(3), Window: "24h"}
					if i%10 == 0 {
						c.FrequencyCap = &marquee.FrequencyCap{Count: 1, Window: "1h"}
					}
				})
				w.ad(id, "300x250", func(a *marquee.Ad) { a.EndAt = now.Add(30 * 24 * time.Hour) })
			}
			house := w.camp(marquee.PriorityHouse, 1, func(c *marquee.Campaign) { c.EndAt = now.Add(30 * 24 * time.Hour) })
			w.ad(house, "300x250", func(a *marquee.Ad) { a.EndAt = now.Add(30 * 24 * time.Hour) })
			w.ready(side)
			tierOf := func(c marquee.Campaign) int { return slices.Index(marquee.Priorities, c.Priority) }
			served := map[int64][]time.Time{}
			within := func(id int64, at time.Time) int {
				c := w.campaigns[id-1]
				n := 0
				for _, s := range served[id] {
					if s.After(at.Add(-windows[c.FrequencyCap.Window])) {
						n++
					}
				}
				return n
			}
			at := now
			r := &delivery.Request{Slots: slot("side", 1), User: 99}
			house0 := 0
			defer func() { t.Logf("%d of 3000 decisions at every cap (the house campaign)", house0) }()
			for d := range 3000 {
				if d == 1500 { // the caps of a third of the campaigns raised by one
					for i := 0; i < 50; i += 3 {
						w.campaigns[i].FrequencyCap = &marquee.FrequencyCap{Count: w.campaigns[i].FrequencyCap.Count + 1, Window: w.campaigns[i].FrequencyCap.Window}
					}
					w.e.SetCampaigns(w.campaigns, []marquee.Placement{side})
				}
				at = at.Add(time.Duration(rnd.IntN(10)) * time.Minute)
				out := w.e.Decide(context.Background(), r, at, rnd)
				if len(out[0]) != 1 {
					t.Fatalf("decision %d: %d ads; want 1 (the house campaign is never capped)", d, len(out[0]))
				}
				chosen := w.campaigns[out[0][0].Campaign.ID-1]
				if chosen.ID == house {
					house0++
				}
				if chosen.FrequencyCap != nil {
					if n := within(chosen.ID, at); n >= chosen.FrequencyCap.Count {
						t.Fatalf("decision %d at %v: campaign %d served with %d serves in its window; its cap is %d", d, at, chosen.ID, n, chosen.FrequencyCap.Count)
					}
					served[chosen.ID] = append(served[chosen.ID], at)
				}
				for _, c := range w.campaigns {
					if c.FrequencyCap != nil && tierOf(c) < tierOf(chosen) && within(c.ID, at) < c.FrequencyCap.Count {
						t.Fatalf("decision %d at %v: campaign %d (%s) served while campaign %d (%s) had room (%d of %d)",
							d, at, chosen.ID, chosen.Priority, c.ID, c.Priority, within(c.ID, at), c.FrequencyCap.Count)
					}
				}
			}
		})
	}
}

// A user at every cap of a tier keeps the lists that had nothing for them
// skipped for at most exhaustFor (250 ms): a campaign whose flight starts
// meanwhile serves them within that.
func TestExhaustedListComesBack(t *testing.T) {
	w := newWorld(t)
	for range 20 {
		id := w.camp(marquee.PrioritySponsorship, 1, func(c *marquee.Campaign) { c.FrequencyCap = &marquee.FrequencyCap{Count: 1, Window: "24h"} })
		w.ad(id, "300x250", nil)
	}
	later := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) { c.StartAt = now.Add(time.Second) })
	w.ad(later, "300x250", nil)
	house := w.camp(marquee.PriorityHouse, 1, nil)
	w.ad(house, "300x250", nil)
	w.ready(side)
	rnd := rand.New(rand.NewPCG(5, 5))
	r := &delivery.Request{Slots: slot("side", 1), User: 3}
	at := now
	for range 20 { // the user reaches every sponsorship cap
		at = at.Add(time.Millisecond)
		w.e.Decide(context.Background(), r, at, rnd)
	}
	served := func(at time.Time) int64 { return w.e.Decide(context.Background(), r, at, rnd)[0][0].Campaign.ID }
	if got := served(now.Add(900 * time.Millisecond)); got != house {
		t.Fatalf("at every cap, before the standard campaign's flight: campaign %d; want the house one (%d)", got, house)
	}
	if got := served(now.Add(time.Second + 300*time.Millisecond)); got != later {
		t.Errorf("300 ms after the standard campaign's flight began: campaign %d; want it (%d): a list left out for the user is skipped 250 ms at most", got, later)
	}
}

// What a list had nothing for is remembered per set of targeting fields:
// a user at every cap whose requests from the US found nothing in a
// tier is served that tier's campaign for France the moment a request
// comes from France.
func TestExhaustedListByViewer(t *testing.T) {
	w := newWorld(t)
	for range 20 {
		id := w.camp(marquee.PrioritySponsorship, 1, func(c *marquee.Campaign) { c.FrequencyCap = &marquee.FrequencyCap{Count: 1, Window: "24h"} })
		w.ad(id, "300x250", nil)
	}
	fr := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) { c.Conditions = []marquee.Condition{{Country: []string{"FR"}}} })
	w.ad(fr, "300x250", nil)
	house := w.camp(marquee.PriorityHouse, 1, nil)
	w.ad(house, "300x250", nil)
	w.ready(side)
	rnd := rand.New(rand.NewPCG(5, 6))
	us := &delivery.Request{Slots: slot("side", 1), User: 3, Viewer: targeting.ViewerOf(0, "", "US", "")}
	at := now
	for range 25 {
		at = at.Add(time.Millisecond)
		if got := w.e.Decide(context.Background(), us, at, rnd)[0][0].Campaign.ID; got == fr {
			t.Fatalf("a request from the US was served the campaign for France")
		}
	}
	if got := w.e.Decide(context.Background(), us, at.Add(time.Millisecond), rnd)[0][0].Campaign.ID; got != house {
		t.Fatalf("at every cap, from the US: campaign %d; want the house one (%d)", got, house)
	}
	frReq := &delivery.Request{Slots: slot("side", 1), User: 3, Viewer: targeting.ViewerOf(0, "", "FR", "")}
	if got := w.e.Decide(context.Background(), frReq, at.Add(2*time.Millisecond), rnd)[0][0].Campaign.ID; got != fr {
		t.Errorf("at every cap, from France right after: campaign %d; want France's (%d)", got, fr)
	}
}

// A placement's default ad fills a slot nothing else fills, and only
// such a slot: its choice counts for no campaign, whether the ad is the
// ad contract's (no campaign) or a campaign's; it must fit the placement,
// and follows the ad's changes.
func TestDefaultAd(t *testing.T) {
	w := newWorld(t)
	capped := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) { c.FrequencyCap = &marquee.FrequencyCap{Count: 1, Window: "24h"} })
	w.ad(capped, "300x250", nil)
	house := &marquee.Ad{ID: 50, Title: "house", StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour),
		Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "house", Width: 300, Height: 250}}
	wide := &marquee.Ad{ID: 51, Title: "wide", StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour),
		Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "wide", Width: 728, Height: 90}}
	withDefault := side
	withDefault.DefaultAdID = house.ID
	topDefault := top
	topDefault.DefaultAdID = 1 // the capped campaign's own ad, which cannot fit the top
	w.ready(withDefault, topDefault)
	w.e.SetDefaultAds([]*marquee.Ad{house, wide})
	rnd := rand.New(rand.NewPCG(1, 9))
	r := &delivery.Request{Slots: []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "top", Count: 1}}, User: 4}
	first := w.e.Decide(context.Background(), r, now, rnd)
	if len(first[0]) != 1 || first[0][0].Default || first[0][0].Campaign.ID != capped {
		t.Fatalf("first decision: %+v; want the campaign's ad", first[0])
	}
	if len(first[1]) != 0 {
		t.Errorf("the top's default ad does not fit it (300x250 in 728x90): got %+v", first[1])
	}
	second := w.e.Decide(context.Background(), r, now, rnd)
	if len(second[0]) != 1 || !second[0][0].Default || second[0][0].Ad.ID != house.ID || second[0][0].Campaign != delivery.DefaultFill {
		t.Fatalf("at the campaign's cap: %+v; want the default ad, for no campaign", second[0])
	}
	// Edited: the default ad's window ends; deleted: nothing fills the slot.
	ended := *house
	ended.EndAt = now.Add(-time.Minute)
	w.e.PutAds([]*marquee.Ad{&ended}, nil, false)
	if got := w.e.Decide(context.Background(), r, now, rnd); len(got[0]) != 0 {
		t.Errorf("the default ad's window over: %+v; want nothing", got[0])
	}
	w.e.PutAds([]*marquee.Ad{house}, nil, false)
	if got := w.e.Decide(context.Background(), r, now, rnd); len(got[0]) != 1 || got[0][0].Ad.ID != house.ID {
		t.Errorf("the default ad back: %+v; want it", got[0])
	}
	w.e.PutAds(nil, []int64{house.ID}, false)
	if got := w.e.Decide(context.Background(), r, now, rnd); len(got[0]) != 0 {
		t.Errorf("the default ad deleted: %+v; want nothing", got[0])
	}
}

// Explain's chance of each ad is what decisions do: over 10,000 decisions
// of a campaign of weight 1 with three ads and one of weight 2 with one,
// each ad's measured share is within 2 points of its chance (1/9 for
// each of the three, 2/3 for the other).
func TestExplainChanceMatchesDecisions(t *testing.T) {
	w := newWorld(t)
	three := w.camp(marquee.PriorityStandard, 1, nil)
	one := w.camp(marquee.PriorityStandard, 2, nil)
	for range 3 {
		w.ad(three, "300x250", nil)
	}
	w.ad(one, "300x250", nil)
	w.ready(side)
	rnd := rand.New(rand.NewPCG(8, 8))
	r := &delivery.Request{Slots: slot("side", 1)}
	_, why := w.e.Explain(context.Background(), r, now, rnd, nil)
	chance := map[int64]float64{}
	for _, c := range why[0] {
		chance[c.AdID] = c.Chance
	}
	const n = 10_000
	got := map[int64]int{}
	for range n {
		got[w.e.Decide(context.Background(), r, now, rnd)[0][0].Ad.ID]++
	}
	for _, ad := range w.ads {
		measured := float64(got[ad.ID]) / n
		if math.Abs(measured-chance[ad.ID]) > 0.02 {
			t.Errorf("ad %d: explain's chance %.3f, measured %.3f over %d decisions; want within 2 points", ad.ID, chance[ad.ID], measured, n)
		}
	}
	if want := 2.0 / 3; math.Abs(chance[4]-want) > 1e-9 {
		t.Errorf("the one ad of the weight-2 campaign: chance %.3f; want %.3f", chance[4], want)
	}
}

// TestTreesAgainstReference: over random catalogs whose campaigns carry
// random targeting trees (in random time zones) and random viewers at
// random times, explain leaves out by campaign targeting exactly the
// campaigns the brute-force reference says the viewer fails (naming the
// rule), and decisions choose only campaigns it says the viewer meets.
func TestTreesAgainstReference(t *testing.T) {
	g := targetingtest.Gen{R: rand.New(rand.NewPCG(43, 2))}
	zones := []string{"", "America/New_York", "Europe/Berlin"}
	checked := 0
	for round := range 1300 {
		w := newWorld(t)
		trees := map[int64]*marquee.Targeting{}
		for range 8 {
			tree, tz := g.Tree(1), zones[g.R.IntN(len(zones))]
			id := w.camp(marquee.PriorityStandard, 1+g.R.IntN(5), func(c *marquee.Campaign) {
				c.Targeting, c.TimeZone = &tree, tz
				c.StartAt, c.EndAt = time.Time{}.Add(time.Hour), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
			})
			trees[id] = &tree
			w.ad(id, "300x250", func(a *marquee.Ad) {
				a.StartAt, a.EndAt = time.Time{}.Add(time.Hour), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
			})
		}
		pl := side
		pl.Site = targetingtest.Sites[g.R.IntN(2)]
		w.ready(pl)
		v := g.Viewer(now.AddDate(-1, 0, 0))
		v.Vals[marquee.KeySite] = []string{pl.Site}
		req := &delivery.Request{Slots: slot("side", 1), Viewer: targetingtest.Compiled(v)}
		meets := map[int64]bool{}
		for id, tree := range trees {
			loc, _ := marquee.ParseTimeZone(w.campaigns[id-1].TimeZone)
			meets[id] = targetingtest.Reference(tree, v, loc)
		}
		chosen, cands := w.e.Explain(context.Background(), req, v.At, g.R, nil)
		for _, c := range cands[0] {
			checked++
			if out := strings.HasPrefix(c.Status, delivery.NotTargeted); out == meets[c.CampaignID] || out && len(c.Status) <= len(delivery.NotTargeted)+2 {
				b, _ := json.Marshal(trees[c.CampaignID])
				t.Fatalf("round %d: campaign %d %s, viewer %v at %s: explain says %q; the reference says it meets the tree: %v",
					round, c.CampaignID, b, v.Vals, v.At, c.Status, meets[c.CampaignID])
			}
		}
		for _, ch := range chosen[0] {
			if !meets[ch.Campaign.ID] {
				t.Fatalf("round %d: chose campaign %d, which the reference says the viewer fails", round, ch.Campaign.ID)
			}
		}
		if len(chosen[0]) == 0 && slices.ContainsFunc(slices.Collect(maps.Values(meets)), func(b bool) bool { return b }) {
			t.Fatalf("round %d: chose nothing; the reference says %v meet their trees", round, meets)
		}
	}
	if checked < 10000 {
		t.Errorf("checked %d trees × viewers; want at least 10,000", checked)
	}
}

// TestAdTreeAndSlots: an ad's tree narrows its campaign's, its day-parts
// read in the campaign's time zone; a slot's key-values replace the
// page's of the same key; $site is the slot's placement's.
func TestAdTreeAndSlots(t *testing.T) {
	w := newWorld(t)
	sports := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
		c.Targeting, c.TimeZone = &marquee.Targeting{Key: "section", In: []string{"sports"}}, "America/New_York"
	})
	morning := w.ad(sports, "300x250", func(a *marquee.Ad) {
		a.Targeting = &marquee.Targeting{DayPart: &marquee.DayPart{From: "07:00", To: "08:00"}} // 12:00–13:00 UTC in November
	})
	onBlog := w.camp(marquee.PriorityHouse, 1, func(c *marquee.Campaign) {
		c.Targeting = &marquee.Targeting{Key: marquee.KeySite, In: []string{"blog"}}
	})
	blogAd := w.ad(onBlog, "728x90", nil)
	blogTop := top
	blogTop.Site = "blog"
	w.ready(side, blogTop)
	rnd := rand.New(rand.NewPCG(1, 2))
	page := []targeting.KV{{Key: "section", Value: "news"}}
	for _, c := range []struct {
		name  string
		kv    []targeting.KV // the slot's
		place string
		want  int64
	}{
		{"page section news", nil, "side", 0},
		{"slot section sports", []targeting.KV{{Key: "section", Value: "sports"}}, "side", morning},
		{"blog site", nil, "top", blogAd},
	} {
		r := &delivery.Request{Slots: []delivery.Slot{{Div: "d", Placement: c.place, Count: 1, KV: c.kv}}, Viewer: targeting.Viewer{KV: page}}
		out := w.e.Decide(context.Background(), r, now, rnd) // 12:00 UTC = 07:00 in New York
		var got int64
		if len(out[0]) > 0 {
			got = out[0][0].Ad.ID
		}
		if got != c.want {
			t.Errorf("%s: chose ad %d; want %d", c.name, got, c.want)
		}
	}
	r := &delivery.Request{Slots: []delivery.Slot{{Div: "d", Placement: "side", Count: 1, KV: []targeting.KV{{Key: "section", Value: "sports"}}}}}
	_, cands := w.e.Explain(context.Background(), r, now.Add(-30*time.Minute), rnd, nil) // 06:30 in New York
	for _, c := range cands[0] {
		if c.AdID == morning && c.Status != delivery.AdTargeting+": day-part: Wed 06:30 America/New_York outside every day 07:00–08:00" {
			t.Errorf("explain of the morning ad at 11:30 UTC: %q", c.Status)
		}
	}
}

// TestKeyValueIndex: campaigns indexed by a key-value are weighed only
// for requests of their values, at chances in proportion to their
// weights — a campaign reached through two of a request's values counts
// once — and beside the campaigns without an index key.
func TestKeyValueIndex(t *testing.T) {
	w := newWorld(t)
	in := func(vals ...string) func(*marquee.Campaign) {
		return func(c *marquee.Campaign) {
			c.Targeting = &marquee.Targeting{All: []marquee.Targeting{{Key: "tags", In: vals}, {Key: "$device", NotIn: []string{"bot"}}}}
		}
	}
	ab := w.camp(marquee.PriorityStandard, 1, in("a", "b")) // reached through a and through b
	a := w.camp(marquee.PriorityStandard, 1, in("a"))
	c := w.camp(marquee.PriorityStandard, 2, in("c"))
	open := w.camp(marquee.PriorityStandard, 1, nil)
	for _, id := range []int64{ab, a, c, open} {
		w.ad(id, "300x250", nil)
	}
	w.ready(side)
	rnd := rand.New(rand.NewPCG(7, 7))
	r := &delivery.Request{Slots: slot("side", 1), Viewer: targeting.Viewer{KV: []targeting.KV{{Key: "tags", Value: "a"}, {Key: "tags", Value: "b"}}}}
	const n = 40000
	got := w.chosen(r, n, rnd)
	// ab, a and open weigh 1 each; c (not in the request) nothing.
	for _, id := range []int64{ab, a, open} {
		if share := float64(got[id]) / n; math.Abs(share-1.0/3) > 0.02 {
			t.Errorf("campaign %d chosen %.3f of the time; want 1/3 (chosen: %v)", id, share, got)
		}
	}
	if got[c] != 0 {
		t.Errorf("campaign %d (tags c) chosen %d times for tags a, b", c, got[c])
	}
	r.Viewer.KV = []targeting.KV{{Key: "tags", Value: "c"}}
	got = w.chosen(r, 30000, rnd)
	if share := float64(got[c]) / 30000; math.Abs(share-2.0/3) > 0.02 || got[ab]+got[a] != 0 {
		t.Errorf("for tags c: %v; want campaign %d 2/3 of the time, %d the rest", got, c, open)
	}
}

// BenchmarkSections: a decision for one section among campaigns each on
// another section costs what it costs among 10 campaigns (the campaigns
// are indexed by key-value).
func BenchmarkSections(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w := newWorld(nil)
			for i := range n {
				id := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
					c.Targeting = &marquee.Targeting{Key: "section", In: []string{fmt.Sprint("s", i)}}
				})
				w.ad(id, "300x250", nil)
			}
			w.ready(side)
			rnd := rand.New(rand.NewPCG(1, 1))
			reqs := make([]delivery.Request, 64)
			for i := range reqs {
				reqs[i] = delivery.Request{Slots: slot("side", 1), Viewer: targeting.Viewer{KV: []targeting.KV{{Key: "section", Value: fmt.Sprint("s", rnd.IntN(n))}}}}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if out := w.e.Decide(context.Background(), &reqs[i%len(reqs)], now, rnd); len(out[0]) != 1 {
					b.Fatal("nothing chosen")
				}
				i++
			}
		})
	}
}

// BenchmarkDecideRules: decisions over 1,000 campaigns that each carry
// a six-rule tree (fixture.RulesTree), against the same requests over
// campaigns without trees — what targeting costs a decision.
func BenchmarkDecideRules(b *testing.B) {
	for _, rules := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "rules"}[rules], func(b *testing.B) {
			w := newWorld(nil)
			r := rand.New(rand.NewPCG(3, 4))
			for i := range 1000 {
				id := w.camp(marquee.Priorities[i%4], 1+i%100, func(c *marquee.Campaign) {
					if rules {
						c.Targeting = fixture.RulesTree(r)
					}
				})
				w.ad(id, []string{"300x250", "728x90"}[i%2], nil)
			}
			w.ready(side, top)
			reqs := make([]delivery.Request, 256)
			for i := range reqs {
				pos := "atf"
				if r.IntN(4) == 0 {
					pos = "btf"
				}
				kv := []targeting.KV{{Key: "pos", Value: pos}, {Key: "score", Value: fmt.Sprint(r.IntN(10))}, {Key: "section", Value: fixture.Sections[r.IntN(8)]}}
				reqs[i] = delivery.Request{Slots: []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "top", Count: 1}},
					Viewer: targeting.Viewer{KV: kv, Region: fixture.Regions[r.IntN(8)], Device: "desktop"}, User: uint64(i + 1)}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				w.e.Decide(context.Background(), &reqs[i%len(reqs)], now, r)
				i++
			}
		})
	}
}

// Each slot's outcome says what filled it, or the furthest check any
// candidate failed: one scenario per reason.
func TestOutcomes(t *testing.T) {
	user := uint64(7)
	for _, tc := range []struct {
		name  string
		setup func(w *world) []marquee.Placement
		req   delivery.Request
		runs  int // decisions before the one checked
		want  []marquee.Outcome
	}{
		{"no campaign", func(w *world) []marquee.Placement { return []marquee.Placement{side} },
			delivery.Request{Slots: slot("side", 1)}, 0, []marquee.Outcome{marquee.NoCandidate}},
		{"wrong size", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, nil), "728x90", nil)
			return []marquee.Placement{side, top}
		}, delivery.Request{Slots: slot("side", 1)}, 0, []marquee.Outcome{marquee.WrongSize}},
		{"filled and house", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, nil), "300x250", nil)
			def := w.ad(0, "728x90", nil)
			t := top
			t.DefaultAdID = def
			return []marquee.Placement{side, t}
		}, delivery.Request{Slots: []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "top", Count: 1}}}, 0,
			[]marquee.Outcome{marquee.Filled, marquee.House}},
		{"not running", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) { c.StartAt = now.Add(time.Minute) }), "300x250", nil)
			return []marquee.Placement{side}
		}, delivery.Request{Slots: slot("side", 1)}, 0, []marquee.Outcome{marquee.NotRunning}},
		{"untargeted", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
				c.Conditions = []marquee.Condition{{Country: []string{"TW"}}}
			}), "300x250", nil)
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) { c.StartAt = now.Add(time.Minute) }), "300x250", nil)
			return []marquee.Placement{side}
		}, delivery.Request{Slots: slot("side", 1), Viewer: targeting.ViewerOf(0, "", "JP", "")}, 0, []marquee.Outcome{marquee.Untargeted}},
		{"untargeted by a tree", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
				c.Targeting = &marquee.Targeting{Key: "section", In: []string{"sport"}}
			}), "300x250", nil)
			return []marquee.Placement{side}
		}, delivery.Request{Slots: slot("side", 1)}, 0, []marquee.Outcome{marquee.Untargeted}},
		{"in request", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, nil), "300x250", nil)
			return []marquee.Placement{side}
		}, delivery.Request{Slots: []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "side", Count: 1}}}, 0,
			[]marquee.Outcome{marquee.Filled, marquee.InRequest}},
		{"capped", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
				c.FrequencyCap = &marquee.FrequencyCap{Count: 1, Window: "day"}
			}), "300x250", nil)
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
				c.Conditions = []marquee.Condition{{Country: []string{"TW"}}}
			}), "300x250", nil)
			return []marquee.Placement{side}
		}, delivery.Request{Slots: slot("side", 1), User: user}, 1, []marquee.Outcome{marquee.CappedOut}},
		{"goal met", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
				c.Goal = &marquee.Goal{Metric: "impressions", Total: 1}
			}), "300x250", nil)
			return []marquee.Placement{side}
		}, delivery.Request{Slots: slot("side", 1)}, 1, []marquee.Outcome{marquee.GoalReached}},
		{"paced", func(w *world) []marquee.Placement {
			w.ad(w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
				c.Goal, c.Pacing = &marquee.Goal{Metric: "impressions", Total: 1000}, marquee.PacingEven
				c.StartAt, c.EndAt = now.Add(-time.Minute), now.Add(30*24*time.Hour)
			}), "300x250", nil)
			return []marquee.Placement{side}
		}, delivery.Request{Slots: slot("side", 1)}, 5, []marquee.Outcome{marquee.PacedOut}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			pls := tc.setup(w)
			w.ready(pls...)
			rnd := rand.New(rand.NewPCG(1, 2))
			r := tc.req
			for range tc.runs {
				w.e.Decide(context.Background(), &r, now, rnd)
			}
			got := make([]marquee.Outcome, len(r.Slots))
			w.e.DecideOutcomes(context.Background(), &r, now, rnd, got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("outcomes = %v; want %v", got, tc.want)
			}
		})
	}
}
