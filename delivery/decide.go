// A decision: each slot's tiers in order, the weighted lottery (or
// eCPM), the ads that fit, pacing; what a request and its choices are.

package delivery

import (
	"context"
	"math/bits"
	"slices"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/targeting"
)

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
	// Wall is when a preview at another time is made (zero: the
	// decision's time): whether the spend counters answer lately is judged
	// then, not at the time previewed.
	Wall time.Time
	// Invalid decides for invalid traffic (package ivt): as without
	// consequence as a preview, but answered as any decision is.
	Invalid bool
	// Companions: the answer carries a video's companions (VAST), which
	// stand for a roadblock's image and HTML placements.
	Companions bool
}

// counts says the decision has consequences: cap serves, pacing.
func (r *Request) counts() bool { return !r.Preview && !r.Invalid }

// wallAt is when the decision at now is made, unix ns (Wall, else now).
func (r *Request) wallAt(now time.Time) int64 {
	if r.Wall.IsZero() {
		return now.UnixNano()
	}
	return r.Wall.UnixNano()
}

// Slot is one place to fill: a div name the answer is keyed by, the
// placement, and how many ads it takes; KV, when the slot has key-values
// of its own, is the request's with the slot's (sorted, the slot's
// replacing the page's of the same key), else nil.
type Slot struct {
	Div       string
	Placement string
	Count     int
	// PodMs, when not 0, is the most the slot's ads may last together,
	// in milliseconds (a pod's duration): a video or audio ad longer than
	// what is left, or of no declared duration, does not fill it.
	PodMs int
	KV    []targeting.KV
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
	used := usedSet{ads: adsBuf[:0], campaigns: campsBuf[:0], labels: labelsBuf[:0], v: r.Viewer, at: now.UnixNano(), wall: r.wallAt(now), bits: &sc.bits}
	reached := sc.reached[:0] // the user's reached caps once a refusal told them (kept apart from used: escape analysis)
	if e.readFirst && r.User != 0 && r.counts() && len(plan.ids) > 0 {
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
				bid, bidCPM, bidTier = bidding.best(s, pl, now)
			}
			for pl != nil && have[si] < s.Count { // no such placement: the route refuses it before
				used.why = marquee.Filled
				if used.room = roomOf(s, si, pend, from); used.room < 0 {
					break // the pod's duration is filled
				}
				ch, ok := plan.pick(pl, r, &used, now, rnd, e)
				used.room = 0 // a roadblock's other slots are not this pod
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
			if fc := c.FrequencyCap; fc != nil && r.User != 0 && r.counts() {
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
			if r.counts() && !p.ch.Default && p.ch.Bid == nil {
				p.ch.Campaign.stats.count(used.at, p.reached && p.follows == 0) // a roadblock's slots brought the person to the cap once
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
	return tree.MatchesOn(&u.v, u.at, &u.clock)
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
	if ca.reach != nil && !ca.reach.Matches(&used.v) { // what each ad's targeting would say, without reading them
		used.leftOut |= byViewer
		used.note(marquee.Untargeted)
		return Choice{}, false
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
		case Duplicate, PodFull:
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
	switch e.paceWhy(c, now, u.wall) {
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
// serving at now, or "" (wall: when the decision is made, unix ns).
func (e *Engine) paceWhy(c *Campaign, now time.Time, wall int64) string {
	if w := e.pacing.why(c, now); w != "" || e.budgets == nil {
		return w
	}
	return e.budgets.why(c, now, wall)
}
