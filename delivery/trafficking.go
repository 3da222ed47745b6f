package delivery

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// Trafficking in decisions (docs/api.md#trafficking): competitive
// exclusion, roadblocks and the rotation of a campaign's ads.

// Why an ad is left out by trafficking (Explain's words).
const (
	Excluded     = "competitive exclusion: a campaign with a shared exclusive label is on the page"
	RoadblockOut = "roadblock: cannot fill every one of its placements in this request"
)

// excludedBy says whether campaign c shares a label with a campaign the
// request has chosen where either side marks it exclusive: competitive
// exclusion holds whichever of the two campaigns is chosen first.
func (u *usedSet) excludedBy(c *Campaign) bool {
	for _, l := range c.Labels {
		for _, o := range u.labels {
			if l.Name == o.Name && (l.Exclusive || o.Exclusive) {
				return true
			}
		}
	}
	return false
}

// rotated chooses one of ads (campaign c's, for the slot) by c's
// rotation — weighted by its weights, optimized by the ads' click-through
// rates, else each as likely (sequential too: its ad is set once the
// serve is counted, see sequenced) — among those eligible. It allocates
// nothing for up to 32 eligible ads.
func (p *Plan) rotated(ads []*Ad, c *Campaign, r *Request, used *usedSet, now time.Time, rnd Random, e *Engine) (*Ad, uint8) {
	var buf [32]*Ad
	ok := buf[:0]
	leftOut := uint8(0)
	for _, a := range ads {
		switch adWhy(a, c, r, used, now) {
		case "":
			ok = append(ok, a)
		case Duplicate, PodFull:
			leftOut |= byUsed
			used.note(marquee.InRequest)
		default:
			leftOut |= byViewer
			used.note(marquee.Untargeted)
		}
	}
	if len(ok) == 0 {
		return nil, leftOut
	}
	var wbuf [32]float64
	weights := e.rotationWeights(c, ok, wbuf[:0])
	total := 0.0
	for _, w := range weights {
		total += w
	}
	x := rnd.Float64() * total
	for i, w := range weights {
		if x < w {
			return ok[i], leftOut
		}
		x -= w
	}
	return ok[len(ok)-1], leftOut
}

// rotationWeights appends to out the weight of each of ads (eligible ads
// of campaign c) in c's rotation: its weight, for weighted; for
// optimized, once every one has the campaign's minimum of impressions, a
// share kept even (exploring) plus the rest in proportion to its
// click-through rate; else 1 each.
func (e *Engine) rotationWeights(c *Campaign, ads []*Ad, out []float64) []float64 {
	rot := c.Rotation
	switch {
	case rot == nil:
	case rot.Type == marquee.RotateWeighted:
		for _, a := range ads {
			out = append(out, float64(c.adWeight(a.ID)))
		}
		return out
	case rot.Type == marquee.RotateOptimized && len(ads) > 1:
		rates := *e.adRates.Load()
		sum := 0.0
		for _, a := range ads {
			r := rates[a.ID]
			if r.Impressions < rot.MinImpressions {
				sum = -1 // still learning: even
				break
			}
			sum += ctr(r)
		}
		if sum > 0 {
			explore := float64(marquee.DefaultOptimizedExplore) / 100
			for _, a := range ads {
				out = append(out, explore/float64(len(ads))+(1-explore)*ctr(rates[a.ID])/sum)
			}
			return out
		}
	}
	for range ads {
		out = append(out, 1)
	}
	return out
}

// adWeight is ad id's weight in c's weighted rotation (Rotation.AdWeight,
// keyed by id when the plan was built).
func (c *Campaign) adWeight(id int64) int {
	if w, ok := c.weights[id]; ok {
		return w
	}
	return marquee.DefaultRotationAdsWeight
}

// weightsOf is rot's weights by ad id (nil unless weighted).
func weightsOf(rot *marquee.Rotation) map[int64]int {
	if rot == nil || rot.Type != marquee.RotateWeighted {
		return nil
	}
	out := make(map[int64]int, len(rot.Weights))
	for id, w := range rot.Weights {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			out[n] = w
		}
	}
	return out
}

// ctr is r's click-through rate.
func ctr(r Rates) float64 {
	if r.Impressions == 0 {
		return 0
	}
	return float64(r.Clicks) / float64(r.Impressions)
}

// SetAdRates sets the verified impressions and clicks of the ads of
// campaigns with optimized rotation (RefreshDelivered reads them from
// the reports).
func (e *Engine) SetAdRates(rates map[int64]Rates) { e.adRates.Store(&rates) }

// rotationWhy says how campaign c's rotation weighs ad a among ads (the
// campaign's eligible ones), for Explain: "" for even rotation.
func (e *Engine) rotationWhy(c *Campaign, a *Ad, ads []*Ad) (share float64, why string) {
	if c.Rotation == nil || c.Rotation.Type == marquee.RotateEven || len(ads) == 0 {
		return 1 / float64(max(len(ads), 1)), ""
	}
	weights := e.rotationWeights(c, ads, nil)
	total, mine := 0.0, 0.0
	for i, w := range weights {
		total += w
		if ads[i] == a {
			mine = w
		}
	}
	share = mine / max(total, 1e-12)
	switch c.Rotation.Type {
	case marquee.RotateWeighted:
		why = fmt.Sprintf("weighted: weight %d of %g", c.adWeight(a.ID), total)
	case marquee.RotateSequential:
		why = fmt.Sprintf("sequential: %d of the sequence; a user's n-th serve shows the n-th ad", c.Rotation.SequenceOf(a.ID)+1)
	case marquee.RotateOptimized:
		r := (*e.adRates.Load())[a.ID]
		if weights[0] == 1 && total == float64(len(ads)) {
			why = fmt.Sprintf("optimized, still learning: %d of %d impressions before click-through rates decide (even until every ad has them)", r.Impressions, c.Rotation.MinImpressions)
		} else {
			why = fmt.Sprintf("optimized: CTR %.2f%% over %d impressions", 100*ctr(r), r.Impressions)
		}
	}
	return share, why
}

// sequenced is the ad a sequential campaign c shows at a user's n-th
// serve (n ≥ 1, as the frequency cap counted it): the n-th of its
// sequence (counting round), or nil when c is not sequential.
func (p *Plan) sequenced(c *Campaign, n int) *Ad {
	seq := p.sequences[c.ID]
	if n < 1 || len(seq) == 0 {
		return nil
	}
	return seq[(n-1)%len(seq)]
}

// sequence sets the ad of choice q, of a sequential campaign, to the one
// its user's n-th serve shows, when that ad may fill q's slot (else the
// ad chosen stays), and returns its id (0: unchanged; the caller adds it
// to the request's ads).
func (p *Plan) sequence(q *pending, n int, r *Request, used *usedSet, now time.Time) int64 {
	a := p.sequenced(q.ch.Campaign, n)
	if a == nil || a == q.ch.Ad {
		return 0
	}
	s := &r.Slots[q.slot]
	pl := p.placements[s.Placement]
	if pl == nil || fitWhy(a, pl) != "" || len(a.Placements) > 0 && !slices.Contains(a.Placements, s.Placement) {
		return 0
	}
	used.forSlot(r, s, pl)
	if adWhy(a, q.ch.Campaign, r, used, now) != "" {
		return 0
	}
	q.ch.Ad = a
	return a.ID
}

// indexTrafficking builds what roadblocks and sequential rotation read
// of the plan's fits: each roadblock campaign's ads by the placement they
// name (roadAds) and those placements (roadblocks); each sequential
// campaign's ads in sequence order. It reads only those campaigns'.
func (p *Plan) indexTrafficking() {
	p.roadblocks, p.roadAds, p.sequences = nil, nil, nil
	for name, fits := range p.fits {
		if p.placements[name] == nil {
			continue
		}
		for _, cf := range fits {
			c := p.campaigns[cf.campaign]
			if c == nil {
				continue
			}
			if c.Roadblock != "" {
				var named []*Ad
				for _, a := range cf.ads {
					if slices.Contains(a.Placements, name) {
						named = append(named, a)
					}
				}
				if len(named) > 0 {
					if p.roadAds == nil {
						p.roadAds, p.roadblocks = map[int64]map[string][]*Ad{}, map[int64][]string{}
					}
					if p.roadAds[c.ID] == nil {
						p.roadAds[c.ID] = map[string][]*Ad{}
					}
					p.roadAds[c.ID][name] = named
					p.roadblocks[c.ID] = append(p.roadblocks[c.ID], name)
				}
			}
			if c.Rotation != nil && c.Rotation.Type == marquee.RotateSequential {
				if p.sequences == nil {
					p.sequences = map[int64][]*Ad{}
				}
				for _, a := range cf.ads {
					if !slices.Contains(p.sequences[c.ID], a) {
						p.sequences[c.ID] = append(p.sequences[c.ID], a)
					}
				}
			}
		}
	}
	for _, names := range p.roadblocks {
		slices.Sort(names)
	}
	for id, seq := range p.sequences {
		rot := p.campaigns[id].Rotation
		slices.SortFunc(seq, func(x, y *Ad) int {
			if d := rot.SequenceOf(x.ID) - rot.SequenceOf(y.ID); d != 0 {
				return d
			}
			return int(x.ID - y.ID)
		})
	}
}

// roadblock fills, for roadblock campaign ch.Campaign chosen for slot si,
// the request's other slots of its placements with its ads (one slot per
// placement, the first with room; an ad once), appending their pending
// choices to pend (the caller adds their ads to used). All or none: when
// a placement of the roadblock has no slot in the request, or no ad of
// the campaign may fill it, nothing is appended and ok is false (the
// caller leaves the campaign out); as many as possible: what can be
// filled is. have counts the slots' choices.
func (p *Plan) roadblock(ch Choice, si int, r *Request, used *usedSet, have []int, pend []pending, now time.Time, rnd Random, e *Engine) ([]pending, bool) {
	c := ch.Campaign
	start := len(pend)
	for _, name := range p.roadblocks[c.ID] {
		if name == r.Slots[si].Placement || r.Companions && p.companionIn(c, name) {
			continue
		}
		sj := slices.IndexFunc(r.Slots, func(s Slot) bool { return s.Placement == name })
		for sj >= 0 && have[sj] >= r.Slots[sj].Count {
			next := slices.IndexFunc(r.Slots[sj+1:], func(s Slot) bool { return s.Placement == name })
			if next < 0 {
				sj = -1
				break
			}
			sj += 1 + next
		}
		var a *Ad
		if sj >= 0 {
			pl := p.placements[name]
			used.forSlot(r, &r.Slots[sj], pl)
			a, _ = p.rotated(p.roadAds[c.ID][name], c, r, used, now, rnd, e)
		}
		if a != nil && slices.ContainsFunc(pend[start:], func(q pending) bool { return q.ch.Ad == a }) {
			a = nil // an ad naming several placements fills one
		}
		if a == nil {
			if c.Roadblock == marquee.RoadblockAllOrNone {
				for _, q := range pend[start:] {
					have[q.slot]--
				}
				used.forSlot(r, &r.Slots[si], p.placements[r.Slots[si].Placement])
				return pend[:start], false
			}
			continue
		}
		pend = append(pend, pending{slot: sj, ch: Choice{Ad: a, Campaign: c}})
		have[sj]++
	}
	used.forSlot(r, &r.Slots[si], p.placements[r.Slots[si].Placement])
	return pend, true
}

// Companions is roadblock campaign c's image and HTML ads, by id: a
// video of c names them as its companions in VAST (nil when c is no
// roadblock).
func (p *Plan) Companions(c *Campaign) []*Ad {
	var out []*Ad
	for _, ads := range p.roadAds[c.ID] {
		for _, a := range ads {
			if cr := a.Creative; cr != nil && (cr.Type == marquee.CreativeImage || cr.Type == marquee.CreativeHTML) && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, func(x, y *Ad) int { return int(x.ID - y.ID) })
	return out
}

// roadblockMissing says whether campaign c is an all-or-none roadblock
// one of whose placements request r has no slot for (then it cannot
// serve r at all). It allocates nothing.
func (p *Plan) roadblockMissing(c *Campaign, r *Request) bool {
	if c.Roadblock != marquee.RoadblockAllOrNone {
		return false
	}
	for _, name := range p.roadblocks[c.ID] {
		if !slices.ContainsFunc(r.Slots, func(s Slot) bool { return s.Placement == name }) && !(r.Companions && p.companionIn(c, name)) {
			return true
		}
	}
	return false
}

// companionIn says whether roadblock c has an ad for placement name that
// a video's VAST carries as a companion (an image or HTML creative).
func (p *Plan) companionIn(c *Campaign, name string) bool {
	for _, a := range p.roadAds[c.ID][name] {
		if cr := a.Creative; cr != nil && (cr.Type == marquee.CreativeImage || cr.Type == marquee.CreativeHTML) {
			return true
		}
	}
	return false
}

// roadblockWhy says which of roadblock c's placements request r lacks,
// for Explain.
func (p *Plan) roadblockWhy(c *Campaign, r *Request) string {
	var missing []string
	for _, name := range p.roadblocks[c.ID] {
		if !slices.ContainsFunc(r.Slots, func(s Slot) bool { return s.Placement == name }) && !(r.Companions && p.companionIn(c, name)) {
			missing = append(missing, name)
		}
	}
	return RoadblockOut + " (the request has no slot of " + strings.Join(missing, ", ") + ")"
}
