package marquee

import "time"

// An Invoice is a numbered, immutable bill to an advertiser for a period
// (docs/api.md#invoices): a line per campaign — its billed events, price
// model, effective rate and amount — and, shown but not charged, what was
// billed nothing (delivered past a budget, invalid traffic). Total is the
// sum of the lines: the advertiser's billed spend over the period (the
// Ledger's, as the reports count it) plus its flat fees' share. A
// correction is a credit note (Kind CreditNote, Corrects naming the
// invoice, every amount negated) and a new invoice, never an edit.
type Invoice struct {
	ID           int64         `json:"id,string"`
	Number       string        `json:"number"`
	Kind         string        `json:"kind"`
	AdvertiserID int64         `json:"advertiserId,string"`
	Advertiser   string        `json:"advertiser"`
	Currency     string        `json:"currency"`
	From         time.Time     `json:"from"`
	To           time.Time     `json:"to"`
	IssuedAt     time.Time     `json:"issuedAt"`
	Lines        []InvoiceLine `json:"lines"`
	Adjustments  []Adjustment  `json:"adjustments"`
	Total        Micros        `json:"total"`
	Corrects     string        `json:"corrects,omitempty"`   // a credit note: the invoice it cancels
	CreditedBy   string        `json:"creditedBy,omitempty"` // an invoice: the credit note that cancelled it
	// A publisher's statement (Kind Statement) names its site and share;
	// its lines are the site's placements (PlacementLines), its Total the
	// net revenue owed to the publisher, Gross what the placements earned.
	Site           string          `json:"site,omitempty"`
	RevenueShare   float64         `json:"revenueShare,omitempty"`
	Gross          Micros          `json:"gross,omitempty"`
	PlacementLines []PlacementLine `json:"placements,omitempty"`
	// Prepaid: a prepaid advertiser's invoice shows the payments into its
	// balance over the period and the balance when issued (nothing is
	// due: the total was drawn from the balance).
	Prepaid *Prepayment `json:"prepaid,omitempty"`
}

// PlacementLine is one placement's part of a publisher's statement: its
// verified impressions, what its ads earned (gross) and the publisher's
// part (net: gross × the site's revenue share).
type PlacementLine struct {
	PlacementID int64  `json:"placementId,string"`
	Placement   string `json:"placement"`
	Impressions int64  `json:"impressions"`
	Gross       Micros `json:"gross"`
	Net         Micros `json:"net"`
}

// The kinds of invoice documents.
const (
	KindInvoice    = "invoice"
	KindCreditNote = "creditNote"
	KindStatement  = "statement"
)

// InvoiceLine is one campaign's part of an invoice: Events billed at its
// price model (flat: none), the effective Rate (Amount per event, or per
// thousand for cpm and vcpm; a flat fee's is its amount) and Amount.
type InvoiceLine struct {
	CampaignID int64  `json:"campaignId,string"`
	Campaign   string `json:"campaign"`
	Model      string `json:"model"`
	Events     int64  `json:"events"`
	Rate       Micros `json:"rate"`
	Amount     Micros `json:"amount"`
}

// Adjustment is what a campaign's events of Reason — "overBudget"
// (delivered past a spent budget) or "invalid" (invalid traffic, of the
// kind IVT names: "crawler", "datacenter", …, and "burst", events billed
// and then credited when their user or address went past its events a
// minute) — would have cost and were not billed: shown on an invoice,
// not charged.
type Adjustment struct {
	CampaignID int64  `json:"campaignId,string"`
	Reason     string `json:"reason"`
	IVT        string `json:"ivt,omitempty"`
	Events     int64  `json:"events"`
	Amount     Micros `json:"amount"`
}

// NoInvoice is the error of an invoice that does not exist.
func NoInvoice(id int64) *Error { return Errorf(KindNotFound, "invoice %d not found", id) }
