package reports_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"marquee"
	"marquee/reportrow"
	"marquee/reports"
)

// requestRows is a Reader of request rows alone: what a report by privacy
// reads.
type requestRows struct {
	reports.Reader
	rows []reportrow.RequestRow
}

func (r requestRows) RequestSums(context.Context, reportrow.RequestQuery) ([]reportrow.RequestRow, error) {
	return r.rows, nil
}

// TestReportByPrivacy: a report by privacy and site has a row per signal
// that limited a site's slots — the signal's slots beside all the site's
// — a slot limited by two signals in both rows, and totals of every
// request with the limited ones by signal.
func TestReportByPrivacy(t *testing.T) {
	t.Parallel()
	hour := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Unix()
	row := func(placement int64, filled int64, limited map[string]int64) reportrow.RequestRow {
		r := reportrow.RequestRow{Hour: hour, Placement: placement}
		r.Outcomes[marquee.Filled] = filled
		for i, name := range reportrow.LimitedNames {
			r.Limited[i] = limited[name]
		}
		return r
	}
	rp := reports.NewReporter(requestRows{rows: []reportrow.RequestRow{
		row(1, 100, map[string]int64{"gpp": 30, "usnat": 30, "tcf": 5}),
		row(2, 50, map[string]int64{"gpp": 10}),
		row(3, 40, nil),
	}}, 24*time.Hour)
	cat := &reports.Catalog{Placements: map[int64]*marquee.Placement{
		1: {ID: 1, PlacementInput: marquee.PlacementInput{Name: "a", Site: "news"}},
		2: {ID: 2, PlacementInput: marquee.PlacementInput{Name: "b", Site: "news"}},
		3: {ID: 3, PlacementInput: marquee.PlacementInput{Name: "c", Site: "sport"}},
	}}
	q := reports.MultiQuery{By: []string{reports.DimPrivacy, reports.DimSite}, From: time.Unix(hour, 0).Add(-time.Hour),
		To: time.Unix(hour, 0).Add(time.Hour), Granularity: reports.Total}
	if p := rp.CheckMulti(&q); len(p) > 0 {
		t.Fatalf("CheckMulti(%v) = %v", q.By, p)
	}
	rep, err := rp.Multi(context.Background(), q, cat)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][3]float64{}
	for _, r := range rep.Rows {
		if r.Limited == nil || r.Requests == nil || r.LimitedRate == nil {
			t.Fatalf("row %v: want limited, requests and limitedRate", r.Dims)
		}
		got[r.Dims[reports.DimPrivacy].Value+"/"+r.Dims[reports.DimSite].Value] = [3]float64{float64(*r.Limited), float64(*r.Requests), *r.LimitedRate}
	}
	want := map[string][3]float64{"gpp/news": {40, 150, 40.0 / 150}, "usnat/news": {30, 150, 0.2}, "tcf/news": {5, 150, 5.0 / 150}}
	if len(got) != len(want) {
		t.Errorf("rows = %v; want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("row %s = %v; want %v", k, got[k], w)
		}
	}
	totals, _ := json.Marshal(rep.Totals.Metrics.LimitedRequests)
	if *rep.Totals.Requests != 190 || string(totals) != `{"gpp":40,"tcf":5,"usnat":30}` {
		t.Errorf("totals: requests %d, limitedRequests %s; want 190, {gpp:40 tcf:5 usnat:30}", *rep.Totals.Requests, totals)
	}
	for _, by := range [][]string{{reports.DimPrivacy, reports.DimCampaign}, {reports.DimPrivacy, reports.DimBidder}} {
		q := reports.MultiQuery{By: by, From: q.From, To: q.To, Granularity: reports.Total}
		if p := rp.CheckMulti(&q); p["by"] == "" {
			t.Errorf("CheckMulti(by %v) = %v; want a problem with by", by, p)
		}
	}
}
