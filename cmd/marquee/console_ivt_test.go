//go:build !noconsole

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleShowsInvalidTraffic: the console shows the split — a
// campaign's report lists the invalid traffic it left out, by reason (a
// crawler's impression, a click 50 ms after its impression), and the
// reports by several dimensions cut by traffic, people's beside each
// reason.
func TestConsoleShowsInvalidTraffic(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-reports-flush", "100ms", "-ivt-min-click-delay", ivtDelay)
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"cpc",` + flight + `,"price":{"model":"cpc","amount":1}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	urls := func(header ...string) (imp, click string) {
		r := in.doHeaders("POST", "/api/v1/decisions", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`, header...)
		var got struct{ Decisions map[string][]decision }
		if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		return got.Decisions["d"][0].ImpressionURL, got.Decisions["d"][0].ClickURL
	}
	imp, _ := urls("User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	fire(t, imp)
	imp, click := urls()
	fire(t, imp)
	time.Sleep(50 * time.Millisecond)
	fire(t, click)
	imp, click = urls()
	fire(t, imp)
	time.Sleep(ivtPause)
	fire(t, click)
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/reports?by=traffic&granularity=total", ""); !strings.Contains(r.body, `"fastClick"`) || !strings.Contains(r.body, `"crawler"`) {
			return "the report by traffic: " + r.body
		}
		return ""
	})

	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")
	b.open("#/campaigns/1", "#invalid-traffic")
	got := b.text("#invalid-traffic table")
	for _, want := range []string{"Declared crawlers and bots", "Clicks too soon after the impression"} {
		if !strings.Contains(got, want) {
			t.Errorf("the campaign's invalid traffic = %q; lacks %q", got, want)
		}
	}
	b.open("#/reports?by=traffic&granularity=total", "#report-table table")
	got = b.text("#report-table table")
	for _, want := range []string{"human", "crawler", "fastClick"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report by traffic = %q; lacks %q", got, want)
		}
	}
}
