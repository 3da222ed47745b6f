package web

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/reportmail"
	"marquee/reports"
)

// Limits of a report by several dimensions.
const (
	defaultReportRows = 1000
	maxReportRows     = 100_000
)

// multiReports runs reports by several dimensions: from a route's query,
// a saved report's, or a schedule's.
type multiReports struct {
	rp       *reports.Reporter
	store    CampaignStore
	catalogs *reports.Catalogs
}

// Names names the rows of reports: the titles of ads, the codes of links,
// the names of campaigns, advertisers and placements, by id.
type Names interface {
	EntityNames(ctx context.Context, entity string, ids []int64) (map[int64]string, error)
}

// run answers the report of args (GET /api/v1/reports's parameters, the
// range given by from and to when they are not zero) for a credential of
// bounds b: an account's report is of its advertisers or its sites only.
func (m *multiReports) run(sctx context.Context, args *fasthttp.Args, accept []byte, b marquee.Bounds, from, to time.Time) (*reports.MultiReport, string, error) {
	q, format, err := parseMultiQuery(sctx, args, accept, m.rp, m.store)
	if err != nil {
		return nil, "", err
	}
	if !from.IsZero() {
		q.From, q.To = from, to
	}
	if b.Bound() {
		if err := boundDims(q, b); err != nil {
			return nil, "", err
		}
		var some bool
		if len(b.Advertisers) > 0 {
			q.Advertisers, some = narrowed(q.Advertisers, b.Advertisers)
		} else {
			q.Sites, some = narrowed(q.Sites, b.Sites)
			q.Publisher = true
		}
		if !some {
			return m.rp.EmptyMulti(q), format, nil
		}
	}
	cat, err := m.catalogs.Catalog(sctx)
	if err != nil {
		return nil, "", err
	}
	rep, err := m.rp.Multi(sctx, q, cat)
	return rep, format, err
}

// handleMultiReport serves GET /api/v1/reports?by=campaign,placement: a
// report by up to three dimensions, as JSON, CSV or XLSX
// (docs/api.md#reports-by-several-dimensions).
func handleMultiReport(m *multiReports) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		rep, format, err := m.run(sctx, ctx.QueryArgs(), ctx.Request.Header.Peek(fasthttp.HeaderAccept), boundsOf(ctx), time.Time{}, time.Time{})
		if err != nil {
			return err
		}
		return writeMulti(ctx, rep, format)
	}
}

// Render renders saved report r over [from, to) as format (csv or xlsx),
// bound as its owner was: what a schedule's email attaches.
func (m *multiReports) Render(ctx context.Context, r marquee.SavedReport, from, to time.Time, format string) (reportmail.Attachment, error) {
	var args fasthttp.Args
	args.Parse(r.Query)
	rep, _, err := m.run(ctx, &args, nil, r.Bounds, from, to)
	if err != nil {
		return reportmail.Attachment{}, err
	}
	var b bytes.Buffer
	att := reportmail.Attachment{Name: "report.csv", ContentType: "text/csv; charset=utf-8"}
	if format == "xlsx" {
		att = reportmail.Attachment{Name: "report.xlsx", ContentType: reports.ContentTypeXLSX}
		err = rep.WriteXLSX(&b)
	} else {
		err = rep.WriteCSV(&b)
	}
	att.Data = b.Bytes()
	return att, err
}

// writeMulti writes rep as format: json, csv or xlsx.
func writeMulti(ctx *fasthttp.RequestCtx, rep *reports.MultiReport, format string) error {
	switch format {
	case "csv":
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType("text/csv; charset=utf-8")
		ctx.Response.Header.Set("Content-Disposition", `attachment; filename="report.csv"`)
		return rep.WriteCSV(ctx)
	case "xlsx":
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType(reports.ContentTypeXLSX)
		ctx.Response.Header.Set("Content-Disposition", `attachment; filename="report.xlsx"`)
		return rep.WriteXLSX(ctx)
	}
	writeJSON(ctx, fasthttp.StatusOK, rep)
	return nil
}

// parseMultiQuery reads a report by several dimensions' parameters:
// by, granularity, from, to, tz, bots, the filters advertiser, campaign
// and ad (ids), placement (names), site, country and device (values),
// each comma-separated, limit, and format (json, csv or xlsx; or an
// Accept naming text/csv).
func parseMultiQuery(sctx context.Context, args *fasthttp.Args, accept []byte, rp *reports.Reporter, store CampaignStore) (reports.MultiQuery, string, error) {
	p := marquee.Problems{}
	q := reports.MultiQuery{Limit: defaultReportRows}
	q.From, q.To, q.Loc, q.Bots = reportWindow(args, rp, p)
	q.Granularity = oneOfParam(args, p, "granularity", reports.Total, reports.Day, reports.Month, reports.Total)
	q.By = listParam(args, "by")
	ids := func(k string) []int64 {
		var out []int64
		for _, v := range listParam(args, k) {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id <= 0 {
				p[k] = fmt.Sprintf("must be ids, comma-separated, got %q", v)
				return nil
			}
			out = append(out, id)
		}
		return out
	}
	q.Advertisers, q.Campaigns, q.Ads = ids("advertiser"), ids("campaign"), ids("ad")
	for _, name := range listParam(args, "placement") {
		pl, err := store.Placement(sctx, name)
		if marquee.KindOf(err) == marquee.KindNotFound || marquee.CheckPlacementName(name) != "" {
			p["placement"] = fmt.Sprintf("no placement %q", name)
			continue
		}
		if err != nil {
			return q, "", err
		}
		q.Placements = append(q.Placements, pl.ID)
	}
	q.Sites, q.Devices = listParam(args, "site"), listParam(args, "device")
	for _, c := range listParam(args, "country") {
		if _, ok := marquee.CountrySlot(c); !ok {
			p["country"] = fmt.Sprintf("must be ISO 3166-1 alpha-2 codes, got %q", c)
		}
		q.Countries = append(q.Countries, strings.ToUpper(c))
	}
	intParam(args, "limit", 1, maxReportRows, &q.Limit, func(k, msg string) { p[k] = msg })
	_, given := param(args, "format")
	format := oneOfParam(args, p, "format", "json", "json", "csv", "xlsx")
	if !given && strings.Contains(string(accept), "text/csv") {
		format = "csv"
	}
	if len(p) == 0 {
		for k, v := range rp.CheckMulti(&q) {
			p[k] = v
		}
	}
	return q, format, marquee.Invalid("invalid query", p)
}

// listParam is parameter k's comma-separated values (none when absent).
func listParam(args *fasthttp.Args, k string) []string {
	v, ok := param(args, k)
	if !ok {
		return nil
	}
	var out []string
	for part := range strings.SplitSeq(string(v), ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// boundDims refuses what an account may not cut its report by: each side
// reads its own side of the report. An advertiser's account reads its
// campaigns by advertiser, campaign, ad, country, device and key-value,
// not where (which publisher's placements and sites) they ran; a
// publisher's account reads its placements by placement, site, bidder,
// country, device and key-value, not whose ads filled them.
func boundDims(q reports.MultiQuery, b marquee.Bounds) error {
	theirs, filters := []string{reports.DimPlacement, reports.DimSite, reports.DimBidder}, len(q.Placements)+len(q.Sites)
	who := "an advertiser's account reads its campaigns by advertiser, campaign, ad, country, device and key-value"
	if len(b.Sites) > 0 {
		theirs, filters = []string{reports.DimAdvertiser, reports.DimCampaign, reports.DimAd}, len(q.Advertisers)+len(q.Campaigns)+len(q.Ads)
		who = "a publisher's account reads its placements by placement, site, bidder, country, device and key-value"
	}
	p := marquee.Problems{}
	for _, d := range q.By {
		if slices.Contains(theirs, d) {
			p["by"] = fmt.Sprintf("%q: %s", d, who)
		}
	}
	if filters > 0 {
		p["filter"] = who
	}
	return marquee.Invalid("invalid query", p)
}
