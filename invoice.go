package marquee

import (
	"encoding/json"
	"time"
)

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
	// PartnerGross is the part of Gross the demand partners' bids earned
	// (docs/demand.md): the partners pay the network, which owes the
	// publisher its share of it as of its campaigns'.
	PartnerGross Micros `json:"partnerGross,omitempty"`
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
// not charged. A statement's adjustments name a placement instead: its
// events of invalid traffic (a quarantined site's: "quarantined"), what
// they would have earned (gross), earned nothing.
type Adjustment struct {
	CampaignID  int64  `json:"campaignId,string,omitempty"`
	PlacementID int64  `json:"placementId,string,omitempty"`
	Reason      string `json:"reason"`
	IVT         string `json:"ivt,omitempty"`
	Events      int64  `json:"events"`
	Amount      Micros `json:"amount"`
}

// NoInvoice is the error of an invoice that does not exist.
func NoInvoice(id int64) *Error { return Errorf(KindNotFound, "invoice %d not found", id) }

// A DocumentRequest asks for an invoice (AdvertiserID) or a statement
// (Site) over [From, To): whole UTC days.
type DocumentRequest struct {
	AdvertiserID int64
	Site         string
	From, To     time.Time
}

// ParseInvoiceRequest reads POST /api/v1/invoices's body {advertiserId,
// from, to} at now, every problem named.
func ParseInvoiceRequest(body []byte, now time.Time) (DocumentRequest, error) {
	var raw struct {
		AdvertiserID json.RawMessage `json:"advertiserId"`
		From         string          `json:"from"`
		To           string          `json:"to"`
	}
	var in DocumentRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return in, Invalid("invalid invoice", Problems{"body": "must be a JSON object {advertiserId, from, to}"})
	}
	p := Problems{}
	var ok bool
	if in.AdvertiserID, ok = ParseID(raw.AdvertiserID); !ok {
		p["advertiserId"] = "is required: an advertiser's id"
	}
	in.From, in.To = parsePeriod(raw.From, raw.To, now, p)
	return in, Invalid("invalid invoice", p)
}

// ParseStatementRequest reads POST /api/v1/statements's body {site,
// from, to} at now, every problem named.
func ParseStatementRequest(body []byte, now time.Time) (DocumentRequest, error) {
	var raw struct {
		Site string `json:"site"`
		From string `json:"from"`
		To   string `json:"to"`
	}
	p := Problems{}
	if err := json.Unmarshal(body, &raw); err != nil {
		p["body"] = "must be a JSON object {site, from, to}"
	}
	if raw.Site == "" {
		p["site"] = "is required: a site's name"
	}
	in := DocumentRequest{Site: raw.Site}
	in.From, in.To = parsePeriod(raw.From, raw.To, now, p)
	return in, Invalid("invalid statement", p)
}

// parsePeriod reads a document's period: from and to at UTC midnights
// (the reports keep spend by campaign and UTC day), to after from and not
// past the end of today; problems are named in p.
func parsePeriod(fromText, toText string, now time.Time, p Problems) (from, to time.Time) {
	day := func(k, s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		switch {
		case err != nil:
			p[k] = "must be an RFC 3339 time at a UTC midnight (2026-11-01T00:00:00Z)"
		case !t.Equal(t.UTC().Truncate(24 * time.Hour)):
			p[k] = "must be a UTC midnight: documents count whole UTC days, as the reports keep spend"
		}
		return t.UTC()
	}
	from, to = day("from", fromText), day("to", toText)
	if _, bad := p["to"]; !bad && !to.After(from) {
		p["to"] = "must be after from"
	}
	if _, bad := p["to"]; !bad && to.After(now.UTC().Truncate(24*time.Hour).Add(24*time.Hour)) {
		p["to"] = "must not be past the end of today (UTC): a document counts what has been billed"
	}
	return from, to
}
