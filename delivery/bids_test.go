package delivery_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"marquee"
	"marquee/delivery"
)

// bidWorld is placement side (300×250, a floor of 1.00) with a remnant
// campaign at a CPM of 2.00 and, when guaranteed is set, a campaign of
// that tier too.
func bidWorld(t *testing.T, guaranteed string) *world {
	w := newWorld(t)
	rem := w.camp(marquee.PriorityRemnant, 1, func(c *marquee.Campaign) { c.Price = &marquee.Price{Model: "cpm", Amount: 2_000_000} })
	w.ad(rem, "300x250", nil)
	if guaranteed != "" {
		w.ad(w.camp(guaranteed, 1, nil), "300x250", nil)
	}
	pl := side
	pl.Floor = 1_000_000
	w.ready(pl)
	w.e.SetBidding(delivery.Bidding{Adjustments: map[string]float64{"halved": 0.5}})
	end := now.Add(-time.Hour)
	w.e.SetDeals([]marquee.Deal{{ID: "pg-standard", Name: "PG", Tier: marquee.PriorityStandard, Bidders: []string{"a", "deal", "halved"}, Floor: 1_000_000, ClientBids: true},
		{ID: "ended", Name: "Ended", Tier: marquee.PrioritySponsorship, Bidders: []string{"a"}, EndAt: &end, ClientBids: true},
		{ID: "server-only", Name: "PG", Tier: marquee.PriorityStandard, Bidders: []string{"a"}}})
	return w
}

// winner says who fills slot side with bids: "bid:<bidder>", or the
// campaign's tier.
func (w *world) winner(bids ...delivery.Bid) string {
	r := &delivery.Request{Slots: []delivery.Slot{{Div: "d", Placement: "side", Count: 1, Bids: bids}}}
	got := w.e.Decide(context.Background(), r, now, rand.New(rand.NewPCG(1, 2)))[0]
	switch {
	case len(got) == 0:
		return "none"
	case got[0].Bid != nil:
		return "bid:" + got[0].Bid.Bidder
	}
	return got[0].Campaign.Priority
}

// TestBidsCompete: a bid above the remnant campaign's eCPM wins, one
// below it loses, a tie goes to the campaign; a guaranteed campaign beats
// any open-auction bid; a bid under the floor (after its bidder's
// adjustment) or of a size the placement does not take never wins, even
// an empty slot; a deal given the standard tier beats a standard campaign
// and loses to a sponsorship one — only when it takes the page's bids
// (clientBids: a page can forge any), from a bidder the deal lists, at
// or above its floor, within its flight: a bid naming the deal from any
// other bidder (a forged one), under its floor or after it ended
// competes in the open auction; the best bid of several wins.
func TestBidsCompete(t *testing.T) {
	bid := func(bidder string, cpm int64, more ...string) delivery.Bid {
		b := delivery.Bid{Bidder: bidder, CPM: cpm, AdID: []byte("pb-" + bidder), Size: "300x250"}
		if len(more) > 0 {
			b.Deal = more[0]
		}
		return b
	}
	for _, tc := range []struct {
		name, guaranteed string
		bids             []delivery.Bid
		want             string
	}{
		{"above the remnant eCPM", "", []delivery.Bid{bid("a", 3_000_000)}, "bid:a"},
		{"below it", "", []delivery.Bid{bid("a", 1_500_000)}, marquee.PriorityRemnant},
		{"a tie", "", []delivery.Bid{bid("a", 2_000_000)}, marquee.PriorityRemnant},
		{"adjusted below it", "", []delivery.Bid{bid("halved", 3_000_000)}, marquee.PriorityRemnant},
		{"the best of several", "", []delivery.Bid{bid("a", 2_500_000), bid("b", 4_000_000), bid("c", 3_000_000)}, "bid:b"},
		{"a guaranteed campaign", marquee.PriorityStandard, []delivery.Bid{bid("a", 50_000_000)}, marquee.PriorityStandard},
		{"under the floor", "", []delivery.Bid{bid("a", 900_000)}, marquee.PriorityRemnant},
		{"adjusted under the floor", "", []delivery.Bid{bid("halved", 1_800_000)}, marquee.PriorityRemnant},
		{"a wrong size", "", []delivery.Bid{{Bidder: "a", CPM: 9_000_000, Size: "728x90"}}, marquee.PriorityRemnant},
		{"a deal at standard over standard", marquee.PriorityStandard, []delivery.Bid{bid("a", 1_000_000, "pg-standard")}, "bid:a"},
		{"a deal at standard under sponsorship", marquee.PrioritySponsorship, []delivery.Bid{bid("a", 9_000_000, "pg-standard")}, marquee.PrioritySponsorship},
		{"a deal before a higher open bid", "", []delivery.Bid{bid("open", 9_000_000), bid("deal", 1_000_000, "pg-standard")}, "bid:deal"},
		{"a deal's id from a bidder it does not list", marquee.PriorityStandard, []delivery.Bid{bid("forger", 50_000_000, "pg-standard")}, marquee.PriorityStandard},
		{"a deal's bid under its floor after adjustment", marquee.PriorityStandard, []delivery.Bid{bid("halved", 1_500_000, "pg-standard")}, marquee.PriorityStandard},
		{"a forged deal bid in the open auction still beats remnant by price", "", []delivery.Bid{bid("forger", 3_000_000, "pg-standard")}, "bid:forger"},
		{"a deal past its flight", marquee.PriorityStandard, []delivery.Bid{bid("a", 9_000_000, "ended")}, marquee.PriorityStandard},
		{"a deal that takes no bid from the page", marquee.PriorityStandard, []delivery.Bid{bid("a", 9_000_000, "server-only")}, marquee.PriorityStandard},
	} {
		w := bidWorld(t, tc.guaranteed)
		if got := w.winner(tc.bids...); got != tc.want {
			t.Errorf("%s: %+v filled by %s; want %s", tc.name, tc.bids, got, tc.want)
		}
	}
	// With no campaign at all: a bid above the floor fills the slot, one
	// under it leaves the slot empty.
	w := newWorld(t)
	pl := side
	pl.Floor = 1_000_000
	w.ready(pl)
	if got := w.winner(bid("a", 1_000_000)); got != "bid:a" {
		t.Errorf("an empty slot and a bid at the floor: %s; want the bid", got)
	}
	if got := w.winner(bid("a", 999_999)); got != "none" {
		t.Errorf("an empty slot and a bid under the floor: %s; want none", got)
	}
}

// TestBidsExplained: explain lists each bid with why it won or lost.
func TestBidsExplained(t *testing.T) {
	w := bidWorld(t, "")
	r := &delivery.Request{Slots: []delivery.Slot{{Div: "d", Placement: "side", Count: 1, Bids: []delivery.Bid{
		{Bidder: "low", CPM: 1_500_000, AdID: []byte("x1")}, {Bidder: "floor", CPM: 500_000, AdID: []byte("x2")}, {Bidder: "big", CPM: 1_800_000, AdID: []byte("x3"), Size: "728x90"}}}}}
	_, why := w.e.Explain(context.Background(), r, now, rand.New(rand.NewPCG(1, 2)), nil)
	got := map[string]string{}
	for _, c := range why[0] {
		if c.Bidder != "" {
			got[c.Bidder] = c.Status
		}
	}
	if !strings.HasPrefix(got["low"], "lost to campaign 1 (remnant, eCPM 2.00") || got["floor"] != delivery.BidUnderFloor || got["big"] != delivery.BidWrongSize {
		t.Errorf("explain's bids: %q; want low lost to the campaign's eCPM, floor under the floor, big of a wrong size", got)
	}
	r.Slots[0].Bids[0].CPM = 2_500_000
	_, why = w.e.Explain(context.Background(), r, now, rand.New(rand.NewPCG(1, 2)), nil)
	for _, c := range why[0] {
		if c.Bidder == "low" && c.Status != "chosen" {
			t.Errorf("a bid of 2.50 against a campaign's 2.00: %q; want chosen", c.Status)
		}
	}
}
