package web

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/reportrow"
	"marquee/reports"
)

// statsOf names whose stats a route serves: the entity, and how its id is
// found from the path (a 404 for an unknown ad or link).
type statsOf struct {
	entity string
	id     func(sctx context.Context, ctx *fasthttp.RequestCtx) (int64, error)
	// more, when set, adds to the report of id (a campaign's goal and
	// spend, a link's destinations' URLs).
	more func(sctx context.Context, ctx *fasthttp.RequestCtx, id int64, q reports.Query, rep *reports.Report) error
}

// advertiserStats, campaignStats and placementStats find the entity of
// GET /api/v1/advertisers/{id}/stats, /api/v1/campaigns/{id}/stats and
// /api/v1/placements/{name}/stats.
func advertiserStats(store CampaignStore, rp *reports.Reporter) statsOf {
	return statsOf{entity: marquee.EntityAdvertiser, id: func(sctx context.Context, ctx *fasthttp.RequestCtx) (int64, error) {
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return 0, err
		}
		_, err = store.Advertiser(sctx, id)
		return id, err
	}, more: func(sctx context.Context, _ *fasthttp.RequestCtx, id int64, q reports.Query, rep *reports.Report) error {
		cs, err := reports.AllCampaigns(sctx, store, id)
		if err != nil || !slices.ContainsFunc(cs, func(c marquee.Campaign) bool { return c.Price != nil }) {
			return err
		}
		sp, err := rp.Spending(sctx, q, cs)
		rp.AddSpend(rep, sp.Advertisers[id])
		return err
	}}
}

// priceTop adds to a top list of campaigns or advertisers what their
// prices make of the range (docs/api.md).
func priceTop(sctx context.Context, store CampaignStore, rp *reports.Reporter, q reports.Query, rep *reports.Report) error {
	if q.Top == 0 || q.Entity != marquee.EntityCampaign && q.Entity != marquee.EntityAdvertiser {
		return nil
	}
	cs, err := reports.AllCampaigns(sctx, store, 0)
	if err != nil {
		return err
	}
	sp, err := rp.Spending(sctx, q, cs)
	if err != nil {
		return err
	}
	by := sp.Campaigns
	if q.Entity == marquee.EntityAdvertiser {
		by = sp.Advertisers
	}
	listed := map[int64]bool{}
	for i := range rep.Top {
		id, _ := strconv.ParseInt(rep.Top[i].ID, 10, 64)
		listed[id] = true
		if s, ok := by[id]; ok {
			rep.Top[i].Spend = &s
			rep.Currency = rp.Currency
		}
	}
	// What spent without an event in the range (a flat fee) follows the
	// ranked ones, as far as the limit goes, most spent first.
	var rest []int64
	for id, s := range by {
		if !listed[id] && s > 0 {
			rest = append(rest, id)
		}
	}
	slices.SortFunc(rest, func(a, b int64) int { return cmp.Or(cmp.Compare(by[b], by[a]), cmp.Compare(a, b)) })
	names := map[int64]string{}
	for _, c := range cs {
		names[c.ID] = c.Name
	}
	for _, id := range rest[:max(0, min(len(rest), q.Top-len(rep.Top)))] {
		s := by[id]
		p := reports.Part{ID: strconv.FormatInt(id, 10), Name: names[id], Spend: &s}
		if q.Entity == marquee.EntityAdvertiser {
			a, err := store.Advertiser(sctx, id)
			if err != nil {
				return err
			}
			p.Name = a.Name
		}
		rep.Top = append(rep.Top, p)
		rep.Currency = rp.Currency
	}
	return nil
}

func campaignStats(store CampaignStore, rp *reports.Reporter) statsOf {
	return statsOf{entity: marquee.EntityCampaign, id: func(sctx context.Context, ctx *fasthttp.RequestCtx) (int64, error) {
		id, err := campaignID(ctx)
		if err != nil {
			return 0, err
		}
		_, err = store.Campaign(sctx, id)
		return id, err
	}, more: func(sctx context.Context, _ *fasthttp.RequestCtx, id int64, q reports.Query, rep *reports.Report) error {
		c, err := store.Campaign(sctx, id)
		if err != nil {
			return err
		}
		rp.Price(rep, &c, q)
		rep.Goal, err = rp.Progress(sctx, &c, rp.Now())
		return err
	}}
}

func placementStats(store CampaignStore) statsOf {
	return statsOf{entity: marquee.EntityPlacement, id: func(sctx context.Context, ctx *fasthttp.RequestCtx) (int64, error) {
		seg := string(pathParam(ctx, 0))
		if marquee.CheckPlacementName(seg) != "" {
			return 0, marquee.NoPlacement(seg)
		}
		p, err := store.Placement(sctx, seg)
		return p.ID, err
	}}
}

// adStats finds the ad of GET /api/v1/ad/{id}/stats.
func adStats(store AdStore) statsOf {
	return statsOf{entity: marquee.EntityAd, id: func(sctx context.Context, ctx *fasthttp.RequestCtx) (int64, error) {
		id, err := adID(ctx)
		if err != nil {
			return 0, err
		}
		if _, err := store.Ad(sctx, id); err != nil {
			return 0, err
		}
		return id, nil
	}}
}

// linkStats finds the link of GET /api/v1/links/{code}/stats?domain=.
func linkStats(store LinkStore, domains *LinkDomains) statsOf {
	return statsOf{entity: marquee.EntityLink, id: func(sctx context.Context, ctx *fasthttp.RequestCtx) (int64, error) {
		key, err := domains.linkKey(ctx)
		if err != nil {
			return 0, err
		}
		l, err := store.LinkTarget(sctx, key)
		return l.ID, err
	}, more: func(sctx context.Context, ctx *fasthttp.RequestCtx, _ int64, q reports.Query, rep *reports.Report) error {
		if q.By != reportrow.DimDestination {
			return nil
		}
		key, err := domains.linkKey(ctx)
		if err != nil {
			return err
		}
		l, err := store.LinkTarget(sctx, key)
		for i, p := range rep.Breakdown {
			if d := p.Destination; d != nil && *d < len(l.Destinations) {
				rep.Breakdown[i].URL = l.Destinations[*d].URL
			}
		}
		return err
	}}
}

// handleStats serves GET /api/v1/ad/{id}/stats and GET
// /api/v1/links/{code}/stats: one ad's or link's report (docs/api.md).
func handleStats(of statsOf, rp *reports.Reporter) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		q, csv, err := parseReportQuery(ctx, rp, false)
		if err != nil {
			return err
		}
		if q.ID, err = of.id(sctx, ctx); err != nil {
			return err
		}
		q.Entity = of.entity
		return writeReport(sctx, ctx, rp, q, csv, of.more)
	}
}

// handleOverallStats serves GET /api/v1/stats: every ad's (or, with
// top=links, every link's; top=campaigns, advertisers or placements,
// every one's) totals and series, and the top ones.
func handleOverallStats(rp *reports.Reporter, store CampaignStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		q, csv, err := parseReportQuery(ctx, rp, true)
		if err != nil {
			return err
		}
		return writeReport(sctx, ctx, rp, q, csv, func(sctx context.Context, _ *fasthttp.RequestCtx, _ int64, q reports.Query, rep *reports.Report) error {
			return priceTop(sctx, store, rp, q, rep)
		})
	}
}

func writeReport(sctx context.Context, ctx *fasthttp.RequestCtx, rp *reports.Reporter, q reports.Query, csv bool,
	more func(context.Context, *fasthttp.RequestCtx, int64, reports.Query, *reports.Report) error) error {
	rep, err := rp.Report(sctx, q)
	if err != nil {
		return err
	}
	if more != nil {
		if err := more(sctx, ctx, q.ID, q, rep); err != nil {
			return err
		}
	}
	if len(boundsOf(ctx).Sites) > 0 {
		rep.ForPublisher()
	}
	if !csv {
		writeJSON(ctx, fasthttp.StatusOK, rep)
		return nil
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/csv; charset=utf-8")
	return rep.WriteCSV(ctx)
}

// parseReportQuery reads a report's parameters (docs/api.md) and whether
// it is asked for as CSV (format=csv, or an Accept naming text/csv);
// overall adds top, metric and limit.
func parseReportQuery(ctx *fasthttp.RequestCtx, rp *reports.Reporter, overall bool) (reports.Query, bool, error) {
	args := ctx.QueryArgs()
	p := marquee.Problems{}
	q := reports.Query{}
	q.From, q.To, q.Loc, q.Bots = reportWindow(args, rp, p)
	oneOf := func(k string, def string, allowed ...string) string { return oneOfParam(args, p, k, def, allowed...) }
	q.Granularity = oneOf("granularity", "", reports.Hour, reports.Day, reports.Month)
	if q.Granularity == "" {
		q.Granularity = reports.DefaultGranularity(q.From, q.To)
	}
	bys := append([]string{"country", "platform"}, reportrow.Dims...)
	for _, k := range rp.Keys.Load() {
		bys = append(bys, reportrow.KVDim+k)
	}
	q.By = oneOf("by", "", bys...)
	_, format := param(args, "format")
	csv := oneOf("format", "json", "json", "csv") == "csv" ||
		!format && bytes.Contains(ctx.Request.Header.Peek(fasthttp.HeaderAccept), []byte("text/csv"))
	if overall {
		q.Entity = marquee.EntityAd
		switch oneOf("top", "ads", "ads", "links", "tags", "campaigns", "advertisers", "placements") {
		case "links":
			q.Entity = marquee.EntityLink
		case "tags":
			q.Entity, q.TopTags = marquee.EntityLink, true
		case "campaigns":
			q.Entity = marquee.EntityCampaign
		case "advertisers":
			q.Entity = marquee.EntityAdvertiser
		case "placements":
			q.Entity = marquee.EntityPlacement
		}
		q.TopMetric = oneOf("metric", "impressions", "impressions", "clicks", "conversions", "views", "ctr")
		q.Top = 10
		intParam(args, "limit", 0, 1000, &q.Top, func(k, msg string) { p[k] = msg }) // 0: totals and series only
	}
	if len(p) == 0 {
		for k, v := range rp.Check(&q) {
			p[k] = v
		}
	}
	return q, csv, marquee.Invalid("invalid query", p)
}

// reportWindow reads a report's range and view (reports.ParamWindow).
func reportWindow(args *fasthttp.Args, rp *reports.Reporter, p marquee.Problems) (from, to time.Time, loc *time.Location, bots bool) {
	return reports.ParamWindow(args, rp, p)
}

// oneOfParam is k's value when it is one of allowed (reports.ParamOneOf).
func oneOfParam(args *fasthttp.Args, p marquee.Problems, k string, def string, allowed ...string) string {
	return reports.ParamOneOf(args, p, k, def, allowed...)
}
