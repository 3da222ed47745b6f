package sqltx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"marquee"
)

// Invoices: a row each, the document as issued in body; numbered from one
// gapless series (invoice_seq, updated in the transaction that issues it:
// issues take turns).

const invoiceCols = `id, seq, credited_by, body`

// storedInvoice is an invoice's body as kept: amounts as integers of
// micro-units (a credit note's are negative, which marquee.Micros's JSON,
// an input's, refuses).
type storedInvoice struct {
	Kind         string         `json:"kind"`
	AdvertiserID int64          `json:"advertiserId"`
	Advertiser   string         `json:"advertiser"`
	Currency     string         `json:"currency"`
	From         time.Time      `json:"from"`
	To           time.Time      `json:"to"`
	IssuedAt     time.Time      `json:"issuedAt"`
	Lines        []storedLine   `json:"lines"`
	Adjustments  []storedAdj    `json:"adjustments"`
	Total        int64          `json:"total"`
	Corrects     string         `json:"corrects,omitempty"`
	Site         string         `json:"site,omitempty"`
	RevenueShare float64        `json:"revenueShare,omitempty"`
	Gross        int64          `json:"gross,omitempty"`
	Placements   []storedPl     `json:"placements,omitempty"`
	Prepaid      *storedPrepaid `json:"prepaid,omitempty"`
}

// storedPrepaid is a prepaid advertiser's payments and balance, as an
// invoice showed them (a balance may be negative in a credit note).
type storedPrepaid struct {
	Payments []storedPayment `json:"payments"`
	Paid     int64           `json:"paid"`
	Balance  int64           `json:"balance"`
}

type storedPayment struct {
	TopUpID   int64     `json:"topUpId"`
	Kind      string    `json:"kind"`
	Amount    int64     `json:"amount"`
	PaidAt    time.Time `json:"paidAt"`
	Reference string    `json:"reference"`
}

type storedPl struct {
	PlacementID int64  `json:"placementId"`
	Placement   string `json:"placement"`
	Impressions int64  `json:"impressions"`
	Gross       int64  `json:"gross"`
	Net         int64  `json:"net"`
}

type storedLine struct {
	CampaignID   int64  `json:"campaignId"`
	Campaign     string `json:"campaign"`
	Model        string `json:"model"`
	Events       int64  `json:"events"`
	Rate, Amount int64
}

type storedAdj struct {
	CampaignID  int64  `json:"campaignId"`
	PlacementID int64  `json:"placementId,omitempty"` // a statement's
	Reason      string `json:"reason"`
	IVT         string `json:"ivt,omitempty"`
	Events      int64  `json:"events"`
	Amount      int64  `json:"amount"`
}

func storedOf(inv *marquee.Invoice) storedInvoice {
	s := storedInvoice{Kind: inv.Kind, AdvertiserID: inv.AdvertiserID, Advertiser: inv.Advertiser, Currency: inv.Currency, From: inv.From, To: inv.To,
		IssuedAt: inv.IssuedAt, Total: int64(inv.Total), Corrects: inv.Corrects, Lines: []storedLine{}, Adjustments: []storedAdj{}}
	for _, l := range inv.Lines {
		s.Lines = append(s.Lines, storedLine{l.CampaignID, l.Campaign, l.Model, l.Events, int64(l.Rate), int64(l.Amount)})
	}
	for _, a := range inv.Adjustments {
		s.Adjustments = append(s.Adjustments, storedAdj{a.CampaignID, a.PlacementID, a.Reason, a.IVT, a.Events, int64(a.Amount)})
	}
	s.Site, s.RevenueShare, s.Gross = inv.Site, inv.RevenueShare, int64(inv.Gross)
	if pp := inv.Prepaid; pp != nil {
		s.Prepaid = &storedPrepaid{Payments: []storedPayment{}, Paid: int64(pp.Paid), Balance: int64(pp.Balance)}
		for _, p := range pp.Payments {
			s.Prepaid.Payments = append(s.Prepaid.Payments, storedPayment{p.TopUpID, p.Kind, int64(p.Amount), p.PaidAt, p.Reference})
		}
	}
	for _, p := range inv.PlacementLines {
		s.Placements = append(s.Placements, storedPl{p.PlacementID, p.Placement, p.Impressions, int64(p.Gross), int64(p.Net)})
	}
	return s
}

func (s *storedInvoice) invoice() marquee.Invoice {
	inv := marquee.Invoice{Kind: s.Kind, AdvertiserID: s.AdvertiserID, Advertiser: s.Advertiser, Currency: s.Currency, From: s.From.UTC(), To: s.To.UTC(),
		IssuedAt: s.IssuedAt.UTC(), Total: marquee.Micros(s.Total), Corrects: s.Corrects, Lines: []marquee.InvoiceLine{}, Adjustments: []marquee.Adjustment{}}
	for _, l := range s.Lines {
		inv.Lines = append(inv.Lines, marquee.InvoiceLine{CampaignID: l.CampaignID, Campaign: l.Campaign, Model: l.Model, Events: l.Events,
			Rate: marquee.Micros(l.Rate), Amount: marquee.Micros(l.Amount)})
	}
	for _, a := range s.Adjustments {
		inv.Adjustments = append(inv.Adjustments, marquee.Adjustment{CampaignID: a.CampaignID, PlacementID: a.PlacementID, Reason: a.Reason, IVT: a.IVT, Events: a.Events, Amount: marquee.Micros(a.Amount)})
	}
	inv.Site, inv.RevenueShare, inv.Gross = s.Site, s.RevenueShare, marquee.Micros(s.Gross)
	if pp := s.Prepaid; pp != nil {
		inv.Prepaid = &marquee.Prepayment{Payments: []marquee.Payment{}, Paid: marquee.Micros(pp.Paid), Balance: marquee.Micros(pp.Balance)}
		for _, p := range pp.Payments {
			inv.Prepaid.Payments = append(inv.Prepaid.Payments, marquee.Payment{TopUpID: p.TopUpID, Kind: p.Kind, Amount: marquee.Micros(p.Amount),
				PaidAt: p.PaidAt.UTC(), Reference: p.Reference})
		}
	}
	for _, p := range s.Placements {
		inv.PlacementLines = append(inv.PlacementLines, marquee.PlacementLine{PlacementID: p.PlacementID, Placement: p.Placement, Impressions: p.Impressions,
			Gross: marquee.Micros(p.Gross), Net: marquee.Micros(p.Net)})
	}
	return inv
}

func scanInvoice(r Row) (marquee.Invoice, error) {
	var id, seq int64
	var credited, body string
	if err := r.Scan(&id, &seq, &credited, &body); err != nil {
		return marquee.Invoice{}, err
	}
	var st storedInvoice
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		return marquee.Invoice{}, fmt.Errorf("invoice %d: decode: %w", id, err)
	}
	inv := st.invoice()
	inv.ID, inv.Number, inv.CreditedBy = id, invoiceNumber(seq), credited
	return inv, nil
}

// invoiceNumber spells a document's number.
func invoiceNumber(seq int64) string { return fmt.Sprintf("MQ-%06d", seq) }

// IssueInvoice numbers and keeps inv (an invoice, a statement or a credit
// note) as issued at now, under one lock with the check below (any number
// of instances at once issue a period once). An invoice whose period overlaps one of the same
// advertiser's that no credit note cancelled is a KindConflict error (a
// correction is a credit note, then a new invoice). A credit note marks
// the invoice it Corrects as cancelled (it must not be already).
func (s *Store) IssueInvoice(ctx context.Context, inv marquee.Invoice) (marquee.Invoice, error) {
	return write(ctx, s, "issue invoice", func(tx Tx, now time.Time) (marquee.Invoice, error) {
		// The number's row is the lock every document takes first: the
		// overlap check below reads what any other issuer committed before
		// it (each statement sees the latest commits on every store), so
		// two instances never issue one period twice.
		var seq int64
		if _, err := tx.Exec(ctx, `UPDATE invoice_seq SET last = last + 1 WHERE id = 1`); err != nil {
			return inv, err
		}
		if inv.Kind == marquee.KindInvoice || inv.Kind == marquee.KindStatement {
			var n int64
			err := tx.QueryRow(ctx, `SELECT seq FROM invoices WHERE advertiser_id = ? AND site = ? AND kind = ? AND credited_by = '' AND period_from < ? AND period_to > ? LIMIT 1`,
				inv.AdvertiserID, inv.Site, inv.Kind, inv.To.UnixMilli(), inv.From.UnixMilli()).Scan(&n)
			switch {
			case err == nil && inv.Kind == marquee.KindStatement:
				return inv, marquee.Errorf(marquee.KindConflict, "site %q's statement %s covers part of this period", inv.Site, invoiceNumber(n))
			case err == nil:
				return inv, marquee.Errorf(marquee.KindConflict, "advertiser %d's invoice %s covers part of this period: credit it first (POST /api/v1/invoices/{id}/credit)", inv.AdvertiserID, invoiceNumber(n))
			case !errors.Is(err, ErrNoRows):
				return inv, err
			}
		}
		if err := tx.QueryRow(ctx, `SELECT last FROM invoice_seq WHERE id = 1`).Scan(&seq); err != nil {
			return inv, err
		}
		inv.Number, inv.IssuedAt, inv.CreditedBy = invoiceNumber(seq), now.UTC().Truncate(time.Millisecond), ""
		if inv.Kind == marquee.KindCreditNote {
			n, err := tx.Exec(ctx, `UPDATE invoices SET credited_by = ? WHERE seq = ? AND kind = ? AND credited_by = ''`,
				inv.Number, seqOf(inv.Corrects), marquee.KindInvoice)
			if err != nil {
				return inv, err
			}
			if n == 0 {
				return inv, marquee.Errorf(marquee.KindConflict, "invoice %s is cancelled already (or is not an invoice)", inv.Corrects)
			}
		}
		body, err := json.Marshal(storedOf(&inv))
		if err != nil {
			return inv, err
		}
		inv.ID, err = s.insertID(ctx, tx, `INSERT INTO invoices (seq, kind, advertiser_id, site, period_from, period_to, total_micros, body, issued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			"", seq, inv.Kind, inv.AdvertiserID, inv.Site, inv.From.UnixMilli(), inv.To.UnixMilli(), int64(inv.Total), string(body), now.UnixMilli())
		if err != nil {
			return inv, err
		}
		entity := marquee.EntityInvoice
		if inv.Kind == marquee.KindStatement {
			entity = marquee.EntityStatement
		}
		if inv.Kind == marquee.KindCreditNote { // the invoice it cancels
			if err := auditOnly(ctx, tx, entity, inv.Corrects, documentFacts{Number: inv.Corrects}, documentFacts{Number: inv.Corrects, CreditedBy: inv.Number}); err != nil {
				return inv, err
			}
		}
		return inv, auditOnly(ctx, tx, entity, inv.Number, nil, factsOf(&inv))
	})
}

// documentFacts are what the audit log records of a document issued (its
// lines are the document's own).
type documentFacts struct {
	Number       string          `json:"number"`
	Kind         string          `json:"kind,omitempty"`
	AdvertiserID int64           `json:"advertiserId,omitempty"`
	Site         string          `json:"site,omitempty"`
	From         *time.Time      `json:"from,omitempty"`
	To           *time.Time      `json:"to,omitempty"`
	Lines        int             `json:"lines,omitempty"`
	Total        *marquee.Micros `json:"total,omitempty"`
	Corrects     string          `json:"corrects,omitempty"`
	CreditedBy   string          `json:"creditedBy,omitempty"`
}

func factsOf(inv *marquee.Invoice) documentFacts {
	total := inv.Total
	return documentFacts{Number: inv.Number, Kind: inv.Kind, AdvertiserID: inv.AdvertiserID, Site: inv.Site, From: &inv.From, To: &inv.To,
		Lines: len(inv.Lines) + len(inv.PlacementLines), Total: &total, Corrects: inv.Corrects}
}

// seqOf reads a document number's sequence (0: not one).
func seqOf(number string) int64 {
	var seq int64
	fmt.Sscanf(number, "MQ-%d", &seq)
	return seq
}

// Invoice returns invoice (or credit note) id, or marquee.NoInvoice.
func (s *Store) Invoice(ctx context.Context, id int64) (marquee.Invoice, error) {
	return withDB(ctx, s, "get invoice", func(db DB) (marquee.Invoice, error) {
		inv, err := scanInvoice(db.QueryRow(ctx, `SELECT `+invoiceCols+` FROM invoices WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return inv, marquee.NoInvoice(id)
		}
		return inv, err
	})
}

// ListInvoices returns the invoices and credit notes of advertiser (0:
// every advertiser's), newest first, at most limit.
func (s *Store) ListInvoices(ctx context.Context, advertiser int64, limit int) ([]marquee.Invoice, error) {
	return withDB(ctx, s, "list invoices", func(db DB) ([]marquee.Invoice, error) {
		q, args := `SELECT `+invoiceCols+` FROM invoices WHERE kind <> ?`, []any{marquee.KindStatement}
		if advertiser != 0 {
			q, args = q+` AND advertiser_id = ?`, append(args, advertiser)
		}
		return query(ctx, db, func(r Rows) (marquee.Invoice, error) { return scanInvoice(r) }, q+` ORDER BY seq DESC LIMIT ?`, append(args, limit)...)
	})
}

// ListStatements returns the statements of site ("": every site's),
// newest first, at most limit.
func (s *Store) ListStatements(ctx context.Context, site string, limit int) ([]marquee.Invoice, error) {
	return withDB(ctx, s, "list statements", func(db DB) ([]marquee.Invoice, error) {
		q, args := `SELECT `+invoiceCols+` FROM invoices WHERE kind = ?`, []any{marquee.KindStatement}
		if site != "" {
			q, args = q+` AND site = ?`, append(args, site)
		}
		return query(ctx, db, func(r Rows) (marquee.Invoice, error) { return scanInvoice(r) }, q+` ORDER BY seq DESC LIMIT ?`, append(args, limit)...)
	})
}
