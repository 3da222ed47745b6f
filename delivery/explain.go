package delivery

import (
	"cmp"
	"context"
	"slices"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/targeting"
)

// Candidate is an ad a slot considered, and what became of it: Status is
// "chosen", "eligible" (with its campaign's weight and its chance in the
// lottery of its tier), "lower tier", or why it was left out.
type Candidate struct {
	AdID       int64   `json:"adId,string"`
	CampaignID int64   `json:"campaignId,string"`
	Tier       string  `json:"tier"`
	Status     string  `json:"status"`
	Weight     int     `json:"weight,omitempty"`
	Chance     float64 `json:"chance,omitempty"`
	// ECPM is the campaign's eCPM, when its tier is drawn by eCPM.
	ECPM float64 `json:"ecpm,omitempty"`
	// Rotation says how the campaign's rotation weighs the ad among its
	// eligible ones (weighted, sequential, optimized; "" for even).
	Rotation string `json:"rotation,omitempty"`
	// A header-bidding bid's candidate: its bidder, Prebid ad id, deal
	// and CPM after its bidder's adjustment (AdID and CampaignID 0).
	Bidder  string  `json:"bidder,omitempty"`
	BidAdID string  `json:"bidAdId,omitempty"`
	Deal    string  `json:"deal,omitempty"`
	CPM     float64 `json:"cpm,omitempty"`
}

// Outbid is the status of an eligible ad whose campaign's eCPM lost.
const Outbid = "outbid (lower eCPM)"

// Explain decides r as DecideOutcomes does (setting outcomes) and says, for each slot, what became
// of every ad of a campaign: chosen, eligible (weighed), of a lower tier,
// or left out and why. For ad operations (it allocates freely).
func (e *Engine) Explain(ctx context.Context, r *Request, now time.Time, rnd Random, outcomes []marquee.Outcome) ([][]Choice, [][]Candidate) {
	chosen := e.DecideOutcomes(ctx, r, now, rnd, outcomes)
	plan := e.plan.Load()
	reached, capsDown := e.reachedBy(ctx, r, now)
	used := usedSet{reached: reached, capsDown: capsDown, v: r.Viewer, at: now.UnixNano(), wall: r.wallAt(now)}
	out := make([][]Candidate, len(r.Slots))
	for si, s := range r.Slots {
		pl := plan.placements[s.Placement]
		if pl == nil {
			continue
		}
		used.forSlot(r, &r.Slots[si], pl)
		mine := map[int64]bool{}
		for _, ch := range chosen[si] {
			mine[ch.Ad.ID] = true
		}
		var list []Candidate
		best := len(marquee.Priorities)
		for _, a := range plan.ads {
			c := plan.campaigns[a.CampaignID]
			if c == nil {
				continue // archived campaign
			}
			cand := Candidate{AdID: a.ID, CampaignID: c.ID, Tier: c.Priority}
			switch {
			case mine[a.ID]:
				cand.Status = "chosen"
			default:
				if cand.Status = plan.why(a, c, pl, r, &used, now, e); cand.Status == "" {
					cand.Status, cand.Weight = "eligible", c.Weight
				} else if cand.Status == NotTargeted && targeting.MatchesAny(c.conds, &used.v) {
					cand.Status += ": " + c.tree.Why(&used.v, used.at) // the tree's rule that left it out
				} else if cand.Status == AdTargeting && a.span.has(used.at) && targeting.MatchesAny(a.conds, &used.v) {
					cand.Status += ": " + a.tree.WhyIn(&used.v, used.at, c.loc)
				} else if cand.Status == RoadblockOut {
					cand.Status = plan.roadblockWhy(c, r)
				}
			}
			if cand.Status == "chosen" || cand.Status == "eligible" {
				best = min(best, c.Tier)
			}
			list = append(list, cand)
		}
		var top int64 // the best eCPM of the winning tier, when it is drawn by eCPM
		for i := range list {
			c := plan.campaigns[list[i].CampaignID]
			if c.Tier == best && (list[i].Status == "eligible" || list[i].Status == "chosen") {
				top = max(top, c.ECPM)
			}
			if plan.byECPM(c.Tier) {
				list[i].ECPM = float64(c.ECPM) / 1e6
			}
		}
		// A decision draws a campaign by weight, then one of its eligible
		// ads by the campaign's rotation (each as likely, by default): an
		// ad's chance is its campaign's weight over the weights of the
		// competing campaigns (each once, whatever its number of ads),
		// times its share of the campaign's eligible ads.
		total, ads := 0, map[int64][]*Ad{} // ads: each competing campaign's eligible ads
		for i := range list {
			c := plan.campaigns[list[i].CampaignID]
			if list[i].Status == "eligible" && c.Tier > best {
				list[i].Status, list[i].Weight = "lower tier", 0
			}
			if list[i].Status == "eligible" && c.Tier == best && plan.byECPM(best) && c.ECPM < top {
				list[i].Status = Outbid
			}
			if (list[i].Status == "eligible" || list[i].Status == "chosen") && c.Tier == best {
				if ads[c.ID] = append(ads[c.ID], plan.ads[list[i].AdID]); len(ads[c.ID]) == 1 {
					total += c.Weight
				}
			}
		}
		for i := range list {
			if list[i].Status == "eligible" || list[i].Status == "chosen" {
				c := plan.campaigns[list[i].CampaignID]
				share, why := e.rotationWhy(c, plan.ads[list[i].AdID], ads[c.ID])
				list[i].Weight, list[i].Rotation = c.Weight, why
				list[i].Chance = float64(c.Weight) / float64(max(total, 1)) * share
			}
		}
		if len(s.Bids) > 0 {
			list = append(list, e.biddingOf().bidCandidates(&r.Slots[si], pl, chosen[si], now)...)
		}
		slices.SortFunc(list, func(a, b Candidate) int {
			return cmp.Or(cmp.Compare(statusRank(a.Status), statusRank(b.Status)), cmp.Compare(a.AdID, b.AdID))
		})
		out[si] = list
		for _, ch := range chosen[si] {
			used.chose(ch)
		}
	}
	return chosen, out
}

func statusRank(s string) int {
	switch s {
	case "chosen":
		return 0
	case "eligible":
		return 1
	case "lower tier", Outbid:
		return 2
	}
	return 3
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
	case !a.Creative.FitsIn(used.room):
		return PodFull
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
	TooLong     = "video longer than the placement takes (its maxDurationMs)"
	PodFull     = "video longer than what is left of the ad break (podDurationMs)"
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
	return e.paceWhy(c, now, used.wall)
}

// campaignRules is campaignWhy but pacing: what is cheap to check, and
// checked before a campaign's ads (pacing after them).
func (p *Plan) campaignRules(c *Campaign, r *Request, used *usedSet, now time.Time) string {
	switch {
	case !c.live.has(used.at): // c.State == active && c.ActiveAt(now)
		return notActive(c.State)
	case used.full(c):
		return Duplicate
	case len(c.Labels) > 0 && len(used.labels) > 0 && !slices.Contains(used.campaigns, c.ID) && used.excludedBy(c):
		// (a campaign on the page again passed its labels' check the
		// first time, against the choices before and after it)
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
