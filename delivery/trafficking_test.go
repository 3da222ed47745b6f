package delivery_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"marquee"
	"marquee/delivery"
	"marquee/targeting"
)

// Trafficking in decisions: competitive exclusion, roadblocks, rotation.

var bottom = marquee.Placement{ID: 3, PlacementInput: marquee.PlacementInput{Name: "bottom", Sizes: []string{"300x250"}, Types: marquee.CreativeTypes}}

// page is a request for the three placements side, top and bottom, one ad
// each, for user (0: none).
func page(user uint64) *delivery.Request {
	return &delivery.Request{User: user, Slots: []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "top", Count: 1},
		{Div: "c", Placement: "bottom", Count: 1}}}
}

// TestCompetitiveExclusion: over 10,000 decisions of a three-slot page
// among airlines, car makers and others (some marking their label
// exclusive, some not; weights mixed), no page ever shows two
// campaigns sharing a label either marks exclusive — while pages do show
// an airline beside a car maker, and two campaigns sharing a label no one
// marks exclusive.
func TestCompetitiveExclusion(t *testing.T) {
	w := newWorld(t)
	labels := map[int64][]marquee.Label{}
	for i, l := range [][]marquee.Label{
		{{Name: "airline", Exclusive: true}}, {{Name: "airline", Exclusive: true}}, {{Name: "airline"}},
		{{Name: "auto", Exclusive: true}, {Name: "sports"}}, {{Name: "auto"}}, {{Name: "sports"}}, {{Name: "sports"}}, nil,
	} {
		id := w.camp(marquee.PriorityStandard, 1+i%4, func(c *marquee.Campaign) { c.Labels = l })
		labels[id] = l
		w.ad(id, "300x250", nil)
		w.ad(id, "728x90", nil)
	}
	w.ready(side, top, bottom)
	rnd := rand.New(rand.NewPCG(4, 6))
	together := map[string]int{}
	for range 10_000 {
		var camps []int64
		for _, s := range w.e.Decide(context.Background(), page(0), now, rnd) {
			for _, ch := range s {
				camps = append(camps, ch.Campaign.ID)
			}
		}
		for i, a := range camps {
			for _, b := range camps[i+1:] {
				for _, la := range labels[a] {
					for _, lb := range labels[b] {
						if la.Name == lb.Name && (la.Exclusive || lb.Exclusive) {
							t.Fatalf("a page shows campaigns %d and %d, sharing %q (exclusive)", a, b, la.Name)
						}
						if la.Name == lb.Name {
							together[la.Name]++
						}
					}
				}
			}
		}
		if len(camps) > 1 {
			together["any"]++
		}
	}
	if together["sports"] == 0 || together["any"] < 9000 {
		t.Errorf("pages with two campaigns: %d of 10,000, with two sports campaigns: %d; want most pages full, and sports (never exclusive) shared", together["any"], together["sports"])
	}
}

// roadblockWorld is a sponsorship roadblock of kind over side, top and
// bottom (an ad limited to each; one more without placements, which never
// serves), and a standard campaign with an ad for every placement.
func roadblockWorld(t *testing.T, kind string) (*world, int64, int64) {
	w := newWorld(t)
	road := w.camp(marquee.PrioritySponsorship, 1, func(c *marquee.Campaign) { c.Roadblock = kind })
	for _, p := range []marquee.Placement{side, top, bottom} {
		w.ad(road, p.Sizes[0], func(a *marquee.Ad) { a.Placements = []string{p.Name} })
	}
	w.ad(road, "300x250", nil)
	filler := w.camp(marquee.PriorityStandard, 1, nil)
	w.ad(filler, "300x250", nil)
	w.ad(filler, "728x90", nil)
	return w, road, filler
}

// TestRoadblockAllOrNone: a roadblock fills the three placements of a
// page together or not at all — never part of them — over 10,000
// decisions with the roadblock's side ad now and then out of reach (an
// ad's window), frequency caps that count a roadblock once, and pages
// missing one of its placements (where it never serves).
func TestRoadblockAllOrNone(t *testing.T) {
	w, road, _ := roadblockWorld(t, marquee.RoadblockAllOrNone)
	w.campaigns[road-1].FrequencyCap = &marquee.FrequencyCap{Count: 3, Window: "24h"}
	w.ads[0].Conditions = []marquee.Condition{{Country: []string{"TW"}}} // the side ad: Taiwan only
	w.ready(side, top, bottom)
	rnd := rand.New(rand.NewPCG(1, 2))
	full, none := 0, 0
	for i := range 10_000 {
		r := page(uint64(1 + i%500))
		r.Viewer = targeting.ViewerOf(30, "F", []string{"TW", "DE"}[i%2], "web")
		if i%7 == 0 {
			r.Slots = r.Slots[:2] // no bottom
		}
		n := 0
		for _, s := range w.e.Decide(context.Background(), r, now, rnd) {
			for _, ch := range s {
				if ch.Campaign.ID == road {
					n++
				}
			}
		}
		switch {
		case n == 0:
			none++
		case n == len(r.Slots) && len(r.Slots) == 3:
			full++
		default:
			t.Fatalf("decision %d (%d slots, %s): the roadblock fills %d of its placements; want all or none", i, len(r.Slots), r.Viewer.CountryCode(), n)
		}
	}
	// The roadblock fills Taiwan's full pages up to the cap: 3 per user of
	// the 250 in Taiwan (users 2, 4, …: even i ↔ TW, odd user numbers).
	if full != 3*250 {
		t.Errorf("full roadblocks: %d; want 750 (3 per Taiwanese user: the cap counts a roadblock once)", full)
	}
	_ = none
}

// TestRoadblockAsManyAsPossible fills what it can: a page without the
// bottom slot still gets the roadblock on side and top.
func TestRoadblockAsManyAsPossible(t *testing.T) {
	w, road, _ := roadblockWorld(t, marquee.RoadblockAsMany)
	w.ready(side, top, bottom)
	r := page(0)
	r.Slots = r.Slots[:2]
	out := w.e.Decide(context.Background(), r, now, rand.New(rand.NewPCG(1, 1)))
	for i, s := range out {
		if len(s) != 1 || s[0].Campaign.ID != road || !slices.Contains(s[0].Ad.Placements, r.Slots[i].Placement) {
			t.Fatalf("slot %s = %+v; want the roadblock's ad named for it", r.Slots[i].Placement, s)
		}
	}
	_, why := w.e.Explain(context.Background(), r, now, rand.New(rand.NewPCG(1, 1)), nil)
	for _, c := range why[0] {
		if c.AdID == 4 && c.Status != delivery.NotHere {
			t.Errorf("the roadblock's ad without placements: %q; want %q (a roadblock's ad fills the placements it names)", c.Status, delivery.NotHere)
		}
	}
}

// TestExplainRoadblockMissing: explain names the placements an
// all-or-none roadblock lacks in the request.
func TestExplainRoadblockMissing(t *testing.T) {
	w, road, _ := roadblockWorld(t, marquee.RoadblockAllOrNone)
	w.ready(side, top, bottom)
	_, why := w.e.Explain(context.Background(), &delivery.Request{Slots: slot("side", 1)}, now, rand.New(rand.NewPCG(1, 1)), nil)
	for _, c := range why[0] {
		if c.CampaignID == road && c.AdID == 1 && !strings.Contains(c.Status, "no slot of bottom, top") {
			t.Errorf("the roadblock's side ad in a side-only request: %q; want the missing placements named", c.Status)
		}
	}
}

// TestWeightedRotation: ads weighted 1, 3 and 6 take 10%, 30% and 60% of
// 100,000 decisions, each within 1 point; explain says the same.
func TestWeightedRotation(t *testing.T) {
	w := newWorld(t)
	c := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
		c.Rotation = &marquee.Rotation{Type: marquee.RotateWeighted, Weights: map[string]int{"2": 3, "3": 6}}
	})
	for range 3 {
		w.ad(c, "300x250", nil)
	}
	w.ready(side)
	r := &delivery.Request{Slots: slot("side", 1)}
	rnd := rand.New(rand.NewPCG(3, 3))
	got := map[int64]int{}
	const n = 100_000
	for range n {
		got[w.e.Decide(context.Background(), r, now, rnd)[0][0].Ad.ID]++
	}
	_, why := w.e.Explain(context.Background(), r, now, rnd, nil)
	for _, cand := range why[0] {
		want := map[int64]float64{1: 0.1, 2: 0.3, 3: 0.6}[cand.AdID]
		if share := float64(got[cand.AdID]) / n; math.Abs(share-want) > 0.01 {
			t.Errorf("ad %d: %.2f%% of decisions; want %.0f%% ±1", cand.AdID, 100*share, 100*want)
		}
		if math.Abs(cand.Chance-want) > 1e-9 || !strings.HasPrefix(cand.Rotation, "weighted: weight") {
			t.Errorf("explain of ad %d: chance %.3f, %q; want %.2f, weighted", cand.AdID, cand.Chance, cand.Rotation, want)
		}
	}
}

// TestSequentialRotation: each user sees the sequence's ads in its order
// (3, then 1, then 2: the order the campaign names, not the ids'), one per
// serve, up to the cap that counts the serves.
func TestSequentialRotation(t *testing.T) {
	w := newWorld(t)
	c := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
		c.Rotation = &marquee.Rotation{Type: marquee.RotateSequential, Sequence: []string{"3", "1", "2"}}
		c.FrequencyCap = &marquee.FrequencyCap{Count: 3, Window: "24h"}
	})
	for range 3 {
		w.ad(c, "300x250", nil)
	}
	w.ready(side)
	rnd := rand.New(rand.NewPCG(5, 5))
	for user := uint64(1); user <= 200; user++ {
		var seen []int64
		for range 4 {
			out := w.e.Decide(context.Background(), &delivery.Request{User: user, Slots: slot("side", 1)}, now, rnd)
			for _, ch := range out[0] {
				seen = append(seen, ch.Ad.ID)
			}
		}
		if !slices.Equal(seen, []int64{3, 1, 2}) {
			t.Fatalf("user %d saw ads %v; want 3, 1, 2 and then nothing (the cap)", user, seen)
		}
	}
}

// TestOptimizedRotation: on a simulated click model (ad 1 clicked 1% of
// the time, ad 2 3%), rotation starts even and, once each ad has the
// minimum of impressions, gives most serves to the better ad — the share
// the explore floor leaves — as the reports' rates come in.
func TestOptimizedRotation(t *testing.T) {
	w := newWorld(t)
	c := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
		c.Rotation = &marquee.Rotation{Type: marquee.RotateOptimized, MinImpressions: 1000}
	})
	w.ad(c, "300x250", nil)
	w.ad(c, "300x250", nil)
	w.ready(side)
	truth := map[int64]float64{1: 0.01, 2: 0.03}
	rates := map[int64]delivery.Rates{}
	rnd := rand.New(rand.NewPCG(7, 7))
	r := &delivery.Request{Slots: slot("side", 1)}
	var shares []float64
	for round := range 20 {
		got := map[int64]int{}
		for range 2000 {
			a := w.e.Decide(context.Background(), r, now, rnd)[0][0].Ad.ID
			got[a]++
			x := rates[a]
			x.Impressions++
			if rnd.Float64() < truth[a] {
				x.Clicks++
			}
			rates[a] = x
		}
		w.e.SetAdRates(maps.Clone(rates)) // what the reports say, refreshed
		shares = append(shares, float64(got[2])/2000)
		if round == 0 && math.Abs(shares[0]-0.5) > 0.05 {
			t.Errorf("first round (learning): the better ad took %.2f; want about half", shares[0])
		}
	}
	// 10% even, 90% by CTR: 0.05 + 0.9 × 0.03/0.04 = 0.725 at the true
	// rates; the last rounds must be near it.
	last := shares[len(shares)-1]
	if last < 0.66 || last > 0.79 {
		t.Errorf("the better ad's share by round: %v; want it to converge near 0.725", shares)
	}
	_, why := w.e.Explain(context.Background(), r, now, rnd, nil)
	for _, cand := range why[0] {
		if !strings.HasPrefix(cand.Rotation, "optimized: CTR ") {
			t.Errorf("explain of ad %d: %q; want its CTR named", cand.AdID, cand.Rotation)
		}
	}
}

// BenchmarkTrafficking: a decision of a three-slot page over 1,000
// campaigns of 10 ads each (no caps), plain and with each trafficking
// setting on every campaign: two labels (one exclusive, shared by a
// tenth of the campaigns), weighted or optimized rotation, a roadblock
// (as many as possible) over two placements.
func BenchmarkTrafficking(b *testing.B) {
	for _, c := range []struct {
		name string
		set  func(i int, c *marquee.Campaign)
	}{
		{"plain", nil},
		{"labels", func(i int, c *marquee.Campaign) {
			c.Labels = []marquee.Label{{Name: fmt.Sprintf("cat%d", i%10), Exclusive: true}, {Name: "all"}}
		}},
		{"weighted", func(i int, c *marquee.Campaign) {
			c.Rotation = &marquee.Rotation{Type: marquee.RotateWeighted, Weights: map[string]int{strconv.Itoa(10*i + 1): 5}}
		}},
		{"optimized", func(i int, c *marquee.Campaign) {
			c.Rotation = &marquee.Rotation{Type: marquee.RotateOptimized, MinImpressions: 10}
		}},
		{"roadblock", func(i int, c *marquee.Campaign) { c.Roadblock = marquee.RoadblockAsMany }},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := newWorld(&testing.T{})
			rates := map[int64]delivery.Rates{}
			for i := range 1000 {
				id := w.camp(marquee.Priorities[i%4], 1+i%100, func(camp *marquee.Campaign) {
					if c.set != nil {
						c.set(i, camp)
					}
				})
				for k := range 10 {
					a := w.ad(id, "300x250", func(a *marquee.Ad) { a.Placements = []string{[]string{"side", "bottom"}[k%2]} })
					rates[a] = delivery.Rates{Impressions: 100, Clicks: int64(1 + k)}
				}
			}
			w.ready(side, top, bottom)
			w.e.SetAdRates(rates)
			rnd := rand.New(rand.NewPCG(1, 2))
			r := page(0)
			b.ReportAllocs()
			for b.Loop() {
				w.e.Decide(context.Background(), r, now, rnd)
			}
		})
	}
}

// TestMaxPerPage: a campaign fills as many slots of one page as its
// maxPerPage allows, each with a different ad, over tiers below it (a
// remnant one allowed four fills the rest); labels it carries do
// not exclude it from its own second slot; a capped one takes one serve
// for the page.
func TestMaxPerPage(t *testing.T) {
	for _, c := range []struct {
		name       string
		maxPerPage int
		ads        int
		want       int // slots of the sponsorship, of 4
	}{{"default", 0, 3, 1}, {"one", 1, 3, 1}, {"three", 3, 5, 3}, {"three, two ads", 3, 2, 2}, {"twenty", 20, 10, 4}} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			sponsor := w.camp(marquee.PrioritySponsorship, 1, func(cp *marquee.Campaign) {
				cp.MaxPerPage = c.maxPerPage
				cp.Labels = []marquee.Label{{Name: "airline", Exclusive: true}}
				cp.FrequencyCap = &marquee.FrequencyCap{Count: 2, Window: "24h"}
			})
			for range c.ads {
				w.ad(sponsor, "300x250", nil)
			}
			remnant := w.camp(marquee.PriorityRemnant, 1, func(cp *marquee.Campaign) { cp.MaxPerPage = 4 }) // fills what is left
			for range 4 {
				w.ad(remnant, "300x250", nil)
			}
			rival := w.camp(marquee.PriorityStandard, 1, func(cp *marquee.Campaign) { cp.Labels = []marquee.Label{{Name: "airline"}} })
			w.ad(rival, "300x250", nil)
			w.ready(side)
			r := &delivery.Request{User: 7, Slots: []delivery.Slot{{Div: "a", Placement: "side", Count: 1}, {Div: "b", Placement: "side", Count: 1},
				{Div: "c", Placement: "side", Count: 1}, {Div: "d", Placement: "side", Count: 1}}}
			rnd := rand.New(rand.NewPCG(3, 4))
			for page := range 2 { // the cap (2) allows two pages: one serve each
				out := w.e.Decide(context.Background(), r, now, rnd)
				seen, mine := map[int64]bool{}, 0
				for i, s := range out {
					if len(s) != 1 {
						t.Fatalf("page %d: slot %d = %v; want one ad in every slot", page, i, s)
					}
					if seen[s[0].Ad.ID] {
						t.Fatalf("page %d: ad %d twice", page, s[0].Ad.ID)
					}
					seen[s[0].Ad.ID] = true
					switch s[0].Campaign.ID {
					case sponsor:
						mine++
					case rival:
						t.Fatalf("page %d: the rival shares the sponsorship's exclusive label: %v", page, out)
					}
				}
				if mine != c.want {
					t.Errorf("page %d: the sponsorship fills %d slots of 4; want %d", page, mine, c.want)
				}
			}
			if out := w.e.Decide(context.Background(), r, now, rnd); slices.ContainsFunc(out, func(s []delivery.Choice) bool { return len(s) > 0 && s[0].Campaign.ID == sponsor }) {
				t.Errorf("a third page shows the sponsorship: its cap of 2 counts a page once")
			}
		})
	}
}
