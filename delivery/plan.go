// The plan: what decisions read — campaigns, placements and their ads,
// indexed by placement and tier once per change — and its defaults.

package delivery

import (
	"cmp"
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"marquee"
	"marquee/targeting"
)

// Ad is what a decision needs of an ad beyond the index: its campaign,
// creative and the placements it is limited to.
type Ad struct {
	ID         int64
	CampaignID int64
	Title      string
	Creative   *marquee.Creative
	Placements []string
	// The ad's own window and targeting (what the ad index checks for
	// the ad list).
	StartAt, EndAt time.Time
	Conditions     []marquee.Condition
	// Head is how a decision's answer opens the ad's choice, rendered
	// once: {"adId":"…","campaignId":"…" and, with a creative,
	// ,"creative":{…} as JSON shows it (from byte Tail on).
	Head []byte
	Tail int
	// What the answer adds for the creative, known without reading it
	// (one memory read fewer a choice): Clicks, a click URL; Framed, a
	// frame (HTML, or a tag not trusted); Expands, macros to expand (a
	// trusted tag, or trackers).
	Clicks, Framed, Expands bool
	// Memo holds what a route renders of the ad once and keeps for as
	// long as the ad is unchanged (a changed ad is a new *Ad): the VAST
	// route's compiled document. Set at most once per kind of value,
	// read without a lock.
	Memo atomic.Value
	// The window, conditions and targeting tree compiled for matching
	// (the tree's day-parts are read in the campaign's time zone).
	span  span
	conds []targeting.Cond
	tree  *targeting.Tree
}

// Campaign is a campaign as decisions read it: its settings, its tier's
// rank (0 highest) and its price's amount in millionths.
type Campaign struct {
	marquee.Campaign
	Tier        int
	PriceMicros int64
	// ECPM is the campaign's eCPM in millionths (see RemnantECPM).
	ECPM int64
	// stats is this instance's decisions of it, shared by every plan.
	stats *campStats
	// live is the campaign's flight when it is active, else empty: the
	// first check of a decision reads one span of the campaign, not its
	// state's bytes too (a cache miss a campaign at 100,000 campaigns).
	live  span
	conds []targeting.Cond
	tree  *targeting.Tree // nil: no targeting tree
	loc   *time.Location  // the campaign's time zone: its ads' day-parts are read in it
	// weights are its weighted rotation's, by ad id (an ad not in it
	// weighs 1): its Rotation's, keyed for a decision without allocating.
	weights map[int64]int
}

// Plan is what decisions read. It is never mutated
// after it is built: a change builds a new one (sharing what it did not
// change) and swaps it in.
type Plan struct {
	campaigns  map[int64]*Campaign
	placements map[string]*marquee.Placement
	ads        map[int64]*Ad
	// defaults are the placements' default ads that are in no campaign
	// (SetDefaultAds; a campaign's ad is in ads).
	defaults map[int64]*Ad
	// lists are, for each placement and tier, the campaigns with ads that
	// fit it (type, size, allowed placements) and those ads: built once
	// per change, so that a decision weighs campaigns, not every ad.
	lists map[string]*[numTiers]tierList
	// remnantECPM: the remnant tier is drawn by eCPM (its lists sorted
	// by it), not weight.
	remnantECPM bool
	// The capped campaigns of the lists, numbered: ids[i] is campaign
	// number i (sorted), caps[i] its cap, inLists[listsAt[i]:listsAt[i+1]]
	// the lists it is in. A user's reached caps become a bitset of these
	// numbers and a count of them per list, so that a decision skips a
	// list whose campaigns the user has all reached, and checks a
	// campaign with one bit.
	ids      []int64
	caps     []capRule
	listsAt  []int32
	inLists  []int32
	numLists int
	// gen tells plans apart (a memo names its plan by it, not by a
	// pointer that would keep the plan in memory).
	gen uint64
	// needs is what the campaigns' targeting trees read of a viewer.
	needs targeting.Needs
	// budgeted are the campaigns with a budget of their own, which the
	// budgets' sync reads ten times a second: a walk of every campaign
	// was 15 ms a sync at 100,000 campaigns, most of an idle instance's CPU.
	budgeted []*Campaign
	// fits is, for each placement, the ads of each campaign that fit it
	// (fitsOf): a plan of the same ads and placements shares it. byCamp
	// is every campaign's ads (those of campaigns not in the plan too).
	fits   map[string][]campFit
	byCamp map[int64][]*Ad
	// Trafficking (indexTrafficking): each roadblock campaign's ads by the
	// placement they name, and those placements (sorted); each sequential
	// campaign's ads in sequence order.
	roadAds    map[int64]map[string][]*Ad
	roadblocks map[int64][]string
	sequences  map[int64][]*Ad
	// filters are the lists' filters by the hash of the IDs of their
	// trees, in order (filterOf): the next plan takes those of lists whose
	// trees did not change instead of building them again.
	filters map[uint64][]keptFilter
}

// keptFilter is a filter and the IDs of the trees it was built of.
type keptFilter struct {
	trees []uint64
	f     *targeting.Filter
}

// Needs says what the plan's targeting trees read of a viewer beyond the
// contract's fields: what the edge must fill (and need not, else).
func (p *Plan) Needs() targeting.Needs { return p.needs }

// plans numbers the plans built.
var plans atomic.Uint64

// capRule is a capped campaign's cap: count serves within.
type capRule struct {
	count  int
	within time.Duration
}

// numTiers is the number of tiers (marquee.Priorities).
const numTiers = 4

// tierList is the campaigns of one tier that may fill a placement, and
// their weights' running sums (for drawing one by weight).
type tierList struct {
	camps []campAds
	cum   []int // cum[i]: the weights of camps[:i+1]
	id    int32 // the list's number in its plan
	// The list's campaigns by key-value (nil: none has an index key, see
	// targeting.Tree.IndexKey): open holds those without one, byKV[kv]
	// those whose index key takes kv, so that a request weighs only the
	// campaigns of its own key-values; keys are the keys indexed. A part
	// of byKV is a tierList whose kv says which.
	open *tierList
	byKV map[targeting.KV]*tierList
	keys []string
	kv   targeting.KV
	// filter indexes the top-level rules of the campaigns' trees (nil:
	// none has a tree; a list indexed by key-value has one per part);
	// trees are the IDs of the trees it was built of and treesKey their
	// hash (the plan's filters' key).
	filter   *targeting.Filter
	trees    []uint64
	treesKey uint64
}

// campAds is a campaign and its ads that fit a placement; capped is the
// campaign's number among the plan's capped ones (-1: not capped).
type campAds struct {
	c   *Campaign
	ads []*Ad
	// reach takes every viewer some of ads' conditions take (nil:
	// anyone; reachOf): a decision passes over a campaign whose ads
	// cannot take the viewer without reading them.
	reach  *targeting.Cond
	capped int32
	// vals are the values of the campaign's index key, in a part of a
	// list indexed by key-value (see canonical).
	vals []string
}

// campFit is a campaign's ads that fit a placement (sorted by id).
type campFit struct {
	campaign int64
	ads      []*Ad
}

// fitsOf is, for each placement, every campaign's ads that fit it (by
// campaign id): what the lists are made of that depends on ads and
// placements only.
func (p *Plan) fitsOf() map[string][]campFit {
	byCamp := map[int64][]*Ad{}
	for _, a := range p.ads {
		byCamp[a.CampaignID] = append(byCamp[a.CampaignID], a)
	}
	p.byCamp = byCamp
	// One placement's fits do not depend on another's: they are found in
	// parallel, a placement to a goroutine, as many at once as Go runs
	// (at 1,000,000 ads each placement checks every ad).
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	fits := make(map[string][]campFit, len(p.placements))
	for name, pl := range p.placements {
		g.Go(func() error {
			var out []campFit
			for id, ads := range byCamp {
				if fit := fitting(ads, pl); len(fit) > 0 {
					out = append(out, campFit{id, fit})
				}
			}
			slices.SortFunc(out, func(x, y campFit) int { return cmp.Compare(x.campaign, y.campaign) })
			mu.Lock()
			fits[name] = out
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	return fits
}

// reachOf is the union of ads' conditions (targeting.Union).
func reachOf(ads []*Ad) *targeting.Cond {
	conds := make([][]targeting.Cond, len(ads))
	for i, a := range ads {
		if len(a.conds) == 0 {
			return nil
		}
		conds[i] = a.conds
	}
	return targeting.Union(conds)
}

// fitting are the ads of ads that fit placement pl, sorted by id.
func fitting(ads []*Ad, pl *marquee.Placement) []*Ad {
	var fit []*Ad
	for _, a := range ads {
		if fitWhy(a, pl) == "" {
			fit = append(fit, a)
		}
	}
	slices.SortFunc(fit, func(x, y *Ad) int { return cmp.Compare(x.ID, y.ID) })
	return fit
}

// index builds the placements' lists from ads, campaigns and placements.
// With sameFits (ads and placements as old's: a change of campaigns or
// of eCPMs), it takes which ads fit which placement from old; fits set
// already (by patchAds) are kept.
func (p *Plan) index(old *Plan, sameFits bool) {
	switch {
	case sameFits && old != nil && old.fits != nil:
		p.fits, p.byCamp = old.fits, old.byCamp
	case p.fits == nil:
		p.fits = p.fitsOf()
	}
	p.needs, p.budgeted = 0, nil
	for _, c := range p.campaigns {
		p.needs |= c.tree.Needs()
		if c.Budget != nil {
			p.budgeted = append(p.budgeted, c)
		}
	}
	p.indexTrafficking()
	p.lists = make(map[string]*[numTiers]tierList, len(p.placements))
	for name := range p.placements {
		var lists [numTiers]tierList
		for _, cf := range p.fits[name] {
			c := p.campaigns[cf.campaign]
			if c == nil || c.Tier < 0 || c.Tier >= numTiers {
				continue
			}
			ads := cf.ads
			if c.Roadblock != "" { // a roadblock's ads fill the placements they name
				if ads = p.roadAds[c.ID][name]; len(ads) == 0 {
					continue
				}
			}
			l := &lists[c.Tier]
			l.camps = append(l.camps, campAds{c: c, ads: ads, reach: reachOf(ads)})
		}
		for t := range lists {
			l := &lists[t]
			slices.SortFunc(l.camps, func(x, y campAds) int {
				if p.byECPM(t) && x.c.ECPM != y.c.ECPM {
					return cmp.Compare(y.c.ECPM, x.c.ECPM) // highest first
				}
				return cmp.Compare(x.c.ID, y.c.ID)
			})
			sum := 0
			for _, ca := range l.camps {
				sum += ca.c.Weight
				l.cum = append(l.cum, sum)
			}
		}
		p.lists[name] = &lists
	}
	p.numberCapped()
	p.indexKV(old)
}

// indexKV indexes the campaigns of each list that has any with an index
// key by their key-values (tierList.byKV). It runs once the campaigns are
// numbered: the parts copy their campAds.
func (p *Plan) indexKV(old *Plan) {
	p.filters = map[uint64][]keptFilter{}
	filterOf := func(l *tierList) *targeting.Filter { return p.filterOf(l, old) }
	for name, lists := range p.lists {
		for t := range lists {
			l := &lists[t]
			if o := old.sameList(name, t, l); o != nil {
				// The same campaigns as the plan before, numbered alike: its
				// parts and filters serve (they are never mutated).
				l.open, l.byKV, l.keys, l.filter, l.trees, l.treesKey = o.open, o.byKV, o.keys, o.filter, o.trees, o.treesKey
				p.keepFilters(l)
				continue
			}
			for _, ca := range l.camps {
				key, vals, ok := ca.c.tree.IndexKey()
				if !ok {
					if l.open == nil {
						l.open = &tierList{}
					}
					l.open.camps = append(l.open.camps, ca)
					continue
				}
				if l.byKV == nil {
					l.byKV = map[targeting.KV]*tierList{}
				}
				if !slices.Contains(l.keys, key) {
					l.keys = append(l.keys, key)
				}
				ca.vals = vals
				for _, v := range vals {
					kv := targeting.KV{Key: key, Value: v}
					part := l.byKV[kv]
					if part == nil {
						part = &tierList{kv: kv}
						l.byKV[kv] = part
					}
					part.camps = append(part.camps, ca)
				}
			}
			if l.byKV == nil {
				l.open = nil
				l.filter = filterOf(l)
				continue
			}
			if l.open == nil {
				l.open = &tierList{}
			}
			for _, part := range l.byKV {
				part.sums()
				part.filter = filterOf(part)
			}
			l.open.sums()
			l.open.filter = filterOf(l.open)
		}
	}
}

// sameList is old's list t of placement name when it holds the campaigns
// l holds — the same ones, in the same order, with the same ads and the
// same capped numbers — else nil. A nil old has none.
func (old *Plan) sameList(name string, t int, l *tierList) *tierList {
	if old == nil || old.lists[name] == nil {
		return nil
	}
	o := &old.lists[name][t]
	if len(o.camps) != len(l.camps) || len(l.camps) == 0 {
		return nil
	}
	for i := range l.camps {
		a, b := &o.camps[i], &l.camps[i]
		if a.c != b.c || a.capped != b.capped || len(a.ads) != len(b.ads) || &a.ads[0] != &b.ads[0] {
			return nil
		}
	}
	return o
}

// keepFilters records in p the filters of list l and its parts (which
// the plan before built), for the plan after.
func (p *Plan) keepFilters(l *tierList) {
	keep := func(x *tierList) {
		if x != nil && x.trees != nil {
			p.filters[x.treesKey] = append(p.filters[x.treesKey], keptFilter{x.trees, x.filter})
		}
	}
	keep(l)
	keep(l.open)
	for _, part := range l.byKV {
		keep(part)
	}
}

// filterOf is the filter of the trees of l's campaigns (nil: none has an
// indexable rule): old's, when it built one of the same trees in the same
// order (a campaign edit builds only the filters of the lists it is in),
// else a new one; p keeps it for the plan after.
func (p *Plan) filterOf(l *tierList, old *Plan) *targeting.Filter {
	ids := make([]uint64, len(l.camps))
	h, any := uint64(14695981039346656037), false
	for i, ca := range l.camps {
		ids[i], any = ca.c.tree.ID(), any || ca.c.tree != nil
		h = (h ^ ids[i]) * 1099511628211
	}
	if !any {
		return nil
	}
	var f *targeting.Filter
	kept := false
	if old != nil {
		for _, k := range old.filters[h] {
			if slices.Equal(k.trees, ids) {
				f, kept = k.f, true
				break
			}
		}
	}
	if !kept {
		trees := make([]*targeting.Tree, len(l.camps))
		for i, ca := range l.camps {
			trees[i] = ca.c.tree
		}
		f = targeting.NewFilter(trees)
	}
	p.filters[h] = append(p.filters[h], keptFilter{ids, f})
	l.trees, l.treesKey = ids, h
	return f
}

// sums sets the list's running sums of weights.
func (l *tierList) sums() {
	l.cum = make([]int, len(l.camps))
	sum := 0
	for i, ca := range l.camps {
		sum += ca.c.Weight
		l.cum[i] = sum
	}
}

// numberCapped numbers the capped campaigns of the lists (ids, inLists)
// and the lists.
func (p *Plan) numberCapped() {
	p.gen = plans.Add(1)
	for _, c := range p.campaigns {
		if c.FrequencyCap != nil {
			p.ids = append(p.ids, c.ID)
		}
	}
	slices.Sort(p.ids)
	p.caps = make([]capRule, len(p.ids))
	for i, id := range p.ids {
		c := p.campaigns[id]
		p.caps[i] = capRule{c.FrequencyCap.Count, window(c.FrequencyCap.Window, c)}
	}
	in := make([][]int32, len(p.ids))
	for _, lists := range p.lists {
		for t := range lists {
			l := &lists[t]
			l.id = int32(p.numLists)
			p.numLists++
			for k := range l.camps {
				ca := &l.camps[k]
				ca.capped = -1
				if i, ok := slices.BinarySearch(p.ids, ca.c.ID); ok {
					ca.capped = int32(i)
					in[i] = append(in[i], l.id)
				}
			}
		}
	}
	p.listsAt = make([]int32, 0, len(in)+1)
	for _, ls := range in {
		p.listsAt = append(p.listsAt, int32(len(p.inLists)))
		p.inLists = append(p.inLists, ls...)
	}
	p.listsAt = append(p.listsAt, int32(len(p.inLists)))
}

// fitWhy says why ad a's creative or placements keep it out of placement
// pl, or "".
func fitWhy(a *Ad, pl *marquee.Placement) string {
	switch {
	case a.Creative != nil && !slices.Contains(pl.Types, a.Creative.Type):
		return NotThisType
	case !pl.Accepts(a.Creative):
		return NotThisSize
	case !pl.Lasts(a.Creative):
		return TooLong
	case len(a.Placements) > 0 && !slices.Contains(a.Placements, pl.Name):
		return NotHere
	}
	return ""
}

// Placement returns placement name, if it exists.
func (p *Plan) Placement(name string) (*marquee.Placement, bool) {
	pl, ok := p.placements[name]
	return pl, ok
}

// Campaigns calls fn with every campaign of the plan.
func (p *Plan) Campaigns(fn func(*Campaign)) {
	for _, c := range p.campaigns {
		fn(c)
	}
}

// Budgeted calls fn with every campaign of the plan that has a budget of
// its own.
func (p *Plan) Budgeted(fn func(*Campaign)) {
	for _, c := range p.budgeted {
		fn(c)
	}
}

// PlacementNames are the plan's placements' names by id.
func (p *Plan) PlacementNames() map[int64]string {
	out := make(map[int64]string, len(p.placements))
	for name, pl := range p.placements {
		out[pl.ID] = name
	}
	return out
}

// Placed lists, for each campaign with ads that fill a placement, those
// placements (sorted): where the plan's lists put it.
func (p *Plan) Placed() map[int64][]string {
	out := map[int64][]string{}
	for name, lists := range p.lists {
		for t := range lists {
			for _, ca := range lists[t].camps {
				out[ca.c.ID] = append(out[ca.c.ID], name)
			}
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// Campaign returns what decisions know of campaign id (archived: none).
func (p *Plan) Campaign(id int64) (*Campaign, bool) {
	c, ok := p.campaigns[id]
	return c, ok
}

// Windows are c's conversion attribution windows (the defaults where it
// sets none).
func (c *Campaign) Windows() marquee.Attribution { return c.CampaignInput.Windows() }

// Loc is the campaign's time zone.
func (c *Campaign) Loc() *time.Location { return c.loc }

// DefaultAdIDs are the placements' default ads.
func (p *Plan) DefaultAdIDs() []int64 {
	var ids []int64
	for _, pl := range p.placements {
		if pl.DefaultAdID != 0 && !slices.Contains(ids, pl.DefaultAdID) {
			ids = append(ids, pl.DefaultAdID)
		}
	}
	return ids
}

func (p *Plan) isDefault(id int64) bool {
	for _, pl := range p.placements {
		if pl.DefaultAdID == id {
			return true
		}
	}
	return false
}

// planAd is what decisions keep of ad a.
func planAd(a *marquee.Ad) *Ad {
	ad := &Ad{ID: a.ID, CampaignID: a.CampaignID, Title: a.Title, Creative: a.Creative, Placements: a.Placements,
		StartAt: a.StartAt, EndAt: a.EndAt, Conditions: a.Conditions, span: spanOf(a.StartAt, a.EndAt), conds: targeting.CompileAll(a.Conditions),
		tree: targeting.CompileTree(a.Targeting, nil)}
	ad.Head = strconv.AppendInt(append(ad.Head, `{"adId":"`...), a.ID, 10)
	ad.Head = append(strconv.AppendInt(append(ad.Head, `","campaignId":"`...), a.CampaignID, 10), '"')
	ad.Tail = len(ad.Head)
	if c := a.Creative; c != nil {
		j, _ := json.Marshal(c) // a Creative always marshals
		ad.Head = append(append(ad.Head, `,"creative":`...), j...)
		ad.Clicks = c.ClickURL != ""
		ad.Framed = c.Type == marquee.CreativeHTML || c.Type == marquee.CreativeTag && !c.Trusted
		ad.Expands = c.Type == marquee.CreativeTag && c.Trusted || len(c.ImpressionTrackers) > 0 || len(c.ClickTrackers) > 0
	}
	return ad
}

// defaultOf is placement name's default ad when it may fill an empty slot
// of r: it has a creative that fits the placement, its window is on, its
// own targeting takes the viewer, and it is not in the request already.
// Its campaign's rules (flight, cap, pacing) do not apply: a default fill
// counts for no campaign.
func (p *Plan) defaultOf(name string, r *Request, used *usedSet) *Ad {
	pl := p.placements[name]
	if pl == nil || pl.DefaultAdID == 0 {
		return nil
	}
	a := p.ads[pl.DefaultAdID]
	if a == nil {
		a = p.defaults[pl.DefaultAdID]
	}
	if a == nil || a.Creative == nil || fitWhy(a, pl) != "" || adWhy(a, nil, r, used, time.Time{}) != "" {
		return nil
	}
	return a
}

// Ad returns what decisions know of ad id: an ad in a campaign, or a
// placement's default ad.
func (p *Plan) Ad(id int64) (*Ad, bool) {
	if a, ok := p.ads[id]; ok {
		return a, true
	}
	a, ok := p.defaults[id]
	return a, ok
}
