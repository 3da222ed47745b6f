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
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marquee"
	"marquee/targeting"
)

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
	// nonces are the active advertisers' conversion secrets' nonces
	// (ConversionNonce), of those that made one.
	nonces  atomic.Pointer[map[int64]string]
	started time.Time // when this engine began counting decisions
}

// New returns an engine with counters for the frequency caps.
func New(counters Counters) *Engine {
	e := &Engine{counters: counters, pacing: NewPacing(), started: time.Now()}
	if c, ok := counters.(interface{ InProcess() bool }); ok {
		e.readFirst = c.InProcess()
	}
	e.memo, _ = counters.(memoCounters)
	e.nonces.Store(&map[int64]string{})
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
	sameFits := len(pputs) == 0 && len(pgone) == 0 // the same ads and placements: which ads fit where is old's
	ids := slices.Clone(gone)
	for i := range puts {
		ids = append(ids, puts[i].ID)
	}
	if !sameFits || !p.patch(old, ids) {
		p.index(old, sameFits)
	}
	e.plan.Store(p)
}

// compileCampaign is mc as decisions read it, keeping its decisions'
// stats from the plan before. The caller holds e.mu.
func (e *Engine) compileCampaign(mc marquee.Campaign, old *Plan) *Campaign {
	c := &Campaign{Campaign: mc, Tier: marquee.TierOf(mc.Priority), conds: targeting.CompileAll(mc.Conditions)}
	if mc.State == marquee.StateActive {
		c.live = spanOf(mc.StartAt, mc.EndAt)
	}
	if c.loc, _ = marquee.ParseTimeZone(mc.TimeZone); c.loc == nil {
		c.loc = time.UTC // a zone that no longer loads
	}
	// An edit that leaves the targeting tree and time zone as they were
	// keeps the compiled tree, and with its ID the targeting filters of
	// the lists the campaign is in (filterOf): at 100,000 campaigns in one
	// list, building its filter again was most of an edit's cost.
	if was := old.campaigns[c.ID]; was != nil && was.TimeZone == mc.TimeZone && reflect.DeepEqual(was.Targeting, mc.Targeting) {
		c.tree = was.tree
	} else {
		c.tree = targeting.CompileTree(mc.Targeting, c.loc)
	}
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
		ads = maps.Clone(old.ads)
	}
	// The campaigns whose ads change (before and after), and the ads
	// they gain: what patchAds patches.
	var camps []int64
	var added []*Ad
	touch := func(id int64) {
		if a := old.ads[id]; a != nil {
			camps = append(camps, a.CampaignID)
		}
	}
	defaults := maps.Clone(old.defaults)
	for _, id := range dels {
		touch(id)
		delete(ads, id)
		delete(defaults, id)
	}
	for _, a := range puts {
		touch(a.ID)
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
		pa := planAd(a)
		ads[a.ID] = pa
		added = append(added, pa)
		camps = append(camps, a.CampaignID)
	}
	p := &Plan{campaigns: old.campaigns, placements: old.placements, ads: ads, defaults: defaults, remnantECPM: old.remnantECPM}
	if reset || !p.patchAds(old, camps, added) {
		p.index(old, false)
	}
	e.plan.Store(p)
}

// resetAds replaces the plan's ads with planned, the ads of campaigns
// that serve (planAd's), of the store's ads ids: those are no placement's
// default ad in no campaign any more (see PutAds).
func (e *Engine) resetAds(planned []*Ad, ids []int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.plan.Load()
	ads := make(map[int64]*Ad, len(planned))
	for _, a := range planned {
		ads[a.ID] = a
	}
	defaults := maps.Clone(old.defaults)
	for _, id := range ids {
		delete(defaults, id)
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
