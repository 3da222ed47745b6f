package web

import (
	"context"
	"marquee/reports"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
)

// SavedReportStore is what the routes of saved reports need of the
// store.
type SavedReportStore interface {
	CreateSavedReport(ctx context.Context, r marquee.SavedReport) (marquee.SavedReport, error)
	SavedReport(ctx context.Context, id int64) (marquee.SavedReport, error)
	SavedReports(ctx context.Context) ([]marquee.SavedReport, error)
	ReplaceSavedReport(ctx context.Context, id int64, r marquee.SavedReport) (marquee.SavedReport, error)
	DeleteSavedReport(ctx context.Context, id int64) error
	ReportDeliveries(ctx context.Context, id int64, limit int) ([]marquee.ReportDelivery, error)
}

// ReportSender sends a saved report's latest period now (the server's
// reportmail.Scheduler; nil without -smtp).
type ReportSender interface {
	SendNow(ctx context.Context, r marquee.SavedReport) (marquee.ReportDelivery, error)
}

// MaxSavedReportBody bounds a saved report's body.
const MaxSavedReportBody = 8 << 10

// MaxBoundRecipients is how many addresses an advertiser's or a
// publisher's account may mail a report to (the team's accounts have
// marquee.MaxRecipients); how many reports it keeps and mails a day are
// marquee.MaxBoundSavedReports and MaxBoundMailsADay, which the store
// counts.
const MaxBoundRecipients = 5

// checkMail says what of saved report in an account of bounds b may not
// mail: a bound account mails only its own logins' addresses (the users
// of the same bounds) and addresses at the operator's allowed domains,
// to at most MaxBoundRecipients; nil when it may.
func checkMail(sctx context.Context, b marquee.Bounds, in marquee.SavedReport, users func(context.Context) ([]marquee.User, error), domains []string) error {
	if !b.Bound() || in.Schedule == nil {
		return nil
	}
	p := marquee.Problems{}
	if len(in.Schedule.To) > MaxBoundRecipients {
		p["schedule.to"] = "an advertiser's or a publisher's account mails a report to at most " + strconv.Itoa(MaxBoundRecipients) + " addresses"
	}
	own := map[string]bool{}
	if users != nil {
		us, err := users(sctx)
		if err != nil {
			return err
		}
		for _, u := range us {
			if u.Bounds.String() == b.String() {
				own[strings.ToLower(u.Email)] = true
			}
		}
	}
	for i, to := range in.Schedule.To {
		addr := strings.ToLower(to)
		_, domain, _ := strings.Cut(addr, "@")
		if !own[addr] && !slices.Contains(domains, domain) {
			p["schedule.to["+strconv.Itoa(i)+"]"] = "is not an address of this account's logins, nor at a domain the operator allows (-report-mail-domains): an account mails only its own people"
		}
	}
	return marquee.Invalid("invalid saved report", p)
}

// visibleTo says whether saved report r is the credential's of bounds b
// to see: every report for the ad team's credentials, and for an
// advertiser's or a publisher's account the reports saved in its world
// (of the same bounds).
func visibleTo(r marquee.SavedReport, b marquee.Bounds) bool {
	return !b.Bound() || r.Bounds.String() == b.String()
}

// savedReport reads the saved report of the {id} segment that the
// request's credential may see (404 otherwise).
func savedReport(sctx context.Context, ctx *fasthttp.RequestCtx, st SavedReportStore) (marquee.SavedReport, error) {
	id, err := pathID(ctx, "saved report")
	if err != nil {
		return marquee.SavedReport{}, err
	}
	r, err := st.SavedReport(sctx, id)
	if err == nil && !visibleTo(r, boundsOf(ctx)) {
		err = marquee.Errorf(marquee.KindNotFound, "no saved report %d", id)
	}
	return r, err
}

// readSavedReport reads a saved report's body and checks its query as
// GET /api/v1/reports checks it, for the request's credential.
func readSavedReport(sctx context.Context, ctx *fasthttp.RequestCtx, m *reports.Multis) (marquee.SavedReport, error) {
	in, err := readJSON(ctx, MaxSavedReportBody, marquee.ParseSavedReportInput)
	if err != nil {
		return in, err
	}
	q, _, err := reports.ParseMultiQuery(sctx, reports.ParseQueryParams(in.Query), nil, m.Reporter, m.Placements)
	if err == nil && boundsOf(ctx).Bound() {
		err = reports.BoundDims(q, boundsOf(ctx))
	}
	if e := marquee.AsError(err); e != nil && e.Kind == marquee.KindInvalid {
		problems := marquee.Problems{}
		for k, v := range e.Problems {
			problems["query."+k] = v
		}
		return in, marquee.Invalid("invalid saved report", problems)
	}
	return in, err
}

// handleCreateSavedReport serves POST /api/v1/saved-reports: 201 with the
// report, owned by the credential (and bound as it is).
func handleCreateSavedReport(st SavedReportStore, m *reports.Multis, users func(context.Context) ([]marquee.User, error), domains []string) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readSavedReport(sctx, ctx, m)
		if err == nil {
			err = checkMail(sctx, boundsOf(ctx), in, users, domains)
		}
		if err != nil {
			return err
		}
		p := principal(ctx)
		in.Owner, in.Bounds = p.Actor, p.Bounds
		r, err := st.CreateSavedReport(sctx, in)
		if err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/saved-reports/"+strconv.FormatInt(r.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, r)
		return nil
	}
}

// handleListSavedReports serves GET /api/v1/saved-reports: those the
// credential may see, by id.
func handleListSavedReports(st SavedReportStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		all, err := st.SavedReports(sctx)
		if err != nil {
			return err
		}
		b := boundsOf(ctx)
		all = slices.DeleteFunc(all, func(r marquee.SavedReport) bool { return !visibleTo(r, b) })
		if all == nil {
			all = []marquee.SavedReport{}
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"savedReports": all})
		return nil
	}
}

// handleGetSavedReport serves GET /api/v1/saved-reports/{id}.
func handleGetSavedReport(st SavedReportStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		r, err := savedReport(sctx, ctx, st)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, r)
		return nil
	}
}

// handleReplaceSavedReport serves PUT /api/v1/saved-reports/{id}: its
// name, query and schedule change (a new schedule starts with the next
// period due).
func handleReplaceSavedReport(st SavedReportStore, m *reports.Multis, users func(context.Context) ([]marquee.User, error), domains []string) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		old, err := savedReport(sctx, ctx, st)
		if err != nil {
			return err
		}
		in, err := readSavedReport(sctx, ctx, m)
		if err == nil {
			err = checkMail(sctx, boundsOf(ctx), in, users, domains)
		}
		if err != nil {
			return err
		}
		r, err := st.ReplaceSavedReport(sctx, old.ID, in)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, r)
		return nil
	}
}

// handleDeleteSavedReport serves DELETE /api/v1/saved-reports/{id}: 204.
func handleDeleteSavedReport(st SavedReportStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		r, err := savedReport(sctx, ctx, st)
		if err != nil {
			return err
		}
		if err := st.DeleteSavedReport(sctx, r.ID); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// handleReportDeliveries serves GET /api/v1/saved-reports/{id}/deliveries:
// the delivery log, newest period first (limit, default 50).
func handleReportDeliveries(st SavedReportStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		r, err := savedReport(sctx, ctx, st)
		if err != nil {
			return err
		}
		p := marquee.Problems{}
		limit := 50
		intParam(ctx.QueryArgs(), "limit", 1, 500, &limit, func(k, msg string) { p[k] = msg })
		if err := marquee.Invalid("invalid query", p); err != nil {
			return err
		}
		ds, err := st.ReportDeliveries(sctx, r.ID, limit)
		if ds == nil {
			ds = []marquee.ReportDelivery{}
		}
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"deliveries": ds})
		return nil
	}
}

// handleSendSavedReport serves POST /api/v1/saved-reports/{id}/send: the
// schedule's latest due period, emailed now (200 with its delivery; 409
// when that period was sent already; 503 without -smtp).
func handleSendSavedReport(st SavedReportStore, sender ReportSender) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		r, err := savedReport(sctx, ctx, st)
		if err != nil {
			return err
		}
		if sender == nil {
			return &marquee.Error{Kind: marquee.KindUnavailable, Message: "no mail server: start the server with -smtp to email reports", RetryAfter: time.Hour}
		}
		sendCtx, cancel := context.WithTimeout(sctx, time.Minute)
		defer cancel()
		d, err := sender.SendNow(sendCtx, r)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, d)
		return nil
	}
}
