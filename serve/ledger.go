package serve

import (
	"time"

	"marquee"
	"marquee/delivery"
	"marquee/reports"
	"marquee/targeting"
)

// A Charge is what an event costs its campaign: Cost nano-units of the
// install's currency at At (0: the event bills nothing).
type Charge struct {
	Campaign *delivery.Campaign
	Cost     marquee.Nanos
	At       time.Time
}

// A Ledger takes everything a decision and an event leave behind: each
// slot a decision weighed and what became of it, the requests kept for
// forecasts, the header-bidding bids and whether each won, and each event
// line with what it costs — event lines into the collector; requests,
// samples and bids into the reports' tallies (which flush them to the
// store); spend into the engine's budgets (which share it across
// instances). It is the only road by which spend enters budgets: Record
// bills a Charge once its line — which carries the cost — is written, so
// every billed nano-unit is in an event file.
//
// A Ledger is a concrete type, not an interface: a decision hands it a
// viewer and a closure for each slot's sample, and through an interface
// both would escape to the heap (two allocations a slot). It is safe for
// concurrent use; only Record does I/O (the event sink's write).
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

// Record writes line and, once it is written, adds ch's cost to its
// campaign's budgets and its advertiser's.
func (b *Ledger) Record(conn uint64, line []byte, ch Charge) error {
	if err := b.sink.Append(conn, line, 1); err != nil {
		return err
	}
	if ch.Cost > 0 && ch.Campaign != nil {
		if bg := b.engine.Budgets(); bg != nil {
			bg.Spend(ch.Campaign, ch.Cost, ch.At)
		}
	}
	return nil
}
