package delivery

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// Header bidding (docs/api.md#header-bidding): a slot's bids from the
// page's Prebid.js auction compete in the same decision, where Google Ad
// Manager lets price priority compete, with no line items. The
// guaranteed tiers (sponsorship, standard) serve first; an open-auction
// bid competes with the remnant campaign the slot would serve by eCPM
// (the bid wins when its adjusted CPM is higher; a tie goes to the
// campaign) and beats the house tier and the placement's default ad; a
// deal (Engine.SetDeals) serves ahead of its tier's
// campaigns and behind the tiers above it — only a bid from one of the
// deal's bidders, at or above its floor, within its flight: any other bid
// naming it is an open-auction bid (anyone can put a deal id in a bid). A
// bid is adjusted by its
// bidder's factor (Bidding.Adjustments) and must reach the placement's
// floor, and its size must be one the placement takes. A slot of more
// than one ad (count > 1) takes no bid.

// Bid is one bid of a slot's auction, as the page's Prebid.js received
// it: CPM in millionths of the install's currency per 1,000 impressions.
type Bid struct {
	Bidder   string
	CPM      int64
	Currency string // as the bid said ("": the install's)
	AdID     []byte // Prebid's ad id: what renders it in the page (it may be the request's buffer: valid during the decision)
	Size     string // "300x250" ("": any the placement takes)
	Deal     string // the deal id ("": the open auction)
	// Server says a demand partner's bid, which Marquee asked for itself
	// (server-side: authenticated; Bidder is the partner, CPM adjusted
	// by the partner's own factor already), and Index is the caller's
	// number of it.
	Server bool
	Index  int
}

// Bidding is how bids compete: each bidder's adjustment (its CPMs are
// multiplied by it: 1 when absent) and the deals (by id; a bid naming
// none of them is in the open auction).
type Bidding struct {
	Adjustments map[string]float64
	Deals       map[string]*Deal
	// Currency is the install's: a bid in another is left out (Prebid's
	// currency module converts bids to the ad server's currency).
	Currency string
}

// Deal is a deal's terms as bids meet them: the tier its bids serve at
// (an index in marquee.Priorities), its bidders, floor (micro-units, after
// the bidder's adjustment) and flight.
type Deal struct {
	Tier    int
	Bidders []string // sorted
	Floor   int64
	deal    marquee.Deal
}

// SetDeals replaces the deals bids meet (safe while deciding).
func (e *Engine) SetDeals(ds []marquee.Deal) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := *e.biddingOf()
	b.Deals = make(map[string]*Deal, len(ds))
	for _, d := range ds {
		b.Deals[d.ID] = &Deal{Tier: marquee.TierOf(d.Tier), Bidders: d.Bidders, Floor: int64(d.Floor), deal: d}
	}
	e.bidding.Store(&b)
}

// ParseBidding reads how bids compete from -bid-adjustments
// ("appnexus=0.9,rubicon=0.85": each bidder's factor, above 0 and at most
// 10), in currency. Deals are the store's (SetDeals).
func ParseBidding(adjustments, currency string) (Bidding, error) {
	b := Bidding{Adjustments: map[string]float64{}, Currency: currency}
	pairs := func(s, what string, each func(k, v string) error) error {
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			k, v, ok := strings.Cut(item, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("%q: want %s", item, what)
			}
			if err := each(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("%q: %w", item, err)
			}
		}
		return nil
	}
	err := pairs(adjustments, "bidder=factor", func(k, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 10 {
			return fmt.Errorf("a factor above 0 and at most 10")
		}
		b.Adjustments[k] = f
		return nil
	})
	if err != nil {
		return b, fmt.Errorf("bid adjustments: %w", err)
	}
	return b, nil
}

// SetBidding sets the bidders' adjustments and the currency (safe while
// deciding); the deals set stay.
func (e *Engine) SetBidding(b Bidding) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b.Deals == nil {
		b.Deals = e.biddingOf().Deals
	}
	e.bidding.Store(&b)
}

// BidFill is the campaign of a bid's choice: none (id 0), without cap,
// goal or price; a bid counts toward no campaign.
var BidFill = &Campaign{Campaign: marquee.Campaign{CampaignInput: marquee.CampaignInput{Priority: marquee.PriorityRemnant}}, Tier: remnantTier}

// bidAd is the ad of a bid's choice: none of Marquee's (id 0).
var bidAd = &Ad{}

// remnantTier is the remnant tier's index in marquee.Priorities.
var remnantTier = marquee.TierOf(marquee.PriorityRemnant)

// Why a bid did not fill its slot (explain's words).
const (
	BidUnderFloor = "under the placement's floor"
	BidWrongSize  = "a size the placement does not take"
	BidOutbid     = "outbid by another bid"
	BidManySlots  = "the slot takes more than one ad"
)

// adjusted is b's CPM after its bidder's adjustment (a partner's bid is
// adjusted by the partner's factor when it is asked for).
func (bd *Bidding) adjusted(b *Bid) int64 {
	if f, ok := bd.Adjustments[b.Bidder]; ok && !b.Server {
		return int64(float64(b.CPM) * f)
	}
	return b.CPM
}

// tierOf is the tier a bid of adjusted CPM serves at at now: its deal's
// when the deal lists its bidder and takes its kind of bid (a partner's,
// which Marquee asked for itself, always; the page's, which nobody
// authenticates, only with ClientBids), the CPM reaches the deal's floor
// and the deal's flight holds, else -1 (the open auction).
func (bd *Bidding) tierOf(b *Bid, adjusted int64, now time.Time) int {
	if b.Deal == "" {
		return -1
	}
	d, ok := bd.Deals[b.Deal]
	if !ok || !d.deal.ClientBids && !b.Server || adjusted < d.Floor || !d.deal.Open(now) {
		return -1
	}
	bidder := b.Bidder
	if b.Server { // a partner's bid: counted as "@name", a deal lists it by name
		bidder = strings.TrimPrefix(bidder, marquee.PartnerPrefix)
	}
	if _, listed := slices.BinarySearch(d.Bidders, bidder); !listed {
		return -1
	}
	return d.Tier
}

// bidWhy says why bid b may not fill slot s of placement pl ("": it may).
func (bd *Bidding) bidWhy(b *Bid, adjusted int64, s *Slot, pl *marquee.Placement) string {
	switch {
	case b.Currency != "" && bd.Currency != "" && b.Currency != bd.Currency:
		return fmt.Sprintf("its currency %s is not the install's %s", b.Currency, bd.Currency)
	case s.Count > 1:
		return BidManySlots
	case adjusted < int64(pl.Floor):
		return BidUnderFloor
	case b.Size != "" && len(pl.Sizes) > 0 && !slices.Contains(pl.Sizes, b.Size):
		return BidWrongSize
	}
	return ""
}

// best is the best of s's bids that may fill it — a deal's at the
// highest tier, then the highest adjusted CPM (the first given of equal
// ones) — with its adjusted CPM and tier; i < 0: none.
func (bd *Bidding) best(s *Slot, pl *marquee.Placement, now time.Time) (i int, cpm int64, tier int) {
	i, tier = -1, -1
	for k := range s.Bids {
		b := &s.Bids[k]
		a := bd.adjusted(b)
		t := bd.tierOf(b, a, now)
		if bd.bidWhy(b, a, s, pl) != "" {
			continue
		}
		better := i < 0 || t >= 0 && (tier < 0 || t < tier) || t == tier && a > cpm
		if better {
			i, cpm, tier = k, a, t
		}
	}
	return i, cpm, tier
}

// beats says whether a bid of adjusted cpm at tier (-1: the open
// auction) takes the slot from ch, the campaign's choice (ok: there is
// one).
func beats(cpm int64, tier int, ch Choice, ok bool) bool {
	switch {
	case !ok || ch.Default:
		return true
	case tier >= 0: // a deal: ahead of its tier's campaigns
		return ch.Campaign.Tier >= tier
	case ch.Campaign.Tier > remnantTier: // house
		return true
	case ch.Campaign.Tier == remnantTier:
		return cpm > ch.Campaign.ECPM
	}
	return false // a guaranteed tier
}

// bidChoice is the choice of slot s's bid i.
func bidChoice(s *Slot, i int, cpm int64) Choice {
	return Choice{Ad: bidAd, Campaign: BidFill, Bid: &s.Bids[i], BidCPM: cpm}
}

// bidCandidates are explain's words for the bids of slot s: the one that
// won (chosen), and why each other did not.
func (bd *Bidding) bidCandidates(s *Slot, pl *marquee.Placement, chosen []Choice, now time.Time) []Candidate {
	var out []Candidate
	win, _, _ := bd.best(s, pl, now)
	for k := range s.Bids {
		b := &s.Bids[k]
		a := bd.adjusted(b)
		c := Candidate{Bidder: b.Bidder, BidAdID: string(b.AdID), Deal: b.Deal, CPM: float64(a) / 1e6, Tier: marquee.PriorityRemnant}
		if t := bd.tierOf(b, a, now); t >= 0 {
			c.Tier = marquee.Priorities[t]
		}
		c.Status = bd.bidWhy(b, a, s, pl)
		switch {
		case c.Status != "":
		case len(chosen) > 0 && chosen[0].Bid == b:
			c.Status = "chosen"
		case k != win:
			c.Status = BidOutbid
		case len(chosen) > 0 && chosen[0].Default:
			c.Status = "lost to the placement's default ad"
		case len(chosen) > 0:
			ch := chosen[0]
			c.Status = fmt.Sprintf("lost to campaign %d (%s", ch.Campaign.ID, ch.Campaign.Priority)
			if ch.Campaign.Tier == remnantTier {
				c.Status += fmt.Sprintf(", eCPM %.2f", float64(ch.Campaign.ECPM)/1e6)
			}
			c.Status += ")"
		default:
			c.Status = "not chosen"
		}
		out = append(out, c)
	}
	return out
}

// DealsOf are the deals open at now that list bidder (a demand partner:
// its bid requests carry them).
func (e *Engine) DealsOf(bidder string, now time.Time) []marquee.Deal {
	var out []marquee.Deal
	for _, d := range e.biddingOf().Deals {
		if _, listed := slices.BinarySearch(d.Bidders, bidder); listed && d.deal.Open(now) {
			out = append(out, d.deal)
		}
	}
	slices.SortFunc(out, func(a, b marquee.Deal) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// biddingOf is e's bidding (none set: no adjustment, no deal tier).
func (e *Engine) biddingOf() *Bidding {
	if b := e.bidding.Load(); b != nil {
		return b
	}
	return &noBidding
}

var noBidding Bidding
