package serve

import (
	"context"
	"strconv"
	"time"

	"marquee"
	"marquee/delivery"
	"marquee/eventline"
	"marquee/ivt"
	"marquee/privacy"
	"marquee/reports"
	"marquee/targeting"
)

// A Charge is what an event costs its campaign: Cost nano-units of the
// install's currency at At (0: the event bills nothing). Unbilled says
// why an event that its price bills was billed nothing (set by Bill, or
// Invalid by the caller), and Forgone what it would have cost.
type Charge struct {
	Campaign *delivery.Campaign
	Cost     marquee.Nanos
	At       time.Time
	Unbilled string
	Forgone  marquee.Nanos
}

// appendUnbilled appends to an event line why it was billed nothing and
// what it would have cost, when it was.
func (ch *Charge) appendUnbilled(line []byte) []byte {
	if ch.Unbilled == "" {
		return line
	}
	var num [20]byte
	line = eventline.AppendPlain(line, "unbilled", ch.Unbilled)
	return eventline.AppendPlain(line, "unbilledCost", strconv.AppendInt(num[:0], int64(ch.Forgone), 10))
}

// unbill makes ch bill nothing, for why.
func (ch *Charge) unbill(why string) {
	ch.Forgone, ch.Cost, ch.Unbilled = ch.Cost, 0, why
}

// A Ledger takes everything a decision and an event leave behind: each
// slot a decision weighed and what became of it, the requests kept for
// forecasts, the header-bidding bids and whether each won, and each event
// line with what it costs — event lines into the collector; requests,
// samples and bids into the reports' tallies (which flush them to the
// store); spend into the engine's budgets (which share it across
// instances). It is the only road by which spend enters budgets: Bill
// settles a Charge against its budgets before its line is written (the
// line carries what was billed, or why nothing was), and Record writes
// the line and gives the charge back when the write fails, so every
// billed nano-unit is in an event file.
//
// A Ledger is a concrete type, not an interface: a decision hands it a
// viewer and a closure for each slot's sample, and through an interface
// both would escape to the heap (two allocations a slot). It is safe for
// concurrent use; Bill (the shared spend counters) and Record (the event
// sink's write) do I/O.
type Ledger struct {
	sink     EventSink
	engine   *delivery.Engine
	requests *reports.Requests
	samples  *reports.Samples
	bids     *reports.Bids
}

// LedgerConfig is what a Ledger keeps. Sink and Engine are required; a nil
// tally counts nothing of its kind.
type LedgerConfig struct {
	Sink     EventSink
	Engine   *delivery.Engine // its Budgets() receive spend (none: nothing is billed)
	Requests *reports.Requests
	Samples  *reports.Samples
	Bids     *reports.Bids
}

// NewLedger returns the ledger cfg describes.
func NewLedger(cfg LedgerConfig) *Ledger {
	return &Ledger{sink: cfg.Sink, engine: cfg.Engine, requests: cfg.Requests, samples: cfg.Samples, bids: cfg.Bids}
}

// Request counts a slot and its outcome (nothing without a tally).
func (b *Ledger) Request(k reports.RequestKey, o marquee.Outcome) {
	if b.requests != nil {
		b.requests.Count(k, o)
	}
}

// CountLimited counts a slot of people's whose request's privacy signals
// (carried) denied an activity, under each (nothing without a tally).
func (b *Ledger) CountLimited(k reports.RequestKey, carried privacy.Carried) {
	if b.requests != nil {
		b.requests.CountLimited(k, carried)
	}
}

// CountInvalid counts a slot of invalid traffic's decision by why
// (nothing without a tally).
func (b *Ledger) CountInvalid(k reports.RequestKey, why ivt.Reason) {
	if b.requests != nil {
		b.requests.CountInvalid(k, why)
	}
}

// CountsRequests says whether the ledger counts requests (a tally of
// them): what only counting needs is not worth working out without one.
func (b *Ledger) CountsRequests() bool { return b.requests != nil }

// Samples says whether the ledger offers requests to a sample.
func (b *Ledger) Samples() bool { return b.samples != nil }

// Sample offers a request to the forecasts' sample (nothing without one).
func (b *Ledger) Sample(placement int64, now time.Time, fill func(*targeting.Viewer), v *targeting.Viewer, keywords []string) {
	if b.samples != nil {
		b.samples.Offer(placement, now, fill, v, keywords)
	}
}

// Bids counts a slot's bids (nothing without a tally).
func (b *Ledger) Bids(placement int64, now time.Time, bids []reports.SlotBid) {
	if b.bids != nil {
		b.bids.Count(placement, now, bids)
	}
}

// Bill settles ch against its campaign's budgets and its advertiser's
// (delivery.Budgets.Bill) before its line is written: it returns ch as
// billed, or with no Cost and Unbilled marquee.UnbilledOverBudget when the cost would
// pass a budget. An error (the spend counters cannot be reached) bills
// nothing: the event is not to be written (the caller answers 503, and
// the retry bills it). A Charge without a campaign (a bid's) or a budget
// engine is returned as it is. A negative Cost is a refund (a credit of
// invalid traffic found after the fact): given back to the budgets.
func (b *Ledger) Bill(ctx context.Context, ch Charge) (Charge, error) {
	bg := b.engine.Budgets()
	if ch.Cost == 0 || ch.Campaign == nil || bg == nil {
		return ch, nil
	}
	ok, err := bg.Bill(ctx, ch.Campaign, ch.Cost, ch.At)
	if err != nil {
		return Charge{}, err
	}
	if !ok {
		ch.unbill(marquee.UnbilledOverBudget)
	}
	return ch, nil
}

// Record writes line, which carries billed — what Bill answered. When
// the write fails, what Bill took is given back, so that the retry bills
// it once.
func (b *Ledger) Record(conn uint64, line []byte, billed Charge) error {
	err := b.sink.Append(conn, line, 1)
	if err != nil && billed.Cost > 0 && billed.Campaign != nil {
		if bg := b.engine.Budgets(); bg != nil {
			bg.Bill(context.Background(), billed.Campaign, -billed.Cost, billed.At) // a refund: kept for the next sync if the counters fail
		}
	}
	return err
}
