//go:build !noconsole

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"marquee/reportrow"
	"marquee/reports"
	"marquee/store/sqlite"
	"marquee/targeting"
)

// TestForecastInBrowser: with a week of requests recorded (counted and
// sampled, half from iOS) and a sponsorship campaign booked on iOS, the
// campaign editor's "check availability" panel shows, for a draft, the
// requests its flight matches, what is available to it, and the
// sponsorship campaign contending for them; the delivery-risk page and
// the campaign's own page flag the booked campaign whose goal the
// requests cannot meet.
func TestForecastInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"home"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	sponsor := in.campaign(`{"advertiserId":"1","name":"Sponsor","priority":"sponsorship","conditions":[{"platform":["ios"]}],` +
		`"goal":{"metric":"impressions","total":1000000},` + flightJSON(-time.Hour, 30*24*time.Hour) + `}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"sponsor ad",`+flightJSON(-time.Hour, 30*24*time.Hour)+`,"campaignId":"`+sponsor+
		`","placements":["home"],"creative":{"type":"native","title":"t"}}`), 201, "")

	// A week of the placement's requests as the server's tally would have
	// flushed them: 100 an hour, a sample of 20, half of them from iOS.
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "marquee.db"))
	if err != nil {
		t.Fatal(err)
	}
	b := &reportrow.Batch{Slot: "earlier"}
	now := time.Now().UTC().Truncate(time.Hour)
	for h := 7 * 24; h > 0; h-- {
		at := now.Add(-time.Duration(h) * time.Hour)
		b.Requests = append(b.Requests, reportrow.RequestRow{Hour: at.Unix(), Placement: 1, Country: "TW", Outcomes: [reportrow.NumOutcomes]int64{100}})
		var kept []reports.Sample
		for i := range 20 {
			kept = append(kept, reports.Sample{At: at.Add(time.Duration(i) * time.Minute), Viewer: targeting.ViewerOf(30, "", "TW", []string{"ios", "web"}[i%2])})
		}
		b.Samples = append(b.Samples, reportrow.RequestSample{Hour: at.Unix(), Placement: 1, Offered: 100, Doc: reports.EncodeSamples(kept)})
	}
	if err := st.AddReports(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	st.Close()

	tab := newTab(t, in.url, 1280, 900)
	tab.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	tab.signIn("owner@example.com", "owner-password-1")
	tab.open("#/campaigns/new", "#check-availability")
	tab.labelled("campaign editor")
	tab.do("check availability", chromedp.SendKeys(chromedp.CSS("#forecast-placements"), "home"), click("#check-availability"),
		chromedp.WaitVisible(chromedp.CSS("#forecast")))
	facts := tab.text("#forecast dl.facts")
	for _, want := range []string{"Matching requests", "Available to it", "Taken by sponsorship", "Fits"} {
		if !strings.Contains(facts, want) {
			t.Errorf("the forecast says %q; want %q", facts, want)
		}
	}
	if contending := tab.text("#contending"); !strings.Contains(contending, "Sponsor") || !strings.Contains(contending, "sponsorship") {
		t.Errorf("the contending campaigns are %q; want Sponsor (sponsorship)", contending)
	}
	tab.screenshot("forecast")
	tab.open("#/risk", "#risk table")
	if risk := tab.text("#risk"); !strings.Contains(risk, "Sponsor") || !strings.Contains(risk, "At risk") {
		t.Errorf("the delivery risk page says %q; want Sponsor at risk (a goal of 1,000,000 on 100 requests an hour)", risk)
	}
	tab.screenshot("risk")
	tab.open("#/campaigns/"+sponsor, "#campaign-risk")
	if risk := tab.text("#campaign-risk"); !strings.Contains(risk, "At risk") {
		t.Errorf("the campaign's page says %q; want its delivery at risk", risk)
	}
}
