package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSiteDomainsBind: a site with domains binds its placements. A
// decision whose page (its Origin, else its Referer, else the body's url)
// is on another domain is answered, and counted as invalid traffic of
// reason domainMismatch: its impression bills nothing; one from a
// subdomain of the site's domain, or from a server that sends the page's
// url, bills. A placement of a site without domains binds nothing.
func TestSiteDomainsBind(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-currency", "EUR")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"news","domains":["news.example"],"revenueShare":0.7}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"open","revenueShare":0.7}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","site":"news"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"free","site":"open"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"cpm",` + flight + `,"price":{"model":"cpm","amount":10}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t"}}`), 201, "")
	decide := func(placement, body string, header ...string) {
		t.Helper()
		r := in.doHeaders("POST", "/api/v1/decisions", "application/json", `{"placements":[{"div":"d","placement":"`+placement+`"}]`+body+`}`, header...)
		var got struct {
			Decisions map[string][]struct{ ImpressionURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision %s %v = %d %s; want an ad (invalid traffic is answered)", body, header, r.status, r.body)
		}
		fire(t, got.Decisions["d"][0].ImpressionURL)
	}
	decide("side", "", "Origin", "https://evil.example")                                // another site's page
	decide("side", "", "Referer", "https://news.example.evil.example/a")                // a look-alike
	decide("side", "")                                                                  // no page at all
	decide("side", "", "Origin", "https://M.News.Example:8443")                         // a subdomain
	decide("side", "", "Referer", "https://news.example/story")                         // the site itself
	decide("side", `,"url":"https://www.news.example/a"`)                               // a server, for its page
	decide("side", `,"url":"https://news.example/a"`, "Origin", "https://evil.example") // the browser's Origin wins
	decide("free", "", "Origin", "https://anywhere.example")                            // no domains: unbound
	eventually(t, 5*time.Second, func() string {
		r := in.admin("GET", "/api/v1/reports?by=placement&granularity=total", "")
		var rep struct {
			Totals struct {
				Impressions     int64
				InvalidRequests map[string]int64
			}
			Rows []struct {
				Placement   string
				Impressions int64
				Spend       float64
			}
		}
		json.Unmarshal([]byte(r.body), &rep)
		if rep.Totals.InvalidRequests["domainMismatch"] != 4 || rep.Totals.Impressions != 4 {
			return "want 4 impressions billed and 4 requests of domainMismatch left out: " + r.body
		}
		for _, row := range rep.Rows {
			if (row.Placement == "side" && (row.Impressions != 3 || row.Spend != 0.03)) || (row.Placement == "free" && row.Impressions != 1) {
				return "want side's 3 impressions billed (0.03), free's 1: " + r.body
			}
		}
		return ""
	})
	// The site's quality: its people's requests, its invalid ones by
	// reason, the invalid rate — for the team and its publisher, not for
	// another site's.
	pub, _ := in.keyFrom(`{"name":"news","scopes":["reports:read"],"sites":["news"]}`)
	r := in.do("GET", "/api/v1/sites/news/quality", pub, "", "")
	var q struct {
		Requests, InvalidRequests int64
		Invalid                   map[string]int64
		InvalidRate               float64
	}
	if json.Unmarshal([]byte(r.body), &q); r.status != 200 || q.Requests != 3 || q.InvalidRequests != 4 || q.Invalid["domainMismatch"] != 4 || q.InvalidRate != 4.0/7 {
		t.Errorf("the site's quality = %d %s; want 3 requests, 4 invalid (domainMismatch), a rate of 4/7", r.status, r.body)
	}
	in.expect(in.do("GET", "/api/v1/sites/open/quality", pub, "", ""), 404, "")
	if r := in.admin("GET", "/api/v1/sites/open/quality?from=2020-01-01T00:00:00Z", ""); !strings.Contains(r.body, `"requests":1,"invalidRequests":0,"invalid":{},"invalidRate":0`) {
		t.Errorf("the unbound site's quality = %d %s; want its one request", r.status, r.body)
	}
	in.expect(in.admin("GET", "/api/v1/sites/news/quality?from=yesterday", ""), 400, `{"error":"invalid quality request","problems":{"from":"must be an RFC 3339 timestamp, got \"yesterday\""}}`)
}

// TestAdsTxtEnforced: with -ads-txt-enforce, a site whose ads.txt does
// not list the network — or that was never checked — serves and bills
// nothing (reason unauthorized); once a check finds it listed, it bills.
func TestAdsTxtEnforced(t *testing.T) {
	t.Parallel()
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "google.com, pub-1, DIRECT\nads.example.net, 2, DIRECT # shop, not news\n")
	}))
	defer files.Close()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-currency", "EUR", "-seller-domain", "ads.example.net",
		"-ads-txt-url", files.URL+"/{domain}/ads.txt", "-ads-txt-allow-private", "-ads-txt-enforce")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	for _, s := range []string{"news", "shop"} {
		in.expect(in.admin("POST", "/api/v1/sites", `{"name":"`+s+`","domains":["`+s+`.example"],"revenueShare":0.7}`), 201, "")
		in.expect(in.admin("POST", "/api/v1/placements", `{"name":"`+s+`-side","site":"`+s+`"}`), 201, "")
	}
	in.campaign(`{"advertiserId":"1","name":"cpm",` + flight + `,"price":{"model":"cpm","amount":10}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t"}}`), 201, "")
	impression := func(site string) {
		t.Helper()
		r := in.doHeaders("POST", "/api/v1/decisions", "application/json", `{"placements":[{"div":"d","placement":"`+site+`-side"}]}`, "Origin", "https://"+site+".example")
		fire(t, strings.Split(strings.Split(r.body, `"impressionUrl":"`)[1], `"`)[0])
	}
	report := func(want string) {
		t.Helper()
		eventually(t, 5*time.Second, func() string {
			if r := in.admin("GET", "/api/v1/reports?by=placement&granularity=total", ""); !strings.Contains(r.body, want) {
				return "want " + want + ": " + r.body
			}
			return ""
		})
	}
	in.expect(in.admin("POST", "/api/v1/sites/news/ads-txt/check", ""), 200, "")
	impression("news") // checked: not listed
	impression("shop") // never checked
	report(`"invalidRequests":{"unauthorized":2}`)
	if r := in.admin("POST", "/api/v1/sites/shop/ads-txt/check", ""); !strings.Contains(r.body, `"adsTxt":{"status":"authorized"`) {
		t.Fatalf("shop's check = %d %s; want authorized", r.status, r.body)
	}
	impression("shop")
	report(`"impressions":1,`)
	report(`"spend":0.01,`)
}

// TestQuarantineEndToEnd: a site the team quarantines (audited) serves,
// its decisions and their impressions count as invalid traffic of reason
// quarantined and bill nothing, and its statement owes only what was
// earned before, showing why the rest earned nothing.
func TestQuarantineEndToEnd(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-currency", "EUR")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	site := `{"name":"news","domains":["news.example"],"revenueShare":0.7`
	in.expect(in.admin("POST", "/api/v1/sites", site+`}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"news-side","site":"news"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"cpm",` + flight + `,"price":{"model":"cpm","amount":10}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t"}}`), 201, "")
	impression := func() {
		t.Helper()
		r := in.doHeaders("POST", "/api/v1/decisions", "application/json", `{"placements":[{"div":"d","placement":"news-side"}]}`, "Origin", "https://news.example")
		if r.status != 200 || !strings.Contains(r.body, `"impressionUrl":"`) {
			t.Fatalf("decision = %d %s; want an ad: a quarantined site serves", r.status, r.body)
		}
		fire(t, strings.Split(strings.Split(r.body, `"impressionUrl":"`)[1], `"`)[0])
	}
	report := func(want string) {
		t.Helper()
		eventually(t, 5*time.Second, func() string {
			if r := in.admin("GET", "/api/v1/reports?by=placement&granularity=total", ""); !strings.Contains(r.body, want) {
				return "want " + want + ": " + r.body
			}
			return ""
		})
	}
	impression()
	report(`"spend":0.01,`)
	in.expect(in.admin("PUT", "/api/v1/sites/news", site+`,"quarantined":"yes"}`), 400, `{"error":"invalid site","problems":{"quarantined":"must be true or false"}}`)
	if r := in.admin("PUT", "/api/v1/sites/news", site+`,"quarantined":true}`); r.status != 200 || !strings.Contains(r.body, `"quarantined":true`) {
		t.Fatalf("quarantining = %d %s", r.status, r.body)
	}
	if r := in.admin("GET", "/api/v1/audit?entity=site", ""); !strings.Contains(r.body, `"quarantined":true`) || !strings.Contains(r.body, `"quarantined":false`) {
		t.Errorf("the audit log of sites = %s; want the quarantine's before and after", r.body)
	}
	impression()
	impression()
	report(`"invalidRequests":{"quarantined":2}`)
	report(`"spend":0.01,`)
	if r := in.admin("GET", "/api/v1/sites/news/quality", ""); !strings.Contains(r.body, `"requests":1,"invalidRequests":2,"invalid":{"quarantined":2}`) {
		t.Errorf("the site's quality = %s; want 1 request of people's, 2 quarantined", r.body)
	}

	today := time.Now().UTC().Truncate(24 * time.Hour)
	period := `"from":"` + today.Format(time.RFC3339) + `","to":"` + today.Add(24*time.Hour).Format(time.RFC3339) + `"`
	eventually(t, 5*time.Second, func() string {
		// The events' report rows arrive at the flush; a statement is
		// numbered once, so it is made only when they all have.
		// (The quarantined row's: the totals reach 2 with one of each.)
		if r := in.admin("GET", "/api/v1/reports?by=placement,traffic&granularity=total", ""); !strings.Contains(r.body, `"traffic":{"value":"quarantined"}},"impressions":2,`) {
			return "the quarantined impressions not reported yet: " + r.body
		}
		return ""
	})
	st := in.admin("POST", "/api/v1/statements", `{"site":"news",`+period+`}`)
	if st.status != 201 || !strings.Contains(st.body, `"total":0.007,`) || !strings.Contains(st.body, `"gross":0.01,`) ||
		!strings.Contains(st.body, `"adjustments":[{"placementId":"1","reason":"invalid","ivt":"quarantined","events":2,"amount":0.02}]`) {
		t.Fatalf("statement = %d %s; want net 0.007 of gross 0.01, and 2 quarantined impressions that would have earned 0.02", st.status, st.body)
	}
	if r := in.admin("GET", "/api/v1/statements/"+strings.Split(strings.Split(st.body, `"id":"`)[1], `"`)[0]+"?format=csv", ""); !strings.Contains(r.body, "adjustment,1,invalid: quarantined,2,0.02") {
		t.Errorf("the statement's CSV = %s; want its adjustment row", r.body)
	}
}
