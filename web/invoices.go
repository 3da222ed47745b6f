package web

import (
	"context"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/billing"
)

// InvoiceStore is what the routes of invoices read of the store (the
// back office, billing.Service, issues them).
type InvoiceStore interface {
	Invoice(ctx context.Context, id int64) (marquee.Invoice, error)
	ListInvoices(ctx context.Context, advertiser int64, limit int) ([]marquee.Invoice, error)
	ListStatements(ctx context.Context, site string, limit int) ([]marquee.Invoice, error)
}

// handleIssueInvoice serves POST /api/v1/invoices {advertiserId, from,
// to}: 201 with the numbered invoice (billing.Service.IssueInvoice).
// handleIssueStatement serves POST /api/v1/statements {site, from, to}
// likewise (billing.Service.IssueStatement).
func handleIssueInvoice(bs *billing.Service, now func() time.Time, statement bool) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if len(ctx.PostBody()) > 4<<10 {
			return marquee.Errorf(marquee.KindTooLarge, "a document's request is at most 4 KiB")
		}
		var doc marquee.Invoice
		if statement {
			in, err := marquee.ParseStatementRequest(ctx.PostBody(), now())
			if err == nil {
				doc, err = bs.IssueStatement(sctx, in.Site, in.From, in.To)
			}
			if err != nil {
				return err
			}
			ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/statements/"+strconv.FormatInt(doc.ID, 10))
		} else {
			in, err := marquee.ParseInvoiceRequest(ctx.PostBody(), now())
			if err == nil {
				doc, err = bs.IssueInvoice(sctx, in.AdvertiserID, in.From, in.To)
			}
			if err != nil {
				return err
			}
			ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/invoices/"+strconv.FormatInt(doc.ID, 10))
		}
		writeJSON(ctx, fasthttp.StatusCreated, doc)
		return nil
	}
}

// documentOf reads the invoice (statement: the statement) of the {id}
// segment that the credential may see — an advertiser's account its own
// invoices, a publisher's its sites' statements; any other is a 404.
func documentOf(sctx context.Context, ctx *fasthttp.RequestCtx, st InvoiceStore, statement bool) (marquee.Invoice, error) {
	what := "invoice"
	if statement {
		what = "statement"
	}
	id, err := pathID(ctx, what)
	if err != nil {
		return marquee.Invoice{}, err
	}
	doc, err := st.Invoice(sctx, id)
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
func handleGetInvoice(st InvoiceStore, issuer string, statement bool) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		inv, err := documentOf(sctx, ctx, st, statement)
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
func handleListInvoices(st InvoiceStore) storeHandler {
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
		asked := []int64{adv} // one, or (the team, 0) everyone's
		if b.Bound() && adv == 0 {
			asked = b.Advertisers
		}
		out := []marquee.Invoice{}
		for _, a := range asked {
			list, err := st.ListInvoices(sctx, a, 500)
			if err != nil {
				return err
			}
			out = append(out, list...)
		}
		writeJSON(ctx, fasthttp.StatusOK, struct {
			Invoices []marquee.Invoice `json:"invoices"`
		}{out})
		return nil
	}
}

// handleCreditInvoice serves POST /api/v1/invoices/{id}/credit: 201 with
// the credit note that cancels the invoice (billing.Service.Credit).
func handleCreditInvoice(bs *billing.Service, st InvoiceStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		inv, err := documentOf(sctx, ctx, st, false)
		if err != nil {
			return err
		}
		cn, err := bs.Credit(sctx, inv)
		if err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/invoices/"+strconv.FormatInt(cn.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, cn)
		return nil
	}
}

// handleListStatements serves GET /api/v1/statements?site=: newest first
// (a publisher's account: its sites' only).
func handleListStatements(st InvoiceStore) storeHandler {
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
			list, err := st.ListStatements(sctx, s, 500)
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
