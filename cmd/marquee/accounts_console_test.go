//go:build !noconsole

package main

import (
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestAccountsInBrowser: in Chromium, an advertiser user signs in and
// sees only its campaigns (its home, its campaign list, its nav), and a
// publisher user sees fill rate and revenue by placement, of its sites
// only; the reports page's CSV holds the table's cells.
func TestAccountsInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	in := isolationWorld(t)
	for i := range 12 { // traffic on both sites, each impression fired
		pl := []string{"side", "zzt-top"}[i%2]
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"`+pl+`"}]}`)
		var got struct {
			Decisions map[string][]struct{ ImpressionURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision: %d %s", r.status, r.body)
		}
		fire(t, got.Decisions["d"][0].ImpressionURL)
	}
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"adv@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"pub@mysite.test","role":"publisher","sites":["mysite"],"password":"publisher password"}`), 201, "")
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/stats"); s.Totals.Impressions != 12 {
			return "impressions not counted yet"
		}
		return ""
	})

	// B's and T's names are marked zzb and zzt (isolationWorld).
	leaks := func(s string) bool {
		s = strings.ToLower(s)
		return strings.Contains(s, "zzb") || strings.Contains(s, "zzt")
	}
	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.waitHash(`^#/signin$`)
	b.signIn("adv@acme.test", "advertiser password")
	b.do("the advertiser's home", chromedp.WaitVisible(chromedp.CSS(`#campaigns-results`)))
	if h1 := b.text("h1"); h1 != "Your campaigns" {
		t.Errorf("advertiser's home: h1 %q; want Your campaigns", h1)
	}
	home := b.text("main")
	if !strings.Contains(home, "Acme spring") || leaks(home) {
		t.Errorf("advertiser's home shows %q; want Acme spring only", home)
	}
	if nav := b.text("#nav"); strings.Contains(nav, "Placements") || strings.Contains(nav, "Preview") || !strings.Contains(nav, "Campaigns") {
		t.Errorf("advertiser's nav = %q; want its world (no placements, no preview)", nav)
	}
	b.open("#/campaigns", "main table")
	if list := b.text("main"); !strings.Contains(list, "Acme spring") || leaks(list) {
		t.Errorf("advertiser's campaigns = %q; want its own only", list)
	}
	// Its reports page: the table, and the CSV of the same cells.
	b.open("#/reports?by=campaign,country", "#report-table table")
	cells := eval[[][]string](b, `[...document.querySelectorAll('#report-table tbody tr')].map(tr => [...tr.children].map(td => td.textContent))`)
	_, body := b.fetch(eval[string](b, `document.querySelector('#report-csv').getAttribute('href')`), `{}`)
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(records) != len(cells)+2 {
		t.Fatalf("CSV %q (%v); want a heading, the table's %d rows and totals", body, err, len(cells))
	}
	for i, row := range cells { // the same dimensions' cells, and the same impressions (the console formats numbers)
		if !slices.Equal(row[:3], records[i+1][:3]) || strings.ReplaceAll(row[3], ",", "") != records[i+1][3] {
			t.Errorf("table row %q; CSV row %q: want the same campaign, country and impressions", row, records[i+1])
		}
	}
	if leaks(body) {
		t.Errorf("the advertiser's CSV holds the others': %s", body)
	}
	b.do("sign out", click("#signout"))
	b.waitHash(`^#/signin$`)

	b.signIn("pub@mysite.test", "publisher password")
	b.do("the publisher's home", chromedp.WaitVisible(chromedp.CSS(`#fill-by-placement table`)))
	rows := eval[[][]string](b, `[...document.querySelectorAll('#fill-by-placement tbody tr')].map(tr => [...tr.children].map(td => td.textContent))`)
	if len(rows) != 1 || rows[0][0] != "side" || rows[0][1] != "6" || rows[0][2] != "6" || rows[0][3] != "100.00%" {
		t.Errorf("publisher's fill by placement = %q; want side alone: 6 requests, 6 filled, 100.00%%", rows)
	}
	if fill := b.text(`[data-kpi=fill-rate] .v`); fill != "100.00%" {
		t.Errorf("publisher's fill rate tile = %q", fill)
	}
	if main := strings.ToLower(b.text("main")); leaks(main) || strings.Contains(main, "acme") {
		t.Errorf("publisher's home shows %q; want its placements, not whose ads", main)
	}
	if nav := b.text("#nav"); strings.Contains(nav, "Campaigns") || !strings.Contains(nav, "Placements") {
		t.Errorf("publisher's nav = %q; want its world", nav)
	}
	b.screenshot("publisher-home.png")
}
