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
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/index"
)

// Ad is what a decision needs of an ad beyond the index: its campaign,
// creative and the placements it is limited to.
type Ad struct {
	ID         int64
	CampaignID int64
	Creative   *marquee.Creative
	Placements []string
}

// Campaign is a campaign as decisions read it: its settings, and its
// tier's rank (0 highest).
type Campaign struct {
	marquee.Campaign
	Tier int
}

// Plan is what decisions read besides the index. It is never mutated
// after it is built: a change builds a new one (sharing what it did not
// change) and swaps it in.
type Plan struct {
	campaigns  map[int64]*Campaign
	placements map[string]*marquee.Placement
	ads        map[int64]*Ad
	bit        map[string]uint64 // a bit for each placement (the first 64)
	// byID is ads by id, with each ad's campaign (nil when it is not in
	// the plan): the candidate loop's look-up, an index instead of two map
	// look-ups (ids are dense: the store numbers them).
	byID []slot
}

// slot is an ad of byID, its campaign, and the placements (by their bit,
// see Plan.bit) whose type and size its creative fits and that it may run
// in — computed once, not at every decision.
type slot struct {
	ad       *Ad
	campaign *Campaign
	fits     uint64
}

// index builds byID from ads, campaigns and placements.
func (p *Plan) index() {
	n := int64(0)
	for id := range p.ads {
		n = max(n, id+1)
	}
	p.byID = make([]slot, n)
	p.bit = make(map[string]uint64, len(p.placements))
	for name := range p.placements {
		if len(p.bit) < 64 {
			p.bit[name] = 1 << len(p.bit)
		}
	}
	for id, a := range p.ads {
		s := slot{ad: a, campaign: p.campaigns[a.CampaignID]}
		for name, b := range p.bit {
			if fitWhy(a, p.placements[name]) == "" {
				s.fits |= b
			}
		}
		p.byID[id] = s
	}
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

// Ad returns what decisions know of ad id (an ad in a campaign).
func (p *Plan) Ad(id int64) (*Ad, bool) {
	a, ok := p.ads[id]
	return a, ok
}

// Campaign returns campaign id, if it is in the plan.
func (p *Plan) Campaign(id int64) (*Campaign, bool) {
	c, ok := p.campaigns[id]
	return c, ok
}

// Engine holds the current Plan and decides over it. Its methods are safe
// for concurrent use; the feed is its only writer.
type Engine struct {
	ix       *index.Index
	counters Counters
	pacing   *Pacing
	plan     atomic.Pointer[Plan]
	mu       sync.Mutex // writers
}

// New returns an engine over the ad index ix and counters.
func New(ix *index.Index, counters Counters) *Engine {
	e := &Engine{ix: ix, counters: counters, pacing: NewPacing()}
	e.plan.Store(&Plan{campaigns: map[int64]*Campaign{}, placements: map[string]*marquee.Placement{}, ads: map[int64]*Ad{}})
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
	p := &Plan{campaigns: make(map[int64]*Campaign, len(cs)), placements: make(map[string]*marquee.Placement, len(ps)), ads: old.ads}
	for i := range cs {
		if cs[i].State == marquee.StateArchived {
			continue
		}
		p.campaigns[cs[i].ID] = &Campaign{Campaign: cs[i], Tier: slices.Index(marquee.Priorities, cs[i].Priority)}
	}
	for i := range ps {
		p.placements[ps[i].Name] = &ps[i]
	}
	p.index()
	e.plan.Store(p)
}

// PutAds sets the plan's view of ads (those without a campaign are left
// out: decisions serve campaigns' ads) and deletes the ads of dels; reset
// replaces every ad.
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
	for _, id := range dels {
		delete(ads, id)
	}
	for _, a := range puts {
		if a.CampaignID == 0 {
			delete(ads, a.ID)
			continue
		}
		ads[a.ID] = &Ad{ID: a.ID, CampaignID: a.CampaignID, Creative: a.Creative, Placements: a.Placements}
	}
	p := &Plan{campaigns: old.campaigns, placements: old.placements, ads: ads}
	p.index()
	e.plan.Store(p)
}

// Request is a decision request once validated: the slots to fill, the
// viewer (Query holds the targeting dimensions as the index compiles
// them; Gender, Country and Platform their names), the user's hashed key
// (0: none, and no frequency cap can apply) and keywords.
type Request struct {
	Slots    []Slot
	Query    index.Query
	Age      int
	Gender   string // "M", "F" or ""
	Country  string // ISO 3166-1 alpha-2, or ""
	Platform string // android, ios, web, or ""
	User     uint64
	Keywords []string
	// Preview decides without consequence: no cap serve is taken and
	// nothing counts toward pacing (the console's "preview a decision").
	Preview bool
}

// Slot is one place to fill: a div name the answer is keyed by, the
// placement, and how many ads it takes.
type Slot struct {
	Div       string
	Placement string
	Count     int
}

// Choice is an ad chosen for a slot.
type Choice struct {
	Ad       *Ad
	Campaign *Campaign
}

// Random is the source of the lottery: a float in [0, 1).
type Random interface{ Float64() float64 }

// maxCandidates bounds the ads a slot considers (the index's matches, in
// end-time order): a decision stays bounded at any catalog size.
const maxCandidates = 10_000

var idPool = sync.Pool{New: func() any { b := make([]int64, 0, 1024); return &b }}

// Decide fills the slots of r at now: for each slot its chosen ads (none
// when nothing is eligible). A request shows an ad, and a campaign, at
// most once across its slots. A chosen capped campaign takes a serve from
// the counters for r.User; when the counters cannot be read, or refuse
// the serve (another decision took the last one), the campaign is left
// out of the request and another chosen: caps hold even when the
// counters are down (capped campaigns are not served then).
func (e *Engine) Decide(ctx context.Context, r *Request, now time.Time, rnd Random) [][]Choice {
	plan := e.plan.Load()
	var used usedSet
	if r.User != 0 {
		var err error
		if used.seen, err = e.counters.Seen(ctx, r.User); err != nil {
			used.capsDown = true
		}
	}
	bp := idPool.Get().(*[]int64)
	q := r.Query
	q.Offset, q.Limit = 0, maxCandidates
	ids := e.ix.Snapshot().AppendIDs((*bp)[:0], &q, now)
	out := make([][]Choice, len(r.Slots))
	for si, s := range r.Slots {
		pl := plan.placements[s.Placement]
		if pl == nil {
			continue // no such placement (the route refuses it before)
		}
		for len(out[si]) < s.Count {
			ch, ok := plan.pick(ids, pl, r, &used, now, rnd, e)
			if !ok {
				break
			}
			if fc := ch.Campaign.FrequencyCap; fc != nil && r.User != 0 && !r.Preview {
				took, err := e.counters.Take(ctx, r.User, ch.Campaign.ID, fc.Count, window(fc.Window, ch.Campaign), now)
				if err != nil || !took {
					used.campaigns = append(used.campaigns, ch.Campaign.ID) // capped meanwhile: choose again without it
					continue
				}
			}
			used.add(ch.Ad.ID, ch.Campaign.ID)
			out[si] = append(out[si], ch)
			if !r.Preview {
				e.pacing.decided(ch.Campaign, now)
			}
		}
	}
	*bp = ids[:0]
	idPool.Put(bp)
	return out
}

// usedSet is what a request has chosen so far (a few ads at most), and
// the user's serves as the counters had them.
type usedSet struct {
	ads, campaigns []int64
	seen           map[int64][]int64
	capsDown       bool // the counters could not be read: no capped campaign is served
}

func (u *usedSet) add(ad, campaign int64) {
	u.ads, u.campaigns = append(u.ads, ad), append(u.campaigns, campaign)
}

// pick chooses one ad for placement pl among the candidates ids: the
// highest tier with an eligible ad, then a lottery by weight in one pass
// (each eligible ad of the tier replaces the choice with probability
// weight ÷ the tier's weight so far). It allocates nothing.
func (p *Plan) pick(ids []int64, pl *marquee.Placement, r *Request, used *usedSet, now time.Time, rnd Random, e *Engine) (Choice, bool) {
	var best Choice
	tier, total := len(marquee.Priorities), 0
	bit := p.bit[pl.Name] // 0 past the first 64 placements: fit is checked ad by ad
	for _, id := range ids {
		if id >= int64(len(p.byID)) {
			continue // not in a campaign
		}
		s := p.byID[id]
		a, c := s.ad, s.campaign
		if c == nil || c.Tier > tier {
			continue
		}
		if bit != 0 && s.fits&bit == 0 || bit == 0 && fitWhy(a, pl) != "" || p.ruleWhy(a, c, r, used, now, e) != "" {
			continue
		}
		if c.Tier < tier { // a higher tier: it wins over everything so far
			tier, total, best = c.Tier, 0, Choice{}
		}
		total += c.Weight
		if best.Ad == nil || rnd.Float64()*float64(total) < float64(c.Weight) {
			best = Choice{Ad: a, Campaign: c}
		}
	}
	return best, best.Ad != nil
}

// Why an ad is not eligible (Explain's words; "" when it is).
const (
	NotActive   = "campaign not active now"
	NotThisType = "creative type not taken by the placement"
	NotThisSize = "creative size not taken by the placement"
	NotHere     = "ad limited to other placements"
	Duplicate   = "already in this request"
	NoKeyword   = "no keyword of the campaign"
	NotTargeted = "campaign targeting"
	Capped      = "frequency cap reached"
	CapsDown    = "frequency caps unavailable"
	GoalMet     = "goal met"
	AheadOfPace = "ahead of even pacing"
)

// why says why ad a of campaign c may not fill placement pl for request r
// at now, or "" when it may. It allocates nothing.
func (p *Plan) why(a *Ad, c *Campaign, pl *marquee.Placement, r *Request, used *usedSet, now time.Time, e *Engine) string {
	if !c.ActiveAt(now) {
		return NotActive
	}
	if w := fitWhy(a, pl); w != "" {
		return w
	}
	return p.ruleWhy(a, c, r, used, now, e)
}

// ruleWhy is why's part that does not depend on the placement (but the
// campaign's being active, checked first).
func (p *Plan) ruleWhy(a *Ad, c *Campaign, r *Request, used *usedSet, now time.Time, e *Engine) string {
	switch {
	case !c.ActiveAt(now):
		return NotActive
	case slices.Contains(used.ads, a.ID) || slices.Contains(used.campaigns, c.ID):
		return Duplicate
	case len(c.Keywords) > 0 && !anyIn(c.Keywords, r.Keywords):
		return NoKeyword
	case len(c.Conditions) > 0 && !matchesAny(c.Conditions, r):
		return NotTargeted
	}
	if fc := c.FrequencyCap; fc != nil && r.User != 0 {
		if used.capsDown {
			return CapsDown
		}
		if counters.Within(used.seen[c.ID], window(fc.Window, c), now) >= fc.Count {
			return Capped
		}
	}
	return e.pacing.why(c, now)
}

func anyIn(want, have []string) bool {
	for _, k := range have {
		if slices.Contains(want, k) {
			return true
		}
	}
	return false
}

// matchesAny reports whether r matches any of conds, by the ad index's
// rule: every set field of a condition must match (OR across
// conditions), and a dimension the request leaves out filters nothing.
func matchesAny(conds []marquee.Condition, r *Request) bool {
	for i := range conds {
		c := &conds[i]
		if (r.Age == 0 || (c.AgeStart == 0 || r.Age >= c.AgeStart) && (c.AgeEnd == 0 || r.Age <= c.AgeEnd)) &&
			(r.Gender == "" || len(c.Gender) == 0 || slices.Contains(c.Gender, r.Gender)) &&
			(r.Country == "" || len(c.Country) == 0 || slices.Contains(c.Country, r.Country)) &&
			(r.Platform == "" || len(c.Platform) == 0 || slices.Contains(c.Platform, r.Platform)) {
			return true
		}
	}
	return false
}
