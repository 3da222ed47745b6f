package delivery

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"marquee"
	"marquee/counters"
)

// TestPatchedPlanAgainstFresh: after each of a random sequence of
// campaign edits (tier, weight, targeting tree, state, cap), of new ads
// and of eCPM changes, the plan the engine patched — which ads fit where
// taken from the plan before, filters kept by their trees — lists exactly
// what a plan built afresh from the same campaigns, ads and placements
// lists.
func TestPatchedPlanAgainstFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	now := time.Now()
	e := New(counters.NewMemory(counters.DefaultMemory))
	pls := []marquee.Placement{
		{ID: 1, PlacementInput: marquee.PlacementInput{Name: "side", Sizes: []string{"300x250"}, Types: marquee.CreativeTypes}},
		{ID: 2, PlacementInput: marquee.PlacementInput{Name: "top", Sizes: []string{"728x90"}, Types: marquee.CreativeTypes}},
	}
	trees := []*marquee.Targeting{nil,
		{Key: "section", In: []string{"a", "b"}},
		{All: []marquee.Targeting{{Key: "section", In: []string{"b"}}, {Key: "pos", NotIn: []string{"btf"}}}},
		{Key: "$device", In: []string{"phone"}}}
	camp := func(id int64) marquee.Campaign {
		c := marquee.Campaign{ID: id, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "c",
			StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Priority: marquee.Priorities[r.IntN(4)], Weight: 1 + r.IntN(9),
			Pacing: marquee.PacingASAP, Targeting: trees[r.IntN(len(trees))]}}
		if r.IntN(3) == 0 {
			c.FrequencyCap = &marquee.FrequencyCap{Count: 2, Window: "24h"}
		}
		if r.IntN(10) == 0 {
			c.State = marquee.StatePaused
		}
		if r.IntN(3) == 0 {
			c.Budget = &marquee.Budget{Total: marquee.Micros(1 + r.IntN(1000))}
		}
		if r.IntN(8) == 0 {
			c.Rotation = &marquee.Rotation{Type: marquee.RotateSequential}
		}
		return c
	}
	var cs []marquee.Campaign
	for i := range 60 {
		cs = append(cs, camp(int64(i+1)))
	}
	var ads []*marquee.Ad
	nextID := int64(0)
	newAd := func() {
		nextID++
		w, h := 300, 250
		if r.IntN(2) == 0 {
			w, h = 728, 90
		}
		var conds []marquee.Condition
		if r.IntN(2) == 0 {
			conds = []marquee.Condition{{Country: []string{[]string{"TW", "JP", "DE"}[r.IntN(3)]}}}
		}
		ads = append(ads, &marquee.Ad{ID: nextID, CampaignID: int64(1 + r.IntN(len(cs))), Title: "a", Conditions: conds,
			StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "x", Width: w, Height: h}})
	}
	for range 150 {
		newAd()
	}
	e.SetCampaigns(cs, pls)
	e.PutAds(ads, nil, true)
	for step := range 600 {
		switch r.IntN(10) {
		case 7, 8: // an ad's edit: its title, its size (it may fit elsewhere), its campaign
			i := r.IntN(len(ads))
			a := *ads[i]
			switch r.IntN(3) {
			case 0:
				a.Title = fmt.Sprint("a", step)
			case 1:
				if r.IntN(2) == 0 {
					a.Conditions = []marquee.Condition{{Country: []string{"FR"}}}
				}
				c := *a.Creative
				c.Width, c.Height = []int{300, 728}[r.IntN(2)], []int{250, 90}[r.IntN(2)]
				a.Creative = &c
			default:
				a.CampaignID = int64(1 + r.IntN(len(cs)))
			}
			ads[i] = &a
			e.PutAds([]*marquee.Ad{&a}, nil, false)
		case 9: // an ad deleted, and a new one
			i := r.IntN(len(ads))
			gone := ads[i].ID
			ads = slices.Delete(ads, i, i+1)
			newAd()
			e.PutAds([]*marquee.Ad{ads[len(ads)-1]}, []int64{gone}, false)
		case 0:
			newAd()
			e.PutAds(ads, nil, true)
		case 1:
			e.SetRemnant([]string{RemnantWeight, RemnantECPM}[r.IntN(2)])
		case 2, 3: // edits of what no list is made of (patched, see patch), of one campaign or two
			var edited []marquee.Campaign
			for range 1 + r.IntN(2) {
				i := r.IntN(len(cs))
				cs[i].Name, cs[i].EndAt = fmt.Sprint("c", step), cs[i].EndAt.Add(time.Minute)
				if cs[i].Budget != nil {
					cs[i].Budget = &marquee.Budget{Total: cs[i].Budget.Total + 1}
				}
				edited = append(edited, cs[i])
			}
			e.PatchCampaigns(edited, nil, nil, nil)
		default:
			i := r.IntN(len(cs))
			cs[i] = camp(cs[i].ID)
			e.PatchCampaigns([]marquee.Campaign{cs[i]}, nil, nil, nil)
		}
		got := e.Plan()
		fresh := &Plan{campaigns: got.campaigns, placements: got.placements, ads: got.ads, defaults: got.defaults, remnantECPM: got.remnantECPM}
		fresh.index(nil, false)
		if a, b := describeLists(got), describeLists(fresh); a != b {
			t.Fatalf("step %d: the patched plan lists\n%s\na fresh one\n%s", step, a, b)
		}
		if err := listsHoldPlanCampaigns(got); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if a, b := describeByCamp(got), describeByCamp(fresh); a != b {
			t.Fatalf("step %d: the patched plan's ads by campaign %s; a fresh one's %s", step, a, b)
		}
		if a, b := describeTrafficking(got), describeTrafficking(fresh); a != b {
			t.Fatalf("step %d: the patched plan's sequences %s; a fresh one's %s", step, a, b)
		}
		if !slices.Equal(got.ids, fresh.ids) || !slices.Equal(got.caps, fresh.caps) {
			t.Fatalf("step %d: capped campaigns %v %v; a fresh plan's %v %v", step, got.ids, got.caps, fresh.ids, fresh.caps)
		}
	}
}

// listsHoldPlanCampaigns says which list, if any, holds a campaign that is
// not the plan's own (an edit's old version).
func listsHoldPlanCampaigns(p *Plan) error {
	var check func(name string, l *tierList) error
	check = func(name string, l *tierList) error {
		if l == nil {
			return nil
		}
		for _, ca := range l.camps {
			if ca.c != p.campaigns[ca.c.ID] {
				return fmt.Errorf("list %s holds campaign %d (%q) of an earlier plan", name, ca.c.ID, ca.c.Name)
			}
			for _, a := range ca.ads {
				if a != p.ads[a.ID] {
					return fmt.Errorf("list %s holds ad %d (%q) of an earlier plan", name, a.ID, a.Title)
				}
			}
		}
		if err := check(name+" open", l.open); err != nil {
			return err
		}
		for kv, part := range l.byKV {
			if err := check(name+" "+kv.Key+"="+kv.Value, part); err != nil {
				return err
			}
		}
		return nil
	}
	for name, lists := range p.lists {
		for t := range lists {
			if err := check(fmt.Sprint(name, "/", t), &lists[t]); err != nil {
				return err
			}
		}
	}
	for _, c := range p.budgeted {
		if c != p.campaigns[c.ID] {
			return fmt.Errorf("budgeted campaign %d is of an earlier plan", c.ID)
		}
	}
	return nil
}

// describeByCamp is a plan's ads by campaign (byCamp, which an ad's edit
// starts from: "none" when the plan has none and the next edit would
// check every ad again).
func describeByCamp(p *Plan) string {
	if p.byCamp == nil {
		return "none"
	}
	var out []string
	for id, ads := range p.byCamp {
		var as []int64
		for _, a := range ads {
			if a != p.ads[a.ID] {
				as = append(as, -a.ID) // an earlier plan's
				continue
			}
			as = append(as, a.ID)
		}
		slices.Sort(as)
		out = append(out, fmt.Sprint(id, as))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// describeTrafficking is a plan's sequences: each sequential campaign's
// ads, as the plan holds them (pointers to the plan's own ads).
func describeTrafficking(p *Plan) string {
	var out []string
	for id, ads := range p.sequences {
		var as []string
		for _, a := range ads {
			as = append(as, fmt.Sprint(a.ID, a == p.ads[a.ID]))
		}
		slices.Sort(as)
		out = append(out, fmt.Sprint(id, as))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// describeLists is a plan's lists in words: for each placement and tier,
// its campaigns (with their ads, capped number and running sum), and its
// parts by key-value with their campaigns and whether they are filtered.
func describeLists(p *Plan) string {
	var b strings.Builder
	names := make([]string, 0, len(p.lists))
	for name := range p.lists {
		names = append(names, name)
	}
	slices.Sort(names)
	part := func(l *tierList) string {
		var ids []string
		for i, ca := range l.camps {
			var as []int64
			for _, a := range ca.ads {
				as = append(as, a.ID)
			}
			cap := "-"
			if ca.capped >= 0 {
				cap = fmt.Sprint(p.ids[ca.capped])
			}
			reach := "anyone"
			if ca.reach != nil {
				reach = fmt.Sprint(*ca.reach)
			}
			ids = append(ids, fmt.Sprintf("%d%v cap %s sum %d reach %s", ca.c.ID, as, cap, l.cum[i], reach))
		}
		return fmt.Sprintf("[%s] filter %v", strings.Join(ids, "; "), l.filter != nil)
	}
	for _, name := range names {
		for t := range p.lists[name] {
			l := &p.lists[name][t]
			fmt.Fprintf(&b, "%s/%d: %s\n", name, t, part(l))
			if l.byKV != nil {
				fmt.Fprintf(&b, "  open: %s\n", part(l.open))
				var kvs []string
				for kv, pt := range l.byKV {
					kvs = append(kvs, kv.Key+"="+kv.Value+": "+part(pt))
				}
				slices.Sort(kvs)
				for _, k := range kvs {
					fmt.Fprintf(&b, "  %s\n", k)
				}
			}
		}
	}
	return b.String()
}

// TestEditKeepsAnUnchangedTree: a campaign edit that leaves its targeting
// tree and time zone as they were keeps the compiled tree (and so the
// lists' filters built of it); one that changes either compiles it again.
func TestEditKeepsAnUnchangedTree(t *testing.T) {
	now := time.Now()
	e := New(counters.NewMemory(counters.DefaultMemory))
	c := marquee.Campaign{ID: 1, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "c",
		StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Priority: marquee.Priorities[0], Weight: 1,
		Targeting: &marquee.Targeting{Key: "section", In: []string{"a"}}}}
	e.SetCampaigns([]marquee.Campaign{c}, nil)
	tree := func() uint64 { got, _ := e.Plan().Campaign(1); return got.tree.ID() }
	first := tree()
	c.Weight, c.Targeting = 5, &marquee.Targeting{Key: "section", In: []string{"a"}} // an equal tree, another pointer
	e.PatchCampaigns([]marquee.Campaign{c}, nil, nil, nil)
	if got := tree(); got != first {
		t.Fatalf("a weight edit compiled tree %d; want tree %d kept", got, first)
	}
	c.TimeZone = "Europe/Paris"
	e.PatchCampaigns([]marquee.Campaign{c}, nil, nil, nil)
	second := tree()
	if second == first {
		t.Fatalf("a time zone edit kept tree %d; want one compiled in the new zone", first)
	}
	c.Targeting = &marquee.Targeting{Key: "section", In: []string{"b"}}
	e.PatchCampaigns([]marquee.Campaign{c}, nil, nil, nil)
	if got := tree(); got == second {
		t.Fatalf("a targeting edit kept tree %d; want a new one", got)
	}
}
