package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/clickhouse/clickhousetest"
)

// TestReportsFromClickHouseMatch runs the report suite against both
// stores on the same events: an instance with -analytics answers every
// report route from ClickHouse; the same data directory served without it
// answers from the embedded store. Every answer (JSON and CSV) is the
// same, byte for byte. The events are a mix that exercises every rule the
// two share: verified impressions, views and clicks of decisions under
// five price models, post-click conversions with value, unverified
// beacons, a bot's events, an unknown ad's, uids for reach, referrers,
// countries, a report key's values, and a link with tags and A/B
// destinations.
func TestReportsFromClickHouseMatch(t *testing.T) {
	t.Parallel()
	dsn := clickhousetest.DSN(t)
	w := newMoneyWorld(t, "-analytics", dsn, "-report-keys", "section")
	in := w.instance
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.test/","code":"spring","tags":["promo","news"],`+
		`"destinations":[{"url":"https://a.test/","weight":1},{"url":"https://b.test/","weight":1}]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://y.test/","code":"autumn","tags":["promo"]}`), 201, "")
	for i := range 6 {
		d := w.decide(t, w.placements[i%5], fmt.Sprintf("user-%d", i%3))
		fire(t, d.ImpressionURL+"?m=1")
		if i%2 == 0 {
			fire(t, d.ViewURL)
		}
		if i%3 == 0 {
			fire(t, d.ClickURL)
		}
	}
	ids := []string{clickID(t, w.decide(t, "p4", "")), clickID(t, w.decide(t, "p4", ""))}
	fire(t, w.url+"/conversion?clickId="+ids[0]+"&orderId=o-1&value=12.5")
	fire(t, w.url+"/conversion?clickId="+ids[1]+"&orderId=o-2")
	beacons := []string{
		"type=impression&ad=1&campaign=1&placement=p1&country=de&uid=u1&kv=section%3Dsports&referrer=https%3A%2F%2Fwww.news.test%2Fa",
		"type=impression&ad=1&campaign=1&placement=p1&country=fr&uid=u2&kv=section%3Dnews%26other%3Dx",
		"type=click&ad=1&campaign=1&placement=p1&country=fr&uid=u2&referrer=https%3A%2F%2Fblog.test%2F",
		"type=impression&ad=2&country=us&uid=u1&platform=ios",
		"type=impression&ad=3&campaign=3&placement=p3&kv=section%3Dsports",
		"type=impression&ad=999&campaign=999&placement=nowhere", // names nothing that exists
		"type=start&ad=2&campaign=2", "type=complete&ad=2&campaign=2",
		"type=error&ad=2&campaign=2&errorCode=405", "type=error&ad=2&campaign=2&errorCode=405", "type=error&ad=2&campaign=2&errorCode=9999", "type=error&ad=2&campaign=2",
		"type=impression&link=spring&uid=u3", "type=impression&link=autumn",
	}
	for _, b := range beacons {
		if r := in.doHeaders("GET", "/e?"+b, "", "", "User-Agent", iphoneUA); r.status != 204 && r.status != 200 {
			t.Fatalf("beacon %s = %d %s", b, r.status, r.body)
		}
	}
	for _, b := range beacons[:3] { // a crawler's
		in.doHeaders("GET", "/e?"+b, "", "", "User-Agent", "Googlebot/2.1 (+http://www.google.com/bot.html)")
	}
	click := func(code, referrer string) {
		req, _ := http.NewRequest("GET", in.url+"/r/"+code, nil)
		req.Header.Set("User-Agent", iphoneUA)
		req.Header.Set("Referer", referrer)
		if resp, err := noRedirects.Do(req); err != nil || resp.StatusCode/100 != 3 {
			t.Fatalf("GET /r/%s = %v, %v; want a redirect", code, resp, err)
		} else {
			resp.Body.Close()
		}
	}
	for i := range 4 { // the link's clicks go to its A/B destinations
		click("spring", fmt.Sprintf("https://www.social%d.test/p", i%2))
	}
	click("autumn", "")

	from := w.from.Add(-2 * time.Hour).Truncate(time.Hour)
	to := w.to.Add(2 * time.Hour).Truncate(time.Hour)
	window := "from=" + url.QueryEscape(from.Format(time.RFC3339)) + "&to=" + url.QueryEscape(to.Format(time.RFC3339))
	var suite []string
	for _, g := range []string{"hour", "day"} {
		for _, top := range []string{"ads", "links", "tags", "campaigns", "advertisers", "placements"} {
			for _, metric := range []string{"impressions", "clicks", "ctr"} {
				suite = append(suite, "/api/v1/stats?top="+top+"&metric="+metric+"&granularity="+g+"&"+window)
			}
		}
	}
	for _, by := range []string{"", "country", "platform", "referrer", "browser", "os", "kv.section", "errorCode"} {
		for _, bots := range []string{"exclude", "include"} {
			q := "?by=" + by + "&bots=" + bots + "&" + window
			suite = append(suite, "/api/v1/stats"+q, "/api/v1/ad/1/stats"+q, "/api/v1/ad/2/stats"+q, "/api/v1/campaigns/1/stats"+q,
				"/api/v1/campaigns/4/stats"+q, "/api/v1/advertisers/1/stats"+q, "/api/v1/placements/p1/stats"+q, "/api/v1/placements/p4/stats"+q,
				"/api/v1/links/spring/stats"+q, "/api/v1/links/autumn/stats"+q)
		}
	}
	suite = append(suite, "/api/v1/links/spring/stats?by=destination&"+window, "/api/v1/ad/1/stats?granularity=day&tz=America/New_York&"+window)
	for _, by := range []string{"campaign", "advertiser,campaign", "placement,country", "ad,device", "site", "campaign,kv.section", "placement,kv.section"} {
		for _, g := range []string{"total", "day"} {
			suite = append(suite, "/api/v1/reports?by="+by+"&granularity="+g+"&"+window, "/api/v1/reports?by="+by+"&bots=include&granularity="+g+"&"+window)
		}
	}
	suite = append(suite, "/api/v1/reports?by=campaign,country&countries=DE,FR&granularity=total&"+window,
		"/api/v1/reports?by=ad&campaigns=1,4&granularity=total&"+window)
	var withCSV []string
	for _, path := range suite {
		withCSV = append(withCSV, path)
		withCSV = append(withCSV, path+"&format=csv")
	}

	answers := func(in *instance) map[string]string {
		out := map[string]string{}
		for _, path := range withCSV {
			r := in.admin("GET", path, "")
			if r.status != 200 {
				t.Fatalf("GET %s = %d %s", path, r.status, r.body)
			}
			out[path] = r.body
		}
		return out
	}
	// Everything is counted by both: ClickHouse's rows (the stream lingers
	// up to a second) and the embedded reports' flush.
	const everything = "/api/v1/stats?top=ads&bots=include&granularity=day&"
	var fromClickHouse map[string]string
	eventually(t, 15*time.Second, func() string {
		before := in.admin("GET", everything+window, "").body
		time.Sleep(1500 * time.Millisecond)
		if after := in.admin("GET", everything+window, "").body; after != before || !strings.Contains(after, `"impressions":`) {
			return "ClickHouse's reports still change: " + after
		}
		fromClickHouse = answers(in)
		return ""
	})
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	embedded := start(t, in.data, nil, "-reports-flush", "100ms", "-currency", "eur", "-report-keys", "section")
	fromStore := answers(embedded)
	differ := 0
	for _, path := range withCSV {
		if a, b := fromClickHouse[path], fromStore[path]; a != b {
			if differ++; differ <= 5 {
				t.Errorf("GET %s:\nfrom ClickHouse %s\nembedded        %s", path, a, b)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d answers differ", differ, len(withCSV))
	}
	// A player's errors by code: 405 twice (two beacons: not a decision's,
	// so not deduplicated), a number outside VAST's codes, none.
	var byCode struct {
		Totals    struct{ Errors int }
		Breakdown []struct {
			ErrorCode string
			Errors    int
		}
	}
	if err := json.Unmarshal([]byte(fromStore["/api/v1/ad/2/stats?by=errorCode&bots=exclude&"+window]), &byCode); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(byCode.Totals.Errors, byCode.Breakdown); got != "4 [{405 2} {none 1} {other 1}]" {
		t.Errorf("ad 2's errors by code = %s; want 4 [{405 2} {none 1} {other 1}]", got)
	}
	for path, want := range map[string]string{
		"/api/v1/stats?top=tags&metric=impressions&granularity=hour&" + window: `"tag":"promo"`,
		"/api/v1/links/spring/stats?by=destination&" + window:                  `"destination":0`,
		"/api/v1/ad/1/stats?by=kv.section&bots=exclude&" + window:              `"value":"sports"`,
		"/api/v1/ad/2/stats?by=errorCode&bots=exclude&" + window:               `"errorCode":"405"`,
		"/api/v1/ad/1/stats?by=&bots=include&" + window:                        `"uniques":4`,
		"/api/v1/placements/p4/stats?by=&bots=exclude&" + window:               `"requests":`,
	} {
		if !strings.Contains(fromStore[path], want) {
			b := fromStore[path]
			if i := strings.Index(b, `"breakdown"`); i > 0 {
				b = b[i:]
			}
			t.Errorf("GET %s = …%s; want %s in it (the suite's events reach what it compares)", path, b, want)
		}
	}
}
