package web

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"marquee/reports"
)

// Names names the rows of reports: the titles of ads, the codes of links,
// the names of campaigns, advertisers and placements, by id.
type Names interface {
	EntityNames(ctx context.Context, entity string, ids []int64) (map[int64]string, error)
}

// handleMultiReport serves GET /api/v1/reports?by=campaign,placement: a
// report by up to three dimensions, as JSON, CSV or XLSX
// (docs/api.md#reports-by-several-dimensions).
func handleMultiReport(m *reports.Multis) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		rep, format, err := m.Run(sctx, ctx.QueryArgs(), ctx.Request.Header.Peek(fasthttp.HeaderAccept), boundsOf(ctx), time.Time{}, time.Time{})
		if err != nil {
			return err
		}
		return writeMulti(ctx, rep, format)
	}
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
