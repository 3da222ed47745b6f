package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// TestRequestsAndFill: a known mix of filled and unfilled slots — one of
// each reason a server can show — gives exactly those requests, fills
// and reasons in the placements' reports and in the report by
// placement; revenue comes from the campaign's price; the report by
// campaign and placement is the same in JSON, CSV and XLSX.
func TestRequestsAndFill(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-currency", "eur")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Per mille",` + flight + `,"price":{"model":"cpm","amount":2000}}`)
	in.campaign(`{"advertiserId":"1","name":"Capped",` + flight + `,"frequencyCap":{"count":1,"window":"24h"}}`)
	in.campaign(`{"advertiserId":"1","name":"Sport",` + flight + `,"targeting":{"key":"section","in":["sport"]}}`)
	ad := func(title, campaign, placement string) {
		in.expect(in.admin("POST", "/api/v1/ad", `{"title":"`+title+`",`+flight+`,"campaignId":"`+campaign+`","placements":["`+placement+`"],"creative":{"type":"native","title":"t"}}`), 201, "")
	}
	for _, pl := range []string{`{"name":"side","site":"news"}`, `{"name":"capped","site":"news"}`, `{"name":"sport","site":"sports"}`,
		`{"name":"banner","site":"news"}`} {
		in.expect(in.admin("POST", "/api/v1/placements", pl), 201, "")
	}
	ad("per mille", "1", "side")
	ad("capped", "2", "capped")
	ad("sport", "3", "sport")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"house",`+flight+`,"creative":{"type":"native","title":"house"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"house","site":"news","defaultAdId":"4"}`), 201, "")
	decide := func(body string, header ...string) []string {
		t.Helper()
		r := in.doHeaders("POST", "/api/v1/decisions", "application/json", body, header...)
		var got struct {
			Decisions map[string][]struct{ ImpressionURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 {
			t.Fatalf("decision %s = %d %s", body, r.status, r.body)
		}
		var imps []string
		for _, d := range got.Decisions {
			for _, c := range d {
				imps = append(imps, c.ImpressionURL)
			}
		}
		return imps
	}
	var fired int
	for range 3 { // side: filled three times, each impression fired
		for _, u := range decide(`{"placements":[{"placement":"side"}]}`) {
			fire(t, u)
			fired++
		}
	}
	if fired != 3 {
		t.Fatalf("side filled %d of 3", fired)
	}
	decide(`{"placements":[{"placement":"capped"}],"user":{"key":"u1"}}`)      // filled
	decide(`{"placements":[{"placement":"capped"}],"user":{"key":"u1"}}`)      // capped
	decide(`{"placements":[{"placement":"sport"}]}`)                           // untargeted
	decide(`{"placements":[{"placement":"sport"}],"consent":{"given":false}}`) // untargeted, without consent
	decide(`{"placements":[{"placement":"sport"}],"kv":{"section":"sport"}}`)
	decide(`{"placements":[{"placement":"banner"}]}`) // its ads are all limited to other placements
	decide(`{"placements":[{"placement":"house"}]}`)  // the house ad
	// A preview counts nothing.
	if r := in.admin("POST", "/api/v1/decisions", `{"placements":[{"placement":"side"}],"preview":true}`); r.status != 200 {
		t.Fatalf("preview = %d %s", r.status, r.body)
	}

	type totals struct {
		Impressions int64
		Requests    *int64
		Filled      *int64
		FillRate    *float64
		Unfilled    map[string]int64
	}
	want := map[string]struct {
		requests, filled int64
		unfilled         map[string]int64
	}{
		"side":   {3, 3, nil},
		"capped": {2, 1, map[string]int64{"capped": 1}},
		"sport":  {3, 1, map[string]int64{"untargeted": 1, "consent": 1}},
		"banner": {1, 0, map[string]int64{"wrongSize": 1}},
		"house":  {1, 1, nil},
	}
	eventually(t, 5*time.Second, func() string {
		for name, w := range want {
			var rep struct{ Totals totals }
			r := in.admin("GET", "/api/v1/placements/"+name+"/stats", "")
			if err := json.Unmarshal([]byte(r.body), &rep); err != nil || r.status != 200 {
				return fmt.Sprintf("%s: %d %s", name, r.status, r.body)
			}
			tt := rep.Totals
			if tt.Requests == nil || *tt.Requests != w.requests || *tt.Filled != w.filled || *tt.FillRate != float64(w.filled)/float64(w.requests) ||
				!reflect.DeepEqual(tt.Unfilled, w.unfilled) || name == "side" && tt.Impressions != 3 {
				return fmt.Sprintf("%s's totals: %s; want %d requests, %d filled, unfilled %v", name, r.body, w.requests, w.filled, w.unfilled)
			}
		}
		return ""
	})

	type row struct {
		Dims        map[string]struct{ ID, Name, Value string }
		Impressions int64
		Requests    *int64
		Filled      *int64
		FillRate    *float64
		Revenue     *float64
		ECPM        *float64
	}
	type multi struct {
		Currency string
		Totals   row
		Rows     []row
	}
	read := func(query string) multi {
		t.Helper()
		r := in.admin("GET", "/api/v1/reports?"+query, "")
		var m multi
		if err := json.Unmarshal([]byte(r.body), &m); err != nil || r.status != 200 {
			t.Fatalf("GET /api/v1/reports?%s = %d %s", query, r.status, r.body)
		}
		return m
	}
	bySite := read("by=site")
	if len(bySite.Rows) != 2 || *bySite.Totals.Requests != 10 || *bySite.Totals.Filled != 6 {
		t.Errorf("by site: %+v; want news and sports, 10 requests, 6 filled", bySite)
	}
	for _, r := range bySite.Rows {
		if site := r.Dims["site"].Value; site == "news" && (*r.Requests != 7 || *r.Filled != 5) || site == "sports" && (*r.Requests != 3 || *r.Filled != 1) {
			t.Errorf("by site, %s: %d requests, %d filled; want news 7/5, sports 3/1", site, *r.Requests, *r.Filled)
		}
	}
	cp := read("by=campaign,placement&granularity=day")
	var side *row
	for i, r := range cp.Rows {
		if r.Dims["campaign"].Name == "Per mille" && r.Dims["placement"].Name == "side" {
			side = &cp.Rows[i]
		}
		if r.Requests != nil {
			t.Errorf("by campaign has requests %d: a request is not a campaign's", *r.Requests)
		}
	}
	if side == nil || side.Impressions != 3 || side.Revenue == nil || *side.Revenue != 6 || *side.ECPM != 2000 || cp.Currency != "EUR" {
		t.Fatalf("by campaign and placement: %+v; want Per mille × side: 3 impressions, 6 EUR, eCPM 2000", cp)
	}
	if filtered := read("by=campaign&campaign=1"); len(filtered.Rows) != 1 || filtered.Rows[0].Dims["campaign"].ID != "1" || filtered.Rows[0].Impressions != 3 {
		t.Errorf("by campaign, campaign=1: %+v; want campaign 1 alone, its 3 impressions", filtered.Rows)
	}
	if none := read("by=campaign&campaign=2"); len(none.Rows) != 0 {
		t.Errorf("by campaign, campaign=2: %+v; want no row (its ad was chosen, never rendered)", none.Rows)
	}
	for _, bad := range []string{"by=campaign,placement,site,country", "by=planet", "by=campaign&granularity=hour", "by=campaign&country=XX", "by=ad&placement=nowhere"} {
		if r := in.admin("GET", "/api/v1/reports?"+bad, ""); r.status != 400 {
			t.Errorf("GET /api/v1/reports?%s = %d %s; want 400", bad, r.status, r.body)
		}
	}

	// CSV and XLSX hold exactly the table: the same cells.
	q := "by=campaign,placement&granularity=day"
	rc := in.admin("GET", "/api/v1/reports?"+q+"&format=csv", "")
	records, err := csv.NewReader(strings.NewReader(rc.body)).ReadAll()
	if err != nil || rc.status != 200 || len(records) != len(cp.Rows)+2 {
		t.Fatalf("CSV = %d %s (%v); want a heading, %d rows and the totals", rc.status, rc.body, err, len(cp.Rows))
	}
	wantHead := []string{"t", "campaign id", "campaign", "placement id", "placement", "impressions", "clicks", "ctr", "conversions",
		"post-click conversions", "post-view conversions", "views", "viewability", "requests", "filled", "fill rate", "spend (EUR)", "ecpm (EUR)", "ecpc (EUR)", "ecpa (EUR)", "conversion value (EUR)", "roas"}
	if !reflect.DeepEqual(records[0], wantHead) {
		t.Errorf("CSV heading = %q; want %q", records[0], wantHead)
	}
	rx := in.admin("GET", "/api/v1/reports?"+q+"&format=xlsx", "")
	f, err := excelize.OpenReader(bytes.NewReader([]byte(rx.body)))
	if err != nil {
		t.Fatalf("XLSX: %v (%d, %q)", err, rx.status, rx.header.Get("Content-Type"))
	}
	sheet, err := f.GetRows("Report")
	if err != nil {
		t.Fatal(err)
	}
	for i := range records {
		got := append([]string{}, sheet[i]...)
		for len(got) < len(records[i]) {
			got = append(got, "") // excelize leaves a row's trailing empty cells out
		}
		if !reflect.DeepEqual(got, records[i]) {
			t.Errorf("XLSX row %d = %q; CSV's = %q", i, got, records[i])
		}
	}
}
