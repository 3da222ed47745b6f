package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDecisionsOverHTTP: a page's slots filled by the sponsorship over the
// standard campaign; an empty slot; bad requests named; the tracking URLs
// recorded once, refused when changed, the click sent to its filled URL;
// and the campaign's report counting them.
func TestDecisionsOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Big",` + flight + `,"priority":"sponsorship","price":{"model":"cpm","amount":2}}`)
	in.campaign(`{"advertiserId":"1","name":"Small",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"top","sizes":["728x90"]}`), 201, "")
	creative := `"creative":{"type":"html","width":300,"height":250,"html":"<a href='{clickUrl}'>x</a>","clickUrl":"https://acme.test/?from={placement}&c={campaign}&ad={ad}"}`
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"big",`+flight+`,"campaignId":"1",`+creative+`}`), 201, `{"id":"1"}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"small",`+flight+`,"campaignId":"2",`+creative+`}`), 201, `{"id":"2"}`)

	r := in.do("POST", "/api/v1/decisions", "", "application/json",
		`{"placements":[{"div":"a","placement":"side"},{"div":"b","placement":"side"},{"div":"c","placement":"top"}],"user":{"key":"u-1"},"country":"TW"}`)
	var got struct {
		User      struct{ Key string }
		Decisions map[string][]struct {
			AdID, CampaignID                           string
			ClickURL, ImpressionURL, ViewURL, FrameURL string
		}
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &got) != nil {
		t.Fatalf("decisions = %d %s", r.status, r.body)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("a decision's Cache-Control = %q; want no-store (each answer is a new decision)", cc)
	}
	a, b := got.Decisions["a"], got.Decisions["b"]
	if got.User.Key != "u-1" || len(a) != 1 || a[0].CampaignID != "1" || len(b) != 1 || b[0].CampaignID != "2" || len(got.Decisions["c"]) != 0 {
		t.Fatalf("decisions = %s; want the sponsorship in a, the standard in b, nothing in c", r.body)
	}
	if !strings.HasPrefix(a[0].ImpressionURL, in.url+"/t/") || a[0].ClickURL == "" || a[0].ViewURL == a[0].ImpressionURL {
		t.Fatalf("tracking URLs of a: %+v", a[0])
	}
	if !strings.HasPrefix(a[0].FrameURL, in.url+"/f/") {
		t.Fatalf("an HTML creative's frameUrl = %q; want %s/f/{token}", a[0].FrameURL, in.url)
	}
	if f := in.get(strings.TrimPrefix(a[0].FrameURL, in.url)); f.status != 200 || !strings.Contains(f.body, "<a href='"+a[0].ClickURL+"'>x</a>") ||
		f.header.Get("Content-Security-Policy") != "sandbox allow-scripts allow-popups" {
		t.Errorf("GET frameUrl = %d %v %s; want the creative with its signed click URL, sandboxed by its CSP", f.status, f.header, f.body)
	}
	if g := in.get("/api/v1/decisions?placement=side&div=x&country=TW"); g.status != 200 || !strings.Contains(g.body, `"x":[{"adId":"1"`) {
		t.Errorf("GET decisions = %d %s", g.status, g.body)
	}
	if d := in.admin("GET", "/api/v1/campaigns/1/delivery", ""); d.status != 200 || !strings.Contains(d.body, `{"campaignId":"1",`) ||
		!strings.Contains(d.body, `"decisions":2,`) || !strings.Contains(d.body, `"serving":true`) {
		t.Errorf("campaign 1's delivery = %s; want its 2 decisions (the POST's and the GET's), serving", d.body)
	}
	in.expect(in.admin("GET", "/api/v1/campaigns/9/delivery", ""), 404, "")
	for _, c := range []struct{ body, want string }{
		{`{"placements":[{"placement":"nowhere"}]}`, `"placements[0].placement":"no placement \"nowhere\""`},
		{`{"placements":[]}`, `"placements":"is required`},
		{`{"placements":[{"placement":"side","count":11}],"age":500,"country":"XX"}`, `"age":"must be an integer between 1 and 100","country":"unknown ISO 3166-1 alpha-2 code \"XX\"","placements[0].count":"must be from 1 to 10"`},
		{`{"placements":[{"placement":7,"count":"x"}],"age":"old"}`, `"age":"must be an integer","placements[0].count":"must be an integer","placements[0].placement":"must be a string"`},
		{`{"placements":{},"user":"u","keywords":["a",1],"explain":1}`, `"explain":"must be true or false","keywords[1]":"must be a string","placements":"must be an array of slots","user":"must be an object {\"key\"}"`},
		{`[1]`, `"body":"must be a JSON object`},
		{`{"placements":[{"placement":"side"}]`, `"body":"must be a JSON object`},
		{`{"placements":[` + strings.Repeat(`{"placement":"side"},`, 20) + `{"placement":"side"}]}`, `"placements":"must hold at most 20 slots"`},
	} {
		if r := in.do("POST", "/api/v1/decisions", "", "application/json", c.body); r.status != 400 || !strings.Contains(r.body, c.want) {
			t.Errorf("decisions(%s) = %d %s; want 400 …%s…", c.body, r.status, r.body, c.want)
		}
	}

	for range 3 { // fired three times, counted once
		if resp := fire(t, a[0].ImpressionURL); resp.StatusCode != 204 {
			t.Fatalf("impression URL = %d", resp.StatusCode)
		}
	}
	tampered := a[0].ImpressionURL[:len(a[0].ImpressionURL)-3] + "AAA"
	if resp := fire(t, tampered); resp.StatusCode != 400 {
		t.Errorf("a tampered URL = %d; want 400", resp.StatusCode)
	}
	if unknown := strings.Replace(a[0].ImpressionURL, "/t/i/", "/t/z/", 1); unknown == a[0].ImpressionURL {
		t.Errorf("impression URL %q is not /t/i/{token}", a[0].ImpressionURL)
	} else if resp := fire(t, unknown); resp.StatusCode != 400 {
		t.Errorf("a URL of an unknown kind = %d; want 400", resp.StatusCode)
	}
	resp := fire(t, a[0].ClickURL)
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://acme.test/?from=side&c=1&ad=1" {
		t.Errorf("click = %d to %q; want 302 to the filled click URL", resp.StatusCode, resp.Header.Get("Location"))
	}
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/campaigns/1/stats"); s.Totals.Impressions != 1 || s.Totals.Clicks != 1 {
			return fmt.Sprintf("campaign 1: %+v", s.Totals)
		}
		return ""
	})
	if s := in.stats("/api/v1/placements/side/stats"); s.Totals.Impressions != 1 {
		t.Errorf("placement side: %+v; want the impression", s.Totals)
	}
	if r := in.admin("GET", "/api/v1/campaigns/1/stats", ""); !strings.Contains(r.body, `"spend":0.002`) {
		t.Errorf("campaign 1's spend: %s; want one impression at CPM 2 = 0.002", r.body)
	}
}

// TestGoalMetStopsOverHTTP: a campaign whose clicks goal the reports say
// is met stops being chosen within seconds (the reports' flush, then the
// pacing's refresh from them).
func TestGoalMetStopsOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"One click",` + flight + `,"goal":{"metric":"clicks","total":1},"pacing":"asap"}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	decide := func() []map[string]string {
		var got struct {
			Decisions map[string][]map[string]string
		}
		json.Unmarshal([]byte(in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"placement":"side"}]}`).body), &got)
		return got.Decisions["side"]
	}
	d := decide()
	if len(d) != 1 {
		t.Fatalf("before the goal: %v; want the campaign", d)
	}
	imp, _ := http.NewRequest("GET", d[0]["impressionUrl"], nil) // a click counts for a decision whose impression did
	imp.Header.Set("User-Agent", iphoneUA)
	if resp, err := http.DefaultClient.Do(imp); err != nil || resp.StatusCode != 204 {
		t.Fatalf("impression = %v, %v", resp, err)
	}
	req, _ := http.NewRequest("GET", d[0]["clickUrl"], nil)
	req.Header.Set("User-Agent", iphoneUA)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil || resp.StatusCode != 302 {
		t.Fatalf("click = %v, %v", resp, err)
	}
	resp.Body.Close()
	eventually(t, 10*time.Second, func() string {
		if d := decide(); len(d) != 0 {
			return fmt.Sprintf("still chosen after its one click: %v", d)
		}
		return ""
	})
}

// TestExplainOverHTTP: with campaigns:read a decision says what became of
// every ad — chosen, weighed, of a lower tier, or left out and why;
// without it, explain is refused.
func TestExplainOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Top",` + flight + `,"priority":"sponsorship","keywords":["sports"]}`)
	in.campaign(`{"advertiserId":"1","name":"Mid",` + flight + `,"weight":3}`)
	in.campaign(`{"advertiserId":"1","name":"Low",` + flight + `,"priority":"house"}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	for i, c := range []string{"1", "2", "3"} {
		in.expect(in.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"a%d",%s,"campaignId":"%s","creative":{"type":"html","width":300,"height":250,"html":"x"}}`, i, flight, c)), 201, "")
	}
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"big",`+flight+`,"campaignId":"2","creative":{"type":"html","width":728,"height":90,"html":"x"}}`), 201, "")
	body := `{"placements":[{"placement":"side"}],"keywords":["news"],"explain":true}`
	if r := in.do("POST", "/api/v1/decisions", "", "application/json", body); r.status != 401 {
		t.Errorf("explain without a credential = %d %s; want 401", r.status, r.body)
	}
	viewer, _ := in.createKey("viewer", "reports:read")
	if r := in.do("POST", "/api/v1/decisions", viewer, "application/json", body); r.status != 403 || !strings.Contains(r.body, `"missing":"campaigns:read"`) {
		t.Errorf("explain with reports:read only = %d %s; want 403 missing campaigns:read", r.status, r.body)
	}
	key, _ := in.createKey("ops", "campaigns:read")
	// A preview has no tracking URLs and takes no serve of a cap.
	in.expect(in.admin("PUT", "/api/v1/campaigns/2", `{"advertiserId":"1","name":"Mid",`+flight+`,"weight":3,"frequencyCap":{"count":1,"window":"24h"}}`), 200, "")
	preview := `{"placements":[{"placement":"side"}],"user":{"key":"u"},"preview":true}`
	for range 3 {
		if r := in.do("POST", "/api/v1/decisions", key, "application/json", preview); r.status != 200 || !strings.Contains(r.body, `"campaignId":"2"`) || strings.Contains(r.body, "impressionUrl") {
			t.Fatalf("preview = %d %s; want campaign 2 (its cap of 1 untouched), no tracking URL", r.status, r.body)
		}
	}
	if r := in.do("POST", "/api/v1/decisions", "", "application/json", preview); r.status != 401 {
		t.Errorf("a preview without a credential = %d; want 401", r.status)
	}
	r := in.do("POST", "/api/v1/decisions", key, "application/json", body)
	for _, want := range []string{
		`{"adId":"2","campaignId":"2","tier":"standard","status":"chosen","weight":3,"chance":1}`,
		`{"adId":"3","campaignId":"3","tier":"house","status":"lower tier"}`,
		`{"adId":"1","campaignId":"1","tier":"sponsorship","status":"no keyword of the campaign"}`,
		`{"adId":"4","campaignId":"2","tier":"standard","status":"creative size not taken by the placement"}`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("explain = %s; lacks %s", r.body, want)
		}
	}
}

// TestTrackingExpiryAndTwentySlots: an expired tracking URL is a 410 and
// is not counted; a request of 20 slots is answered, each slot keyed.
func TestTrackingExpiryAndTwentySlots(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-tracking-ttl", "1s", "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	for i := range 25 {
		in.campaign(fmt.Sprintf(`{"advertiserId":"1","name":"c%d",%s}`, i, flight))
		in.expect(in.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"a%d",%s,"campaignId":"%d","creative":{"type":"native","title":"t"}}`, i, flight, i+1)), 201, "")
	}
	var slots []string
	for i := range 20 {
		slots = append(slots, fmt.Sprintf(`{"div":"s%d","placement":"side"}`, i))
	}
	r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[`+strings.Join(slots, ",")+`]}`)
	var got struct {
		Decisions map[string][]struct{ CampaignID, ImpressionURL string }
	}
	if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions) != 20 {
		t.Fatalf("20 slots = %d %s", r.status, r.body)
	}
	campaigns := map[string]bool{}
	for div, d := range got.Decisions {
		if len(d) != 1 || campaigns[d[0].CampaignID] {
			t.Fatalf("slot %s = %v; want one ad of a campaign no other slot has", div, d)
		}
		campaigns[d[0].CampaignID] = true
	}
	time.Sleep(1100 * time.Millisecond) // the URLs' second passes
	req, _ := http.NewRequest("GET", got.Decisions["s0"][0].ImpressionURL, nil)
	req.Header.Set("User-Agent", iphoneUA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 410 {
		t.Errorf("an expired impression URL = %d; want 410", resp.StatusCode)
	}
	time.Sleep(1200 * time.Millisecond) // past a write of the collector (200 ms) and a reports flush (100 ms), several times
	if s := in.stats("/api/v1/placements/side/stats"); s.Totals.Impressions != 0 {
		t.Errorf("the expired URL was counted: %+v", s.Totals)
	}
}

// TestMaxPerPageOverHTTP: a campaign saved with maxPerPage 2 fills two
// of a page's three slots with two of its ads (read back as saved, and
// after an edit back to 1, one slot).
func TestMaxPerPageOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	body := `{"advertiserId":"1","name":"Remnant",` + flight + `,"priority":"remnant","maxPerPage":2}`
	in.campaign(body)
	if r := in.admin("GET", "/api/v1/campaigns/1", ""); !strings.Contains(r.body, `"maxPerPage":2`) {
		t.Fatalf("the campaign reads %s; want maxPerPage 2", r.body)
	}
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	for i := range 3 {
		in.expect(in.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"a%d",%s,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`, i, flight)), 201, "")
	}
	filled := func() int {
		var got struct{ Decisions map[string][]map[string]any }
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"placement":"side","div":"a"},{"placement":"side","div":"b"},{"placement":"side","div":"c"}]}`)
		json.Unmarshal([]byte(r.body), &got)
		n := 0
		for _, d := range got.Decisions {
			n += len(d)
		}
		return n
	}
	if n := filled(); n != 2 {
		t.Errorf("maxPerPage 2: %d of 3 slots filled; want 2", n)
	}
	in.expect(in.admin("PUT", "/api/v1/campaigns/1", strings.Replace(body, `"maxPerPage":2`, `"maxPerPage":1`, 1)), 200, "")
	if n := filled(); n != 1 {
		t.Errorf("maxPerPage 1: %d of 3 slots filled; want 1", n)
	}
}
