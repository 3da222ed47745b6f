package web

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/billing"
)

// InvoiceStore is what the routes of invoices need of the store.
type InvoiceStore interface {
	IssueInvoice(ctx context.Context, inv marquee.Invoice) (marquee.Invoice, error)
	Invoice(ctx context.Context, id int64) (marquee.Invoice, error)
	ListInvoices(ctx context.Context, advertiser int64, limit int) ([]marquee.Invoice, error)
	ListStatements(ctx context.Context, site string, limit int) ([]marquee.Invoice, error)
}

// invoices issues and reads invoices: the store keeps them, the reports
// and the catalog price them.
type invoices struct {
	st       InvoiceStore
	multi    *multiReports
	now      func() time.Time
	balances *balances // a prepaid advertiser's payments and balance
}

// invoiceRequest is POST /api/v1/invoices's body.
type invoiceRequest struct {
	AdvertiserID int64
	From, To     time.Time
}

// parsePeriod reads a document's period: from and to at UTC midnights
// (the reports keep spend by campaign and UTC day), to after from and not
// past the end of today; problems are named in p.
func parsePeriod(fromText, toText string, now time.Time, p marquee.Problems) (from, to time.Time) {
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

func parseInvoiceRequest(body []byte, now time.Time) (invoiceRequest, error) {
	var raw struct {
		AdvertiserID json.RawMessage `json:"advertiserId"`
		From         string          `json:"from"`
		To           string          `json:"to"`
	}
	var in invoiceRequest
	p := marquee.Problems{}
	if err := json.Unmarshal(body, &raw); err != nil {
		return in, marquee.Invalid("invalid invoice", marquee.Problems{"body": "must be a JSON object {advertiserId, from, to}"})
	}
	var ok bool
	if in.AdvertiserID, ok = marquee.ParseID(raw.AdvertiserID); !ok {
		p["advertiserId"] = "is required: an advertiser's id"
	}
	in.From, in.To = parsePeriod(raw.From, raw.To, now, p)
	return in, marquee.Invalid("invalid invoice", p)
}

// handleIssueInvoice serves POST /api/v1/invoices {advertiserId, from,
// to}: 201 with the numbered invoice of the advertiser's billed spend
// over the period (billing.Invoice); a period that overlaps one of its
// invoices not credited is a 409.
func (iv *invoices) handleIssueInvoice() storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if len(ctx.PostBody()) > 4<<10 {
			return marquee.Errorf(marquee.KindTooLarge, "an invoice request is at most 4 KiB")
		}
		in, err := parseInvoiceRequest(ctx.PostBody(), iv.now())
		if err != nil {
			return err
		}
		adv, err := iv.multi.store.Advertiser(sctx, in.AdvertiserID)
		if err != nil {
			if marquee.KindOf(err) == marquee.KindNotFound {
				return marquee.Invalid("invalid invoice", marquee.Problems{"advertiserId": "is not an advertiser's id"})
			}
			return err
		}
		cat, err := reportCatalog(sctx, iv.multi.store, iv.multi.names, nil)
		if err != nil {
			return err
		}
		inv, err := billing.Invoice(sctx, iv.multi.rp, cat, in.AdvertiserID, in.From, in.To)
		if err != nil {
			return err
		}
		if inv.Prepaid, err = iv.prepayment(sctx, &adv, in.From, in.To); err != nil {
			return err
		}
		if inv, err = iv.st.IssueInvoice(sctx, inv); err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/invoices/"+strconv.FormatInt(inv.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, inv)
		return nil
	}
}

// Prepayment is what advertiser id's invoice over [from, to) shows of
// its prepaid balance (nil: it is not prepaid), for the monthly
// invoices (billing.Monthly.Prepaid).
func (s *Server) Prepayment(ctx context.Context, id int64, from, to time.Time) (*marquee.Prepayment, error) {
	adv, err := s.campaigns.Advertiser(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.invoices.prepayment(ctx, &adv, from, to)
}

// prepayment is what advertiser adv's invoice over [from, to) shows
// besides its lines when it is prepaid (nil when not): the top-ups paid in
// the period, and the balance now.
func (iv *invoices) prepayment(sctx context.Context, adv *marquee.Advertiser, from, to time.Time) (*marquee.Prepayment, error) {
	if !adv.Prepaid {
		return nil, nil
	}
	bal, err := iv.balances.balanceOf(sctx, adv)
	if err != nil {
		return nil, err
	}
	paid, err := iv.balances.st.ListTopUps(sctx, adv.ID, from, to, 10_000)
	if err != nil {
		return nil, err
	}
	pp := &marquee.Prepayment{Payments: []marquee.Payment{}, Balance: bal.Balance}
	for i := len(paid) - 1; i >= 0; i-- { // oldest first
		t := paid[i]
		ref, amount := t.SessionID, t.Amount
		if t.Kind != marquee.TopUpCard {
			ref = t.Reason
		}
		if t.Kind == marquee.TopUpDebit { // taken from the balance
			amount = -amount
		}
		pp.Payments = append(pp.Payments, marquee.Payment{TopUpID: t.ID, Kind: t.Kind, Amount: amount, PaidAt: t.PaidAt, Reference: ref})
		pp.Paid += amount
	}
	return pp, nil
}

// documentOf reads the invoice (statement: the statement) of the {id}
// segment that the credential may see — an advertiser's account its own
// invoices, a publisher's its sites' statements; any other is a 404.
func (iv *invoices) documentOf(sctx context.Context, ctx *fasthttp.RequestCtx, statement bool) (marquee.Invoice, error) {
	what := "invoice"
	if statement {
		what = "statement"
	}
	id, err := pathID(ctx, what)
	if err != nil {
		return marquee.Invoice{}, err
	}
	doc, err := iv.st.Invoice(sctx, id)
	if err == nil {
		b := boundsOf(ctx)
		mine := statement && b.HasSite(doc.Site) || !statement && b.HasAdvertiser(doc.AdvertiserID)
		if (doc.Kind == marquee.KindStatement) != statement || b.Bound() && !mine {
			err = marquee.Errorf(marquee.KindNotFound, "%s %d not found", what, id)
		}
	}
	if marquee.KindOf(err) == marquee.KindNotFound {
		return marquee.Invoice{}, marquee.Errorf(marquee.KindNotFound, "%s %d not found", what, id)
	}
	return doc, err
}

// handleGetInvoice serves GET /api/v1/invoices/{id} (statement: GET
// /api/v1/statements/{id}): JSON, or ?format=csv or pdf.
func (iv *invoices) handleGetInvoice(issuer string, statement bool) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		inv, err := iv.documentOf(sctx, ctx, statement)
		if err != nil {
			return err
		}
		switch string(ctx.QueryArgs().Peek("format")) {
		case "", "json":
			writeJSON(ctx, fasthttp.StatusOK, inv)
			return nil
		case "csv":
			ctx.SetContentType("text/csv; charset=utf-8")
			ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+inv.Number+`.csv"`)
			return billing.WriteCSV(ctx, inv)
		case "pdf":
			ctx.SetContentType("application/pdf")
			ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+inv.Number+`.pdf"`)
			return billing.WritePDF(ctx, inv, issuer)
		}
		return marquee.Invalid("invalid invoice request", marquee.Problems{"format": "must be one of json, csv, pdf"})
	}
}

// handleListInvoices serves GET /api/v1/invoices?advertiserId=: newest
// first (an advertiser's account: its own only).
func (iv *invoices) handleListInvoices() storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		var adv int64
		if a := ctx.QueryArgs().Peek("advertiserId"); len(a) > 0 {
			var err error
			if adv, err = strconv.ParseInt(string(a), 10, 64); err != nil || adv <= 0 {
				return marquee.Invalid("invalid invoice request", marquee.Problems{"advertiserId": "must be an advertiser's id"})
			}
		}
		b := boundsOf(ctx)
		if b.Bound() && adv != 0 && !b.HasAdvertiser(adv) {
			return marquee.Errorf(marquee.KindNotFound, "advertiser not found")
		}
		var out []marquee.Invoice
		for _, a := range advertisersOf(b, adv) {
			list, err := iv.st.ListInvoices(sctx, a, 500)
			if err != nil {
				return err
			}
			out = append(out, list...)
		}
		if out == nil {
			out = []marquee.Invoice{}
		}
		writeJSON(ctx, fasthttp.StatusOK, struct {
			Invoices []marquee.Invoice `json:"invoices"`
		}{out})
		return nil
	}
}

// advertisersOf is whose invoices a credential of bounds b lists: the one
// asked for, or b's advertisers, or (the team) everyone's (0).
func advertisersOf(b marquee.Bounds, asked int64) []int64 {
	switch {
	case asked != 0:
		return []int64{asked}
	case b.Bound():
		return b.Advertisers
	}
	return []int64{0}
}

// handleCreditInvoice serves POST /api/v1/invoices/{id}/credit: 201 with
// the credit note that cancels the invoice (every amount negated); the
// period may then be invoiced again. A credit note, or an invoice
// credited already, is a 409.
func (iv *invoices) handleCreditInvoice() storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		inv, err := iv.documentOf(sctx, ctx, false)
		if err != nil {
			return err
		}
		if inv.Kind != marquee.KindInvoice || inv.CreditedBy != "" {
			return marquee.Errorf(marquee.KindConflict, "%s is a credit note, or was credited already (%s)", inv.Number, inv.CreditedBy)
		}
		cn, err := iv.st.IssueInvoice(sctx, billing.CreditNote(inv))
		if err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/invoices/"+strconv.FormatInt(cn.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, cn)
		return nil
	}
}

// handleIssueStatement serves POST /api/v1/statements {site, from, to}:
// 201 with the numbered statement of what the site's publisher is owed
// for the period (billing.Statement); a period that overlaps one of the
// site's statements is a 409.
func (iv *invoices) handleIssueStatement() storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		var raw struct{ Site, From, To string }
		if len(ctx.PostBody()) > 4<<10 {
			return marquee.Errorf(marquee.KindTooLarge, "a statement request is at most 4 KiB")
		}
		p := marquee.Problems{}
		if err := json.Unmarshal(ctx.PostBody(), &raw); err != nil {
			p["body"] = "must be a JSON object {site, from, to}"
		}
		if raw.Site == "" {
			p["site"] = "is required: a site's name"
		}
		from, to := parsePeriod(raw.From, raw.To, iv.now(), p)
		if err := marquee.Invalid("invalid statement", p); err != nil {
			return err
		}
		cat, err := reportCatalog(sctx, iv.multi.store, iv.multi.names, iv.multi.sites)
		if err != nil {
			return err
		}
		if _, ok := cat.Shares[raw.Site]; !ok {
			return marquee.Invalid("invalid statement", marquee.Problems{"site": "is not a site's name (POST /api/v1/sites gives a site its revenue share)"})
		}
		st, err := billing.Statement(sctx, iv.multi.rp, cat, raw.Site, from, to)
		if err != nil {
			return err
		}
		if st, err = iv.st.IssueInvoice(sctx, st); err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/statements/"+strconv.FormatInt(st.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, st)
		return nil
	}
}

// handleListStatements serves GET /api/v1/statements?site=: newest first
// (a publisher's account: its sites' only).
func (iv *invoices) handleListStatements() storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		site := string(ctx.QueryArgs().Peek("site"))
		b := boundsOf(ctx)
		if b.Bound() && site != "" && !b.HasSite(site) {
			return marquee.NoSite(site)
		}
		sites := []string{site}
		if b.Bound() && site == "" {
			sites = b.Sites
		}
		out := []marquee.Invoice{}
		for _, s := range sites {
			list, err := iv.st.ListStatements(sctx, s, 500)
			if err != nil {
				return err
			}
			out = append(out, list...)
		}
		writeJSON(ctx, fasthttp.StatusOK, struct {
			Statements []marquee.Invoice `json:"statements"`
		}{out})
		return nil
	}
}
