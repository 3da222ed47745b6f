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
	m  map[bidKey]*[2]int64 // bids, wins
}

type bidKey struct {
	hour, placement int64
	bidder          string
}

// NewBids returns an empty count.
func NewBids() *Bids { return &Bids{m: map[bidKey]*[2]int64{}} }

// Count counts one bid of bidder weighed for placement at now, and
// whether it won its slot.
func (b *Bids) Count(placement int64, now time.Time, bidder string, won bool) {
	k := bidKey{now.Unix() / 3600 * 3600, placement, bidder}
	b.mu.Lock()
	c := b.m[k]
	if c == nil {
		c = new([2]int64)
		b.m[k] = c
	}
	c[0]++
	if won {
		c[1]++
	}
	b.mu.Unlock()
}

// take returns what was counted and starts again.
func (b *Bids) take() []reportrow.BidRow {
	b.mu.Lock()
	m := b.m
	b.m = map[bidKey]*[2]int64{}
	b.mu.Unlock()
	rows := make([]reportrow.BidRow, 0, len(m))
	for k, c := range m {
		rows = append(rows, reportrow.BidRow{Hour: k.hour, Placement: k.placement, Bidder: k.bidder, Bids: c[0], Wins: c[1]})
	}
	return rows
}

// putBack returns what a failed flush took.
func (b *Bids) putBack(rows []reportrow.BidRow) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range rows {
		k := bidKey{r.Hour, r.Placement, r.Bidder}
		c := b.m[k]
		if c == nil {
			c = new([2]int64)
			b.m[k] = c
		}
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
