// Package delivery decides which ads fill the slots of a page: for each
// slot, the ads whose targeting matches (from the ad index), whose
// campaign is active with its own targeting and keywords matching, whose
// creative fits the placement and that may run there, not capped for the
// user; of those, the highest tier wins, and within it a weighted lottery
// by the campaigns' weights. A decision is a pure function of a Plan (an
// immutable view of campaigns, placements and the ads' creatives), an
// index snapshot, the counters and a random source: no database, no lock
// on the way.
package delivery

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marquee"
	"marquee/counters"
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
	// CreativeJSON is Creative as the decision's answer shows it,
	// rendered once.
	CreativeJSON []byte
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
	// The flight and targeting compiled for matching.
	flight span
	conds  []targeting.Cond
	tree   *targeting.Tree // nil: no targeting tree
	loc    *time.Location  // the campaign's time zone: its ads' day-parts are read in it
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
	// fits is, for each placement, the ads of each campaign that fit it
	// (fitsOf): a plan of the same ads and placements shares it.
	fits map[string][]campFit
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
	c      *Campaign
	ads    []*Ad
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
	fits := make(map[string][]campFit, len(p.placements))
	for name, pl := range p.placements {
		var out []campFit
		for id, ads := range byCamp {
			var fit []*Ad
			for _, a := range ads {
				if fitWhy(a, pl) == "" {
					fit = append(fit, a)
				}
			}
			if len(fit) > 0 {
				slices.SortFunc(fit, func(x, y *Ad) int { return cmp.Compare(x.ID, y.ID) })
				out = append(out, campFit{id, fit})
			}
		}
		slices.SortFunc(out, func(x, y campFit) int { return cmp.Compare(x.campaign, y.campaign) })
		fits[name] = out
	}
	return fits
}

// index builds the placements' lists from ads, campaigns and placements.
// With sameFits (ads and placements as old's: a change of campaigns or
// of eCPMs), it takes which ads fit which placement from old.
func (p *Plan) index(old *Plan, sameFits bool) {
	if sameFits && old != nil && old.fits != nil {
		p.fits = old.fits
	} else {
		p.fits = p.fitsOf()
	}
	p.needs = 0
	for _, c := range p.campaigns {
		p.needs |= c.tree.Needs()
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
			l.camps = append(l.camps, campAds{c: c, ads: ads})
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

// Engine holds the current Plan and decides over it. Its methods are safe
// for concurrent use; the feed is its only writer.
type Engine struct {
	counters Counters
	// readFirst: the counters answer in this process (InProcess), so a
	// decision reads the user's reached caps before choosing rather than
	// learn them from a refused take.
	readFirst bool
	memo      memoCounters // the counters, when they keep a memo with each user's serves
	pacing    *Pacing
	budgets   *Budgets // nil: no budget is enforced
	plan      atomic.Pointer[Plan]
	mu        sync.Mutex // writers, and what they read:
	// remnantECPM and rates (SetRemnant, SetRates) make the campaigns'
	// eCPMs.
	remnantECPM bool
	rates       map[int64]Rates
	// adRates are the ads' verified impressions and clicks, for
	// optimized rotation (SetAdRates).
	adRates atomic.Pointer[map[int64]Rates]
	// bidding is how header-bidding bids compete (SetBidding).
	bidding atomic.Pointer[Bidding]
	started time.Time // when this engine began counting decisions
}

// New returns an engine with counters for the frequency caps.
func New(counters Counters) *Engine {
	e := &Engine{counters: counters, pacing: NewPacing(), started: time.Now()}
	if c, ok := counters.(interface{ InProcess() bool }); ok {
		e.readFirst = c.InProcess()
	}
	e.memo, _ = counters.(memoCounters)
	e.plan.Store(&Plan{campaigns: map[int64]*Campaign{}, placements: map[string]*marquee.Placement{}, ads: map[int64]*Ad{}})
	e.adRates.Store(new(map[int64]Rates))
	return e
}

// Pacing returns the engine's pacing (for SetDelivered).
func (e *Engine) Pacing() *Pacing { return e.pacing }

// Plan returns the current plan.
func (e *Engine) Plan() *Plan { return e.plan.Load() }

// SetCampaigns replaces the plan's campaigns (archived ones are left out)
// and placements.
func (e *Engine) SetCampaigns(cs []marquee.Campaign, ps []marquee.Placement) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.plan.Load()
	p := &Plan{campaigns: make(map[int64]*Campaign, len(cs)), placements: make(map[string]*marquee.Placement, len(ps)), ads: old.ads, defaults: old.defaults, remnantECPM: e.remnantECPM}
	for i := range cs {
		if cs[i].State != marquee.StateArchived {
			p.campaigns[cs[i].ID] = e.compileCampaign(cs[i], old)
		}
	}
	for i := range ps {
		p.placements[ps[i].Name] = &ps[i]
	}
	p.index(old, false)
	e.plan.Store(p)
}

// PatchCampaigns changes only what it is given: the campaigns of puts
// are put (an archived one leaves the plan), those of gone removed, and
// likewise the placements of pputs and pgone (by name). The plan is
// rebuilt from the one before; nothing else is read.
func (e *Engine) PatchCampaigns(puts []marquee.Campaign, gone []int64, pputs []marquee.Placement, pgone []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.plan.Load()
	p := &Plan{campaigns: maps.Clone(old.campaigns), placements: maps.Clone(old.placements), ads: old.ads, defaults: old.defaults, remnantECPM: e.remnantECPM}
	for _, id := range gone {
		delete(p.campaigns, id)
	}
	for i := range puts {
		if puts[i].State == marquee.StateArchived {
			delete(p.campaigns, puts[i].ID)
			continue
		}
		p.campaigns[puts[i].ID] = e.compileCampaign(puts[i], old)
	}
	for _, name := range pgone {
		delete(p.placements, name)
	}
	for i := range pputs {
		p.placements[pputs[i].Name] = &pputs[i]
	}
	p.index(old, len(pputs) == 0 && len(pgone) == 0) // the same ads and placements: which ads fit where is old's
	e.plan.Store(p)
}

// compileCampaign is mc as decisions read it, keeping its decisions'
// stats from the plan before. The caller holds e.mu.
func (e *Engine) compileCampaign(mc marquee.Campaign, old *Plan) *Campaign {
	c := &Campaign{Campaign: mc, Tier: marquee.TierOf(mc.Priority), flight: spanOf(mc.StartAt, mc.EndAt), conds: targeting.CompileAll(mc.Conditions)}
	if c.loc, _ = marquee.ParseTimeZone(mc.TimeZone); c.loc == nil {
		c.loc = time.UTC // a zone that no longer loads
	}
	c.tree = targeting.CompileTree(mc.Targeting, c.loc)
	c.weights = weightsOf(mc.Rotation)
	if pr := c.Price; pr != nil {
		c.PriceMicros = int64(pr.Amount)
	}
	c.ECPM = ecpm(c, e.rates[c.ID])
	if was := old.campaigns[c.ID]; was != nil {
		c.stats = was.stats
	} else {
		c.stats = new(campStats)
	}
	return c
}

// PutAds sets the plan's view of ads (those without a campaign are left
// out — decisions serve campaigns' ads — but for placements' default ads)
// and deletes the ads of dels; reset replaces every ad.
func (e *Engine) PutAds(puts []*marquee.Ad, dels []int64, reset bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.plan.Load()
	ads := map[int64]*Ad{}
	if !reset {
		ads = make(map[int64]*Ad, len(old.ads)+len(puts))
		for id, a := range old.ads {
			ads[id] = a
		}
	}
	defaults := maps.Clone(old.defaults)
	for _, id := range dels {
		delete(ads, id)
		delete(defaults, id)
	}
	for _, a := range puts {
		delete(defaults, a.ID)
		if !a.Serves() { // paused, waiting for approval, or rejected: never served
			delete(ads, a.ID)
			continue
		}
		if a.CampaignID == 0 {
			delete(ads, a.ID)
			if old.isDefault(a.ID) {
				if defaults == nil {
					defaults = map[int64]*Ad{}
				}
				defaults[a.ID] = planAd(a)
			}
			continue
		}
		ads[a.ID] = planAd(a)
	}
	p := &Plan{campaigns: old.campaigns, placements: old.placements, ads: ads, defaults: defaults, remnantECPM: old.remnantECPM}
	p.index(old, false)
	e.plan.Store(p)
}

// SetDefaultAds gives the plan the placements' default ads that are in no
// campaign (the others are in it with their campaigns): the feed reads
// them after the placements, and PutAds keeps them current.
func (e *Engine) SetDefaultAds(ads []*marquee.Ad) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.plan.Load()
	defaults := make(map[int64]*Ad, len(ads))
	for _, a := range ads {
		if a.CampaignID == 0 && old.isDefault(a.ID) {
			defaults[a.ID] = planAd(a)
		}
	}
	p := *old
	p.defaults = defaults
	e.plan.Store(&p)
}

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
	if a.Creative != nil {
		ad.CreativeJSON, _ = json.Marshal(a.Creative) // a Creative always marshals
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

// Request is a decision request once validated: the slots to fill, the
// viewer (its targeting fields compiled at the edge: 0 where not given),
// the user's hashed key (0: none, and no frequency cap can apply) and
// keywords.
type Request struct {
	Slots    []Slot
	Viewer   targeting.Viewer
	User     uint64
	Keywords []string
	// Preview decides without consequence: no cap serve is taken and
	// nothing counts toward pacing (the console's "preview a decision").
	Preview bool
	// Companions: the answer carries a video's companions (VAST), which
	// stand for a roadblock's image and HTML placements.
	Companions bool
}

// Slot is one place to fill: a div name the answer is keyed by, the
// placement, and how many ads it takes; KV, when the slot has key-values
// of its own, is the request's with the slot's (sorted, the slot's
// replacing the page's of the same key), else nil.
type Slot struct {
	Div       string
	Placement string
	Count     int
	KV        []targeting.KV
	// Bids are the slot's header-bidding bids (see Bid): the best may
	// fill it in place of a campaign.
	Bids []Bid
}

// forSlot sets the viewer's slot fields for slot s in placement pl: its
// key-values and the placement's site.
func (u *usedSet) forSlot(r *Request, s *Slot, pl *marquee.Placement) {
	u.v.KV = r.Viewer.KV
	if s.KV != nil {
		u.v.KV = s.KV
	}
	u.multiKV = false
	for i := 1; i < len(u.v.KV); i++ {
		u.multiKV = u.multiKV || u.v.KV[i].Key == u.v.KV[i-1].Key
	}
	u.v.Site = ""
	if pl != nil {
		u.v.Site = pl.Site
	}
}

// Choice is an ad chosen for a slot.
type Choice struct {
	Ad       *Ad
	Campaign *Campaign // DefaultFill for a placement's default ad
	// Default: the placement's default ad, filling a slot nothing else
	// filled; it counts for no campaign (Campaign is DefaultFill).
	Default bool
	// Bid: a header-bidding bid won the slot (Campaign is BidFill, Ad
	// none of Marquee's); BidCPM is its CPM after its bidder's
	// adjustment.
	Bid    *Bid
	BidCPM int64
}

// DefaultFill is the campaign of a default ad's choice: none (id 0), of
// the house tier, without cap, goal or price. A default fill never counts
// toward a campaign's goal, pacing, cap or spend, even when the default
// ad belongs to a campaign.
var DefaultFill = &Campaign{Campaign: marquee.Campaign{CampaignInput: marquee.CampaignInput{Priority: marquee.PriorityHouse}}, Tier: numTiers - 1}

// Random is the source of the lottery: a float in [0, 1).
type Random interface{ Float64() float64 }

// Decide fills the slots of r at now: for each slot its chosen ads (none
// when nothing is eligible). A request shows an ad, and a campaign, at
// most once across its slots.
//
// Caps are taken, not read first: the slots are filled as if the user
// had reached no cap, and the chosen capped campaigns take their serves
// from the counters for r.User in one call (one round trip to a shared
// Redis). A campaign whose serve is refused (its cap reached, or taken
// meanwhile by another decision) is left out and its slot filled again,
// now knowing the user's serves, which a refusal answers with. So a
// decision costs one call to the counters, two for a user at a cap. When
// the counters do not answer, no capped campaign is served: caps hold
// even when the counters are down.
func (e *Engine) Decide(ctx context.Context, r *Request, now time.Time, rnd Random) [][]Choice {
	return e.DecideOutcomes(ctx, r, now, rnd, nil)
}

// DecideOutcomes is Decide, and sets outcomes[i] (when there is one) to
// what became of slot i: filled, the house ad, or why it stayed empty.
func (e *Engine) DecideOutcomes(ctx context.Context, r *Request, now time.Time, rnd Random, outcomes []marquee.Outcome) [][]Choice {
	plan := e.plan.Load()
	sc := scratchPool.Get().(*scratch)
	var adsBuf, campsBuf [16]int64 // what a request chooses fits: no allocation
	var labelsBuf [8]marquee.Label
	used := usedSet{ads: adsBuf[:0], campaigns: campsBuf[:0], labels: labelsBuf[:0], v: r.Viewer, at: now.UnixNano(), bits: &sc.bits}
	reached := sc.reached[:0] // the user's reached caps once a refusal told them (kept apart from used: escape analysis)
	if e.readFirst && r.User != 0 && !r.Preview && len(plan.ids) > 0 {
		var err error
		used.memo, used.blocked, reached, err = e.blockedOf(ctx, plan, r.User, now, sc)
		used.reached, used.capsDown = reached, err != nil
		used.viewerKey, used.keyed = viewerKey(r), len(r.Keywords) == 0
	}
	var pendBuf [16]pending
	var haveBuf [32]int
	var whyBuf [32]marquee.Outcome
	var whoBuf [16]int
	pend, have, why := pendBuf[:0], haveBuf[:0], whyBuf[:0]
	if len(r.Slots) > len(haveBuf) {
		have, why = make([]int, 0, len(r.Slots)), make([]marquee.Outcome, 0, len(r.Slots))
	}
	have, why = have[:len(r.Slots)], why[:len(r.Slots)]
	bidding := e.biddingOf()
	for range maxRounds {
		from := len(pend)
		for si := range r.Slots {
			s := &r.Slots[si]
			pl := plan.placements[s.Placement]
			used.forSlot(r, s, pl)
			bid, bidCPM, bidTier := -1, int64(0), -1
			if len(s.Bids) > 0 && pl != nil && have[si] == 0 {
				bid, bidCPM, bidTier = bidding.best(s, pl)
			}
			for pl != nil && have[si] < s.Count { // no such placement: the route refuses it before
				used.why = marquee.Filled
				ch, ok := plan.pick(pl, r, &used, now, rnd, e)
				if bid >= 0 && have[si] == 0 && beats(bidCPM, bidTier, ch, ok) {
					// The bid takes the slot (the campaign drawn stays free
					// for the other slots).
					pend = append(pend, pending{slot: si, ch: bidChoice(s, bid, bidCPM)})
					have[si]++
					break
				}
				if !ok {
					why[si] = max(why[si], used.why)
					break
				}
				// (appended here, not in a method: appending through a
				// pointer would move the buffers to the heap)
				used.ads, used.campaigns, used.labels = append(used.ads, ch.Ad.ID), append(used.campaigns, ch.Campaign.ID), append(used.labels, ch.Campaign.Labels...)
				pend = append(pend, pending{slot: si, ch: ch})
				have[si]++
				if ch.Campaign.Roadblock != "" {
					start := len(pend)
					var whole bool
					if pend, whole = plan.roadblock(ch, si, r, &used, have, pend, now, rnd, e); !whole {
						// All or none, and not all: the campaign stays used
						// (not chosen again), its choice and labels go.
						pend, have[si], used.ads = pend[:len(pend)-1], have[si]-1, used.ads[:len(used.ads)-1]
						used.labels = used.labels[:len(used.labels)-len(ch.Campaign.Labels)]
						used.note(marquee.InRequest)
					}
					for _, q := range pend[min(start, len(pend)):] {
						used.ads = append(used.ads, q.ch.Ad.ID)
					}
				}
			}
		}
		takes, who := sc.takes[:0], whoBuf[:0]
		for i := from; i < len(pend); i++ {
			c := pend[i].ch.Campaign
			if fc := c.FrequencyCap; fc != nil && r.User != 0 && !r.Preview {
				if j := slices.IndexFunc(pend[from:i], func(q pending) bool { return q.ch.Campaign == c }); j >= 0 {
					pend[i].follows = from + j + 1 // a roadblock's: one serve
					continue
				}
				takes, who = append(takes, counters.Take{Campaign: c.ID, Count: fc.Count, Within: window(fc.Window, c)}), append(who, i)
			} else {
				pend[i].ok = true
			}
		}
		if len(takes) == 0 {
			break
		}
		took := append(sc.took[:0], make([]int, len(takes))...)
		sc.takes, sc.took = takes, took
		got, err := e.counters.Take(ctx, r.User, now, takes, took, reached[:0])
		if err != nil {
			used.capsDown = true // no capped campaign in the slots filled again
		} else if len(got) > 0 {
			reached, used.reached = got, got // the user's reached caps, after a refusal
			plan.block(&sc.blocked, got, used.at)
			used.blocked, used.memo = &sc.blocked, nil
		}
		refused := false
		for k, i := range who {
			if pend[i].ok, pend[i].reached = err == nil && took[k] > 0, err == nil && took[k] >= takes[k].Count; pend[i].ok {
				if id := plan.sequence(&pend[i], took[k], r, &used, now); id != 0 {
					used.ads = append(used.ads, id)
				}
			}
		}
		for i := from; i < len(pend); i++ {
			if f := pend[i].follows; f > 0 {
				pend[i].ok, pend[i].reached = pend[f-1].ok, pend[f-1].reached
			}
			if !pend[i].ok {
				have[pend[i].slot]-- // its campaign stays used: not chosen again
				why[pend[i].slot] = max(why[pend[i].slot], marquee.CappedOut)
				refused = true
			}
		}
		if !refused {
			break
		}
		used.labels = used.labels[:0] // those of the choices that stand
		for _, q := range pend {
			if q.ok {
				used.labels = append(used.labels, q.ch.Campaign.Labels...)
			}
		}
	}
	total := 0
	for _, p := range pend {
		if p.ok {
			total++
		}
	}
	for si, s := range r.Slots { // the default ad of a placement fills what nothing else did
		if have[si] > 0 {
			continue
		}
		used.forSlot(r, &r.Slots[si], plan.placements[s.Placement])
		if a := plan.defaultOf(s.Placement, r, &used); a != nil {
			used.ads = append(used.ads, a.ID)
			pend = append(pend, pending{slot: si, ch: Choice{Ad: a, Campaign: DefaultFill, Default: true}, ok: true})
			total++
		}
	}
	out, all := make([][]Choice, len(r.Slots)), make([]Choice, 0, total)
	for si := range r.Slots {
		start := len(all)
		for _, p := range pend {
			if p.slot != si || !p.ok {
				continue
			}
			all = append(all, p.ch)
			if !r.Preview && !p.ch.Default && p.ch.Bid == nil {
				p.ch.Campaign.stats.count(used.at, p.reached)
			}
		}
		out[si] = all[start:len(all):len(all)]
		o := why[si]
		switch {
		case len(out[si]) > 0 && out[si][0].Default:
			o = marquee.House
		case len(out[si]) > 0:
			o = marquee.Filled
		case o == marquee.Filled: // nothing failed a check: the placement had no candidate
			o = plan.emptyWhy(r.Slots[si].Placement)
		}
		if si < len(outcomes) {
			outcomes[si] = o
		}
	}
	sc.reached = reached[:0]
	scratchPool.Put(sc)
	return out
}

// maxRounds bounds how often a decision fills its slots again after
// refused serves: each round is one call to the counters.
const maxRounds = 4

// pending is a choice for a slot, ok once its serve is taken (or needs
// none); reached says the serve brought the user to the cap.
type pending struct {
	slot        int
	ch          Choice
	ok, reached bool
	// follows is 1 + the index of the choice whose serve this one shares
	// (a roadblock's other slots count one serve): 0 for none.
	follows int
}

// scratch is what a decision lends the counters: the buffer the user's
// reached caps are read into, what they block, and its takes.
type scratch struct {
	bits    []uint64 // the eligible campaigns of a list's parts (pickParts)
	reached []counters.Reached
	blocked blockedSet
	takes   []counters.Take
	took    []int
}

// blockedSet is a user's reached caps in a plan's numbers: a bit for each
// capped campaign the user may not be served now, and how many of each
// list's campaigns are blocked.
type blockedSet struct {
	bits   []uint64
	inList []int32
}

// memoCounters are counters that keep a memo with each user's serves,
// dropped at the user's next take (counters.Memory).
type memoCounters interface {
	// Recall returns the user's memo, or else appends their reached caps
	// at now to into.
	Recall(user uint64, now time.Time, into []counters.Reached) (memo any, reached []counters.Reached)
	// Remember keeps memo, of bytes, until the user's next take.
	Remember(user uint64, memo any, bytes int)
}

// blockMemo is a user's blocked set in plan number gen, true until until
// (unix ns: the first of its reached caps to end) or the user's next
// take; and, for each list of the plan, until when it has nothing for
// the user whatever the request (unix ns, 0: not known to). Decisions of
// the user share it: set is never mutated once remembered, exhausted
// only atomically.
type blockMemo struct {
	gen       uint64
	until     int64
	set       blockedSet
	exhausted []atomic.Int64
	forViewer []atomic.Pointer[viewerMark] // a list's viewerSlots, by the viewer's key
}

// exhaustFor is how long a list stays skipped for a user once every
// campaign in it was left out for reasons no request changes — the user
// reached its cap, pacing held it back, its flight is not on — and so how
// late, at most, a decision for that user sees a campaign that pacing
// lets serve again or whose flight starts.
const exhaustFor = 250 * time.Millisecond

// memoFrom is how many reached caps make a user's blocked set worth
// remembering: below it, building the set costs less than the memo
// weighs.
const memoFrom = 16

// blockedOf reads what user's reached caps block in plan at now (nil:
// nothing), the user's memo when there is one, and the reached caps read
// (none when a memo answered): from the user's memo when it is of this
// plan and still true, else from the counters, remembered when there are
// memoFrom or more.
func (e *Engine) blockedOf(ctx context.Context, plan *Plan, user uint64, now time.Time, sc *scratch) (*blockMemo, *blockedSet, []counters.Reached, error) {
	at, reached := now.UnixNano(), sc.reached[:0]
	var err error
	if e.memo != nil {
		var memo any
		memo, reached = e.memo.Recall(user, now, reached)
		if m, ok := memo.(*blockMemo); ok && m.gen == plan.gen && at < m.until {
			return m, &m.set, nil, nil
		} else if memo != nil {
			reached, err = e.counters.Reached(ctx, user, now, reached)
		}
	} else {
		reached, err = e.counters.Reached(ctx, user, now, reached)
	}
	if err != nil || len(reached) == 0 {
		return nil, nil, reached, err
	}
	if e.memo != nil && len(reached) >= memoFrom {
		m := &blockMemo{gen: plan.gen, exhausted: make([]atomic.Int64, plan.numLists), forViewer: make([]atomic.Pointer[viewerMark], plan.numLists*viewerSlots)}
		m.until = plan.block(&m.set, reached, at)
		e.memo.Remember(user, m, 64+8*len(m.set.bits)+(12+24*viewerSlots)*len(m.set.inList))
		return m, &m.set, reached, nil
	}
	plan.block(&sc.blocked, reached, at)
	return nil, &sc.blocked, reached, nil
}

// has says whether campaign number i (-1: not capped) is blocked.
func (b *blockedSet) has(i int32) bool { return i >= 0 && b.bits[i>>6]&(1<<(i&63)) != 0 }

// block sets b to what reached (sorted by campaign) blocks at at: each
// reached cap that is the campaign's cap now; it returns when the first
// of them ends (math.MaxInt64: none). Its cost is the smaller of
// len(reached) binary searches and one merge of reached with the plan's
// capped campaigns.
func (p *Plan) block(b *blockedSet, reached []counters.Reached, at int64) (until int64) {
	until = math.MaxInt64
	n := len(p.ids)
	b.bits = append(b.bits[:0], make([]uint64, (n+63)/64)...)
	b.inList = append(b.inList[:0], make([]int32, p.numLists)...)
	search := len(reached)*bits.Len(uint(n)) < n
	ids, caps, j := p.ids, p.caps, 0
	for i := range reached {
		r := &reached[i]
		if search {
			k, ok := slices.BinarySearch(ids[j:], r.Campaign)
			if j += k; !ok {
				continue
			}
		} else {
			for j < n && ids[j] < r.Campaign {
				j++
			}
			if j == n {
				break
			}
			if ids[j] != r.Campaign {
				continue
			}
		}
		if !r.Holds(caps[j].count, caps[j].within, at) {
			continue
		}
		b.bits[j>>6] |= 1 << (j & 63)
		for _, l := range p.inLists[p.listsAt[j]:p.listsAt[j+1]] {
			b.inList[l]++
		}
		until = min(until, r.Until)
	}
	return until
}

// scratchPool holds decisions' scratch (the counters' calls are through
// an interface: buffers on the stack would move to the heap).
var scratchPool = sync.Pool{New: func() any {
	return &scratch{reached: make([]counters.Reached, 0, 32), takes: make([]counters.Take, 0, 16), took: make([]int, 0, 16)}
}}

// usedSet is what a request has chosen so far (a few ads at most), and
// the user's reached caps as the counters had them.
type usedSet struct {
	ads, campaigns []int64
	labels         []marquee.Label // the labels of the campaigns chosen (competitive exclusion)
	reached        []counters.Reached
	blocked        *blockedSet // reached in the plan's numbers (nil: none, or Explain's, which searches reached)
	memo           *blockMemo  // the user's memo, when blocked is its set
	leftOut        uint8       // why campaigns of the list weighed last were left out, beyond reasons no request changes: byViewer, byUsed
	viewerKey      uint64      // the request's targeting fields, when it has no keywords (keyed)
	keyed          bool
	capsDown       bool             // the counters could not be read: no capped campaign is served
	v              targeting.Viewer // the request's targeting fields, compiled (a copy: nothing escapes)
	at             int64            // the decision's time, unix ns
	bits           *[]uint64        // scratch of pickParts
	// filtered: the campaign checked now passed its list's filter, which
	// checked the indexed rules of its tree (the rest are left).
	filtered bool
	multiKV  bool // the slot's key-values name a key more than once
	// why is the furthest check a candidate of the slot's last pick
	// failed (marquee.Outcome's order): why the slot stays empty.
	why marquee.Outcome
	// clock is the decision's local time in the last time zone read (at
	// is one instant for the whole decision).
	clock targeting.Clock
}

// reachedBy reads the caps r's user has reached at now (none without a
// user); capsDown says the counters could not be read.
func (e *Engine) reachedBy(ctx context.Context, r *Request, now time.Time) (reached []counters.Reached, capsDown bool) {
	if r.User == 0 {
		return nil, false
	}
	reached, err := e.counters.Reached(ctx, r.User, now, nil)
	return reached, err != nil
}

// note records that a candidate failed at check o (see why).
func (u *usedSet) note(o marquee.Outcome) {
	if o > u.why {
		u.why = o
	}
}

func (u *usedSet) add(ad, campaign int64) {
	u.ads, u.campaigns = append(u.ads, ad), append(u.campaigns, campaign)
}

// chose records choice ch: its ad, its campaign and its campaign's
// labels.
func (u *usedSet) chose(ch Choice) {
	u.add(ch.Ad.ID, ch.Campaign.ID)
	u.labels = append(u.labels, ch.Campaign.Labels...)
}

// draws is how many times pick draws a campaign by weight before it
// weighs the whole tier: with most campaigns eligible, one or two draws
// decide; with few, the full pass does.
const draws = 8

// pick chooses one ad for placement pl: the highest tier with an eligible
// campaign (one whose rules let it serve this request and that has an
// eligible ad); within it, a campaign by weight — a campaign's chance is
// its weight, whatever its number of ads — then one of its eligible ads,
// each as likely. Drawing by weight and drawing again when the campaign
// drawn is not eligible keeps the chances in proportion to the weights of
// the eligible ones; after draws misses, one weighted pass over the tier
// decides. It allocates nothing.
func (p *Plan) pick(pl *marquee.Placement, r *Request, used *usedSet, now time.Time, rnd Random, e *Engine) (Choice, bool) {
	lists := p.lists[pl.Name]
	if lists == nil {
		return Choice{}, false
	}
	for t := range lists {
		l := &lists[t]
		if len(l.camps) == 0 {
			continue
		}
		if used.blocked != nil && int(used.blocked.inList[l.id]) == len(l.camps) ||
			used.memo != nil && used.memo.skips(l.id, used) {
			// Every campaign at the user's cap, or nothing for the user a
			// moment ago (for a reason no request changes: mostly caps,
			// the memo being of users with many).
			used.note(marquee.CappedOut)
			continue
		}
		if l.byKV != nil || l.filter != nil {
			if ch, ok := p.pickParts(l, t, r, used, now, rnd, e); ok {
				return ch, true
			}
			used.exhausted(l)
			continue
		}
		if p.byECPM(t) {
			used.leftOut = 0
			if ch, ok := p.weighed(l, t, r, used, now, rnd, e); ok {
				return ch, true
			}
			used.exhausted(l)
			continue
		}
		total := l.cum[len(l.cum)-1]
		for range draws {
			x := int(rnd.Float64() * float64(total))
			i, _ := slices.BinarySearch(l.cum, x+1) // the first running sum past x
			if ch, ok := p.adOf(&l.camps[min(i, len(l.camps)-1)], r, used, now, rnd, e); ok {
				return ch, true
			}
		}
		used.leftOut = 0
		if ch, ok := p.weighed(l, t, r, used, now, rnd, e); ok {
			return ch, true
		}
		used.exhausted(l)
	}
	return Choice{}, false
}

// maxParts bounds the parts of a list a request weighs: the campaigns
// without an index key, and those of each of its key-values (a page's and
// a slot's).
const maxParts = 1 + 2*marquee.MaxKVPairs

// pickParts is pick's draw in list l of tier t when its campaigns have
// targeting trees: among the campaigns without an index key and those of
// the request's own key-values only (when l is indexed by key-value), so
// that campaigns on other values cost nothing; and, within each part,
// among the campaigns its filter lets through (targeting.Filter), so
// that a request every campaign's rules exclude costs a few bitset
// operations, not one evaluation per campaign. A campaign reached through
// several of the request's values (a key sent with many) counts once,
// through the first of them it takes (canonical), so that chances stay
// in proportion to weights. It allocates nothing once the decision's
// scratch has grown to the plan.
func (p *Plan) pickParts(l *tierList, t int, r *Request, used *usedSet, now time.Time, rnd Random, e *Engine) (Choice, bool) {
	var buf [maxParts]*tierList
	parts := buf[:0]
	if l.byKV == nil {
		parts = append(parts, l)
	} else {
		if len(l.open.camps) > 0 {
			parts = append(parts, l.open)
		}
		for _, kv := range used.v.KV {
			if len(parts) < maxParts && slices.Contains(l.keys, kv.Key) {
				if part := l.byKV[kv]; part != nil {
					parts = append(parts, part)
				}
			}
		}
	}
	used.leftOut = byViewer // what the list has for the user depends on the request's targeting
	// Each part's eligible campaigns, as far as its filter tells: a bit
	// each (every campaign of a part without a filter).
	var bitsBuf [maxParts][]uint64
	words, most, n := 0, 0, 0 // n: the campaigns of the parts
	for _, part := range parts {
		words += (len(part.camps) + 63) / 64
		most = max(most, (len(part.camps)+63)/64)
		n += len(part.camps)
	}
	scratch := append((*used.bits)[:0], make([]uint64, words+most)...)
	*used.bits = scratch
	tmp, scratch := scratch[words:], scratch[:words]
	total, eligible, weight := 0, 0, 0
	for k, part := range parts {
		total += part.cum[len(part.cum)-1]
		w := (len(part.camps) + 63) / 64
		b := scratch[:w:w]
		bitsBuf[k], scratch = b, scratch[w:]
		if part.filter != nil {
			eligible += part.filter.Eligible(&used.v, b, tmp[:w])
		} else {
			targeting.SetAll(b, len(part.camps))
			eligible += len(part.camps)
		}
	}
	if eligible == 0 {
		used.note(marquee.Untargeted)
		return Choice{}, false
	}
	if !p.byECPM(t) {
		// First draws over every campaign, a miss when the filter left it
		// out (when most pass: one draw or two decide); then draws among
		// those the filters let through only (their weights summed once);
		// a campaign drawn that may not serve is never drawn again.
		for phase := range 2 {
			sparse := phase == 1
			if !sparse && eligible*4 < n {
				continue // few pass the filters: draw among them at once
			}
			if sparse {
				weight = 0
				for k, part := range parts {
					weight += part.setWeight(bitsBuf[k])
				}
			}
			for range draws {
				if sparse && weight <= 0 {
					break
				}
				f := rnd.Float64()
				x := int(f * float64(total))
				if sparse {
					x = int(f * float64(weight))
				}
				for k, part := range parts {
					i, ok := part.locate(bitsBuf[k], sparse, &x)
					if !ok {
						continue
					}
					ca, b := &part.camps[i], bitsBuf[k]
					if b[i>>6]&(1<<(i&63)) == 0 {
						break
					}
					if used.canonical(part, ca) {
						used.filtered = part.filter != nil
						ch, ok := p.adOf(ca, r, used, now, rnd, e)
						used.filtered = false
						if ok {
							return ch, true
						}
					}
					b[i>>6] &^= 1 << (i & 63)
					if sparse {
						weight -= ca.c.Weight
					}
					break
				}
			}
		}
	}
	var wg weighing
	for k, part := range parts {
	set:
		for wi, word := range bitsBuf[k] {
			for ; word != 0; word &= word - 1 {
				if !wg.weigh(p, t, part, &part.camps[wi<<6+bits.TrailingZeros64(word)], r, used, now, rnd, e) {
					break set
				}
			}
		}
	}
	return wg.best, wg.best.Ad != nil
}

// setWeight is the weight of l's campaigns whose bit b holds.
func (l *tierList) setWeight(b []uint64) int {
	w := 0
	for wi, word := range b {
		for ; word != 0; word &= word - 1 {
			w += l.camps[wi<<6+bits.TrailingZeros64(word)].c.Weight
		}
	}
	return w
}

// locate finds the campaign of l at weight *x of a draw: among every
// campaign (by the running sums), or, sparse, among those whose bit b
// holds. false, with *x less l's weight, when the draw lies past l.
func (l *tierList) locate(b []uint64, sparse bool, x *int) (int, bool) {
	if !sparse {
		if w := l.cum[len(l.cum)-1]; *x >= w {
			*x -= w
			return 0, false
		}
		i, _ := slices.BinarySearch(l.cum, *x+1)
		return min(i, len(l.camps)-1), true
	}
	for wi, word := range b {
		for ; word != 0; word &= word - 1 {
			i := wi<<6 + bits.TrailingZeros64(word)
			if *x -= l.camps[i].c.Weight; *x < 0 {
				return i, true
			}
		}
	}
	return 0, false
}

// weighing is a pass over a list's campaigns (weighed), or over the
// parts pickParts weighs: the choice so far, and the weights of the
// campaigns it was drawn among.
type weighing struct {
	best Choice
	sum  int
}

// weigh weighs campaign ca of part (of tier t) in the pass; false when
// the rest of the part bids less (a tier drawn by eCPM).
func (wg *weighing) weigh(p *Plan, t int, part *tierList, ca *campAds, r *Request, used *usedSet, now time.Time, rnd Random, e *Engine) bool {
	if p.byECPM(t) && wg.best.Ad != nil && ca.c.ECPM < wg.best.Campaign.ECPM {
		return false // the part is sorted by eCPM: the rest bid less
	}
	if !used.canonical(part, ca) {
		return true
	}
	used.filtered = part.filter != nil
	ch, ok := p.adOf(ca, r, used, now, rnd, e)
	used.filtered = false
	if !ok {
		return true
	}
	if p.byECPM(t) && wg.best.Ad != nil && ca.c.ECPM > wg.best.Campaign.ECPM {
		wg.best, wg.sum = Choice{}, 0 // outbids what another part offered
	}
	wg.sum += ca.c.Weight
	if rnd.Float64()*float64(wg.sum) < float64(ca.c.Weight) {
		wg.best = ch
	}
	return true
}

// takes says whether the request meets tree: the rules its list's filter
// did not check when the campaign passed the filter (filtered), else the
// whole tree; the day-parts read the decision's clock.
func (u *usedSet) takes(tree *targeting.Tree) bool {
	if u.filtered {
		return tree.MatchesRestOn(&u.v, u.at, &u.clock)
	}
	return tree.Matches(&u.v, u.at)
}

// canonical says whether campaign ca of part is weighed there: always in
// the part of campaigns without an index key; in a key-value's part, when
// that value is the first of the request's values of the key the
// campaign takes.
func (u *usedSet) canonical(part *tierList, ca *campAds) bool {
	if part.kv.Key == "" || !u.multiKV || len(ca.vals) == 1 {
		return true // reachable through this part only
	}
	for _, kv := range u.v.KV {
		if kv.Key == part.kv.Key && slices.Contains(ca.vals, kv.Value) {
			return kv.Value == part.kv.Value
		}
	}
	return false
}

// Reasons a campaign was left out that a request changes (usedSet.leftOut).
const (
	byViewer = 1 << iota // the request's targeting fields or keywords
	byUsed               // already chosen for another slot of the request
)

// exhausted notes in the user's memo that list l, just weighed whole, had
// nothing for the user: for any request when no campaign was left out
// for a reason of the request, else for requests of these targeting
// fields, when that was the only such reason.
func (u *usedSet) exhausted(l *tierList) {
	switch until := u.at + int64(exhaustFor); {
	case u.memo == nil || u.leftOut&byUsed != 0:
	case u.leftOut == 0:
		u.memo.exhausted[l.id].Store(until)
	case u.keyed:
		u.memo.forViewer[int(l.id)*viewerSlots+int(u.viewerKey%viewerSlots)].Store(&viewerMark{key: u.viewerKey, until: until})
	}
}

// skips says whether list number l had nothing for the user a moment ago,
// for any request or for one of u's targeting fields.
func (m *blockMemo) skips(l int32, u *usedSet) bool {
	if m.exhausted[l].Load() > u.at {
		return true
	}
	if !u.keyed {
		return false
	}
	mk := m.forViewer[int(l)*viewerSlots+int(u.viewerKey%viewerSlots)].Load()
	return mk != nil && mk.key == u.viewerKey && mk.until > u.at
}

// viewerMark is a list that had nothing for a user's requests of one set
// of targeting fields (key), until until (unix ns).
type viewerMark struct {
	key   uint64
	until int64
}

// viewerSlots is how many sets of targeting fields a memo remembers a
// list for (the last of each slot).
const viewerSlots = 8

// viewerKey is the request's targeting fields in one number: the
// contract's four, and a hash of what trees read (the slots' key-values
// too).
func viewerKey(r *Request) uint64 {
	v := &r.Viewer
	k := uint64(uint32(v.Age))<<32 | uint64(v.Gender)<<24 | uint64(v.Platform)<<16 | uint64(uint16(v.Country))
	if h := v.Hash(); h != 0 {
		k ^= h
	}
	for i := range r.Slots {
		for _, kv := range r.Slots[i].KV {
			k ^= targeting.HashKV(kv) * uint64(i+1)
		}
	}
	return k
}

// weighed chooses in one pass over list l of tier t among its eligible
// campaigns, by weight; in a tier drawn by eCPM (l sorted by eCPM,
// highest first), only among those of the first eligible one's eCPM. It
// allocates nothing.
func (p *Plan) weighed(l *tierList, t int, r *Request, used *usedSet, now time.Time, rnd Random, e *Engine) (Choice, bool) {
	var wg weighing
	for i := range l.camps {
		if !wg.weigh(p, t, l, &l.camps[i], r, used, now, rnd, e) {
			break
		}
	}
	return wg.best, wg.best.Ad != nil
}

// adOf chooses one of campaign ca's eligible ads for r, each as likely,
// when the campaign's rules let it serve r; it allocates nothing. As pick
// does with campaigns, it draws an ad and checks it, and draws again when
// it may not serve — most of the time one check instead of one per ad —
// and after draws misses, chooses among all the eligible in one pass.
func (p *Plan) adOf(ca *campAds, r *Request, used *usedSet, now time.Time, rnd Random, e *Engine) (Choice, bool) {
	c := ca.c
	if used.blocked != nil && used.blocked.has(ca.capped) {
		used.note(marquee.CappedOut)
		return Choice{}, false
	}
	switch p.campaignRules(c, r, used, now) {
	case "":
	case Duplicate, Excluded:
		used.leftOut |= byUsed
		used.note(marquee.InRequest)
		return Choice{}, false
	case RoadblockOut: // the request's slots
		used.leftOut |= byViewer
		used.note(marquee.InRequest)
		return Choice{}, false
	case NoKeyword, NotTargeted:
		used.leftOut |= byViewer
		used.note(marquee.Untargeted)
		return Choice{}, false
	case NotActive, NotApproved:
		used.note(marquee.NotRunning)
		return Choice{}, false
	default: // a cap: the same for any request now
		used.note(marquee.CappedOut)
		return Choice{}, false
	}
	if c.Rotation != nil && (c.Rotation.Type == marquee.RotateWeighted || c.Rotation.Type == marquee.RotateOptimized) {
		a, leftOut := p.rotated(ca.ads, c, r, used, now, rnd, e)
		if a == nil {
			used.leftOut |= leftOut
			return Choice{}, false
		}
		return Choice{Ad: a, Campaign: c}, used.paced(e, c, now)
	}
	if len(ca.ads) > 1 {
		for range draws {
			if a := ca.ads[int(rnd.Float64()*float64(len(ca.ads)))]; adWhy(a, c, r, used, now) == "" {
				return Choice{Ad: a, Campaign: c}, used.paced(e, c, now)
			}
		}
	}
	var chosen *Ad
	n, leftOut := 0, uint8(0)
	for _, a := range ca.ads {
		switch adWhy(a, c, r, used, now) {
		case "":
		case Duplicate:
			leftOut |= byUsed
			used.note(marquee.InRequest)
			continue
		default:
			leftOut |= byViewer
			used.note(marquee.Untargeted)
			continue
		}
		n++
		if n == 1 || rnd.Float64()*float64(n) < 1 {
			chosen = a
		}
	}
	if chosen == nil {
		used.leftOut |= leftOut
		return Choice{}, false
	}
	return Choice{Ad: chosen, Campaign: c}, used.paced(e, c, now) // pacing last: it costs the most
}

// paced says whether pacing and budgets let campaign c serve at now, and
// notes why not (its goal or budget met, or ahead of its pace; budgets
// unknown count as paced) when they do not.
func (u *usedSet) paced(e *Engine, c *Campaign, now time.Time) bool {
	switch e.paceWhy(c, now) {
	case "":
		return true
	case AheadOfPace, AheadOfBudget, BudgetUnknown:
		u.note(marquee.PacedOut)
	default:
		u.note(marquee.GoalReached)
	}
	return false
}

// paceWhy is why pacing (a goal) or a budget keeps campaign c from
// serving at now, or "".
func (e *Engine) paceWhy(c *Campaign, now time.Time) string {
	if w := e.pacing.why(c, now); w != "" || e.budgets == nil {
		return w
	}
	return e.budgets.why(c, now)
}

// emptyWhy is why a slot of placement name found no candidate at all:
// no campaign has an ad, or none has one the placement takes.
func (p *Plan) emptyWhy(name string) marquee.Outcome {
	if lists := p.lists[name]; lists != nil {
		for t := range lists {
			if len(lists[t].camps) > 0 {
				return marquee.Untargeted // not reached: a candidate fails a check
			}
		}
	}
	if len(p.ads) > 0 {
		return marquee.WrongSize
	}
	return marquee.NoCandidate
}

// adWhy says why ad a of campaign c (nil: none) itself may not serve r at
// now (its window, its targeting, already in the request), or "".
func adWhy(a *Ad, c *Campaign, r *Request, used *usedSet, now time.Time) string {
	var loc *time.Location
	if c != nil {
		loc = c.loc
	}
	switch {
	case !a.span.has(used.at) || !targeting.MatchesAny(a.conds, &used.v) || !a.tree.MatchesIn(&used.v, used.at, loc):
		return AdTargeting
	case slices.Contains(used.ads, a.ID):
		return Duplicate
	}
	return ""
}

// Why an ad is not eligible (Explain's words; "" when it is).
const (
	AdTargeting = "ad targeting (or the ad's window)"
	NotActive   = "campaign not active now"
	NotApproved = "campaign not approved (a draft, or waiting for approval)"
	NotThisType = "creative type not taken by the placement"
	NotThisSize = "creative size not taken by the placement"
	NotHere     = "ad limited to other placements"
	Duplicate   = "already in this request"
	NoKeyword   = "no keyword of the campaign"
	NotTargeted = "campaign targeting"
	Capped      = "frequency cap reached"
	CapsDown    = "frequency caps unavailable"
	GoalMet     = "goal met"
	GoalPending = "goal may be met: waiting for the reports"
	AheadOfPace = "ahead of even pacing"
)

// notActive is why a campaign in state does not serve now: not approved
// yet, or paused or out of its flight.
func notActive(state string) string {
	if state == marquee.StateDraft || state == marquee.StatePending {
		return NotApproved
	}
	return NotActive
}

// why says why ad a of campaign c may not fill placement pl for request r
// at now, or "" when it may. It allocates nothing.
func (p *Plan) why(a *Ad, c *Campaign, pl *marquee.Placement, r *Request, used *usedSet, now time.Time, e *Engine) string {
	if w := p.campaignWhy(c, r, used, now, e); w == NotActive || w == NotApproved {
		return w
	}
	if w := fitWhy(a, pl); w != "" {
		return w
	}
	if c.Roadblock != "" && !slices.Contains(a.Placements, pl.Name) {
		return NotHere // a roadblock's ad fills the placements it names
	}
	if w := adWhy(a, c, r, used, now); w != "" {
		return w
	}
	return p.campaignWhy(c, r, used, now, e)
}

// campaignWhy says why campaign c may not serve r at now (its state and
// flight, already in the request, keywords, targeting, cap, pacing), or
// "".
func (p *Plan) campaignWhy(c *Campaign, r *Request, used *usedSet, now time.Time, e *Engine) string {
	if w := p.campaignRules(c, r, used, now); w != "" {
		return w
	}
	return e.paceWhy(c, now)
}

// campaignRules is campaignWhy but pacing: what is cheap to check, and
// checked before a campaign's ads (pacing after them).
func (p *Plan) campaignRules(c *Campaign, r *Request, used *usedSet, now time.Time) string {
	switch {
	case c.State != marquee.StateActive || !c.flight.has(used.at): // c.ActiveAt(now)
		return notActive(c.State)
	case slices.Contains(used.campaigns, c.ID):
		return Duplicate
	case len(c.Labels) > 0 && len(used.labels) > 0 && used.excludedBy(c):
		return Excluded
	case c.Roadblock != "" && p.roadblockMissing(c, r):
		return RoadblockOut
	case len(c.Keywords) > 0 && !anyIn(c.Keywords, r.Keywords):
		return NoKeyword
	case !targeting.MatchesAny(c.conds, &used.v) || !used.takes(c.tree):
		return NotTargeted
	}
	if fc := c.FrequencyCap; fc != nil && r.User != 0 {
		if used.capsDown {
			return CapsDown
		}
		if used.blocked == nil && counters.Blocks(used.reached, c.ID, fc.Count, window(fc.Window, c), used.at) { // else adOf checked the bit
			return Capped
		}
	}
	return ""
}

func anyIn(want, have []string) bool {
	for _, k := range have {
		if slices.Contains(want, k) {
			return true
		}
	}
	return false
}
