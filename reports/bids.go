package reports

import (
	"sync"
	"time"

	"marquee/reportrow"
)

// Bids counts header bidding at the decision (docs/api.md#header-bidding):
// each bidder's bids that decisions weighed, and those that won their
// slot, by UTC hour and placement — in memory until a Tally's flush adds
// them to the store (report_bids) in its transaction, as Requests does
// (a crash loses what was counted since the last flush). The impressions
// the wins rendered and their revenue are counted from the events, by
// the Tally itself. Count is safe from any goroutine.
type Bids struct {
	mu sync.Mutex
	m  map[hourPlacement]map[string]*[2]int64 // by bidder: bids, wins
}

// hourPlacement keys a slot's counts: a bidder's are found in its map by
// the bidder alone (a string key: the map's fast path).
type hourPlacement struct{ hour, placement int64 }

type bidKey struct {
	hour, placement int64
	bidder          string
}

// NewBids returns an empty count.
func NewBids() *Bids { return &Bids{m: map[hourPlacement]map[string]*[2]int64{}} }

// counter is the count of bidder for k, made if new; b.mu is held.
func (b *Bids) counter(k hourPlacement, bidder string) *[2]int64 {
	byBidder := b.m[k]
	if byBidder == nil {
		byBidder = map[string]*[2]int64{}
		b.m[k] = byBidder
	}
	c := byBidder[bidder]
	if c == nil {
		c = new([2]int64)
		byBidder[bidder] = c
	}
	return c
}

// A SlotBid is one bid a decision weighed for a slot: its bidder, and
// whether it won the slot.
type SlotBid struct {
	Bidder string
	Won    bool
}

// Count counts the bids of one slot of placement weighed at now (one
// lock a slot, not a bid). It keeps nothing of bids.
func (b *Bids) Count(placement int64, now time.Time, bids []SlotBid) {
	k := hourPlacement{now.Unix() / 3600 * 3600, placement}
	b.mu.Lock()
	for _, bid := range bids {
		c := b.counter(k, bid.Bidder)
		c[0]++
		if bid.Won {
			c[1]++
		}
	}
	b.mu.Unlock()
}

// take returns what was counted and starts again.
func (b *Bids) take() []reportrow.BidRow {
	b.mu.Lock()
	m := b.m
	b.m = map[hourPlacement]map[string]*[2]int64{}
	b.mu.Unlock()
	var rows []reportrow.BidRow
	for k, byBidder := range m {
		for bidder, c := range byBidder {
			rows = append(rows, reportrow.BidRow{Hour: k.hour, Placement: k.placement, Bidder: bidder, Bids: c[0], Wins: c[1]})
		}
	}
	return rows
}

// putBack returns what a failed flush took.
func (b *Bids) putBack(rows []reportrow.BidRow) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range rows {
		c := b.counter(hourPlacement{r.Hour, r.Placement}, r.Bidder)
		c[0] += r.Bids
		c[1] += r.Wins
	}
}

// mergeBids sums rows of the same hour, placement and bidder (the
// events' and the decisions' meet in one flush: a statement may not
// touch a row twice).
func mergeBids(rows []reportrow.BidRow) []reportrow.BidRow {
	at := map[bidKey]int{}
	out := rows[:0]
	for _, r := range rows {
		k := bidKey{r.Hour, r.Placement, r.Bidder}
		if i, ok := at[k]; ok {
			out[i].Bids, out[i].Wins, out[i].Impressions, out[i].Revenue = out[i].Bids+r.Bids, out[i].Wins+r.Wins, out[i].Impressions+r.Impressions, out[i].Revenue+r.Revenue
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	return out
}
