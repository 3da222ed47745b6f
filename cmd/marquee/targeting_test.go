package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/geoip/geoiptest"
)

// TestTargetingOverHTTP: campaigns with targeting trees, through the
// server: key-values of the page and of a slot (POST and GET), the page
// URL (the body's or the Referer header), the User-Agent's device, the
// language, and explain naming the rule that left a campaign out; bad
// trees and bad key-values named field by field.
func TestTargetingOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	for _, c := range []string{
		`"name":"Sports","priority":"sponsorship","targeting":{"all":[{"key":"section","in":["sports"]},{"key":"pos","notIn":["btf"]}]}`,
		`"name":"Phones on /deals","priority":"standard","targeting":{"all":[{"key":"$device","in":["phone"]},{"key":"$path","prefix":["/deals/"]},{"key":"$language","in":["de"]}]}`,
		`"name":"House","priority":"house"`,
	} {
		in.campaign(`{"advertiserId":"1",` + flight + `,` + c + `}`)
	}
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	for i := range 3 {
		in.expect(in.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"a%d",%s,"campaignId":"%d","creative":{"type":"html","width":300,"height":250,"html":"x"}}`, i, flight, i+1)), 201, "")
	}
	if r := in.admin("GET", "/api/v1/campaigns/1", ""); !strings.Contains(r.body, `"targeting":{"all":[{"key":"section","in":["sports"]},{"key":"pos","notIn":["btf"]}]}`) {
		t.Errorf("campaign 1 = %s; want its targeting tree as written", r.body)
	}
	const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	const desktop = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	for _, c := range []struct {
		name, method, path, body string
		header                   []string
		want                     string
	}{
		{"page kv", "POST", "/api/v1/decisions", `{"placements":[{"div":"s","placement":"side"}],"kv":{"section":"Sports","pos":["atf"]}}`, nil, "1"},
		{"excluded pos", "POST", "/api/v1/decisions", `{"placements":[{"div":"s","placement":"side"}],"kv":{"section":"sports","pos":"btf"}}`, nil, "3"},
		{"slot kv replaces the page's", "POST", "/api/v1/decisions", `{"placements":[{"div":"s","placement":"side","kv":{"section":"sports"}}],"kv":{"section":"news"}}`, nil, "1"},
		{"GET kv", "GET", "/api/v1/decisions?placement=side&div=s&kv.section=sports", "", nil, "1"},
		{"GET kv of another section", "GET", "/api/v1/decisions?placement=side&div=s&kv.section=news", "", nil, "3"},
		{"phone, /deals, de", "POST", "/api/v1/decisions", `{"placements":[{"div":"s","placement":"side"}],"url":"https://shop.example/deals/tv?x=1"}`,
			[]string{"User-Agent", iphone, "Accept-Language", "de-DE,de;q=0.9,en;q=0.5"}, "2"},
		{"the Referer is the page", "POST", "/api/v1/decisions", `{"placements":[{"div":"s","placement":"side"}],"language":"de"}`,
			[]string{"User-Agent", iphone, "Referer", "https://shop.example/deals/"}, "2"},
		{"a desktop", "POST", "/api/v1/decisions", `{"placements":[{"div":"s","placement":"side"}],"url":"https://shop.example/deals/tv"}`,
			[]string{"User-Agent", desktop, "Accept-Language", "de"}, "3"},
		{"another path", "POST", "/api/v1/decisions", `{"placements":[{"div":"s","placement":"side"}],"url":"https://shop.example/news/"}`,
			[]string{"User-Agent", iphone, "Accept-Language", "de"}, "3"},
	} {
		r := in.doHeaders(c.method, c.path, "application/json", c.body, c.header...)
		if r.status != 200 || !strings.Contains(r.body, `"s":[{"adId":"`+c.want+`"`) {
			t.Errorf("%s: %s %s = %d %s; want ad %s", c.name, c.method, c.path, r.status, r.body, c.want)
		}
	}
	key, _ := in.createKey("ops", "campaigns:read")
	r := in.doHeaders("POST", "/api/v1/decisions", "application/json", `{"placements":[{"placement":"side"}],"kv":{"section":"news"},"explain":true}`,
		"Authorization", "Bearer "+key, "User-Agent", "Go-http-client/1.1")
	for _, want := range []string{
		`{"adId":"1","campaignId":"1","tier":"sponsorship","status":"campaign targeting: kv section: news not in [sports]"}`,
		`{"adId":"2","campaignId":"2","tier":"standard","status":"campaign targeting: $device: bot not in [phone]"}`, // Go's client is a bot to the parser
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("explain = %s; lacks %s", r.body, want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"placements":[{"placement":"side"}],"kv":{"Sec tion":"x","a":{"b":1},"c":"","d":["ok",true]}}`,
			`"kv.Sec tion":"key must be 1 to 40 bytes of a-z, 0-9, _, . and -","kv.a":"must be a string, a number, or an array of them","kv.c":"must be 1 to 100 bytes without control characters","kv.d[1]":"must be a string, a number, or an array of them"`},
		{`{"placements":[{"placement":"side","kv":[1]}],"kv":"x"}`, `"kv":"must be an object {\"key\": \"value\" or [\"values\"]}","placements[0].kv":"must be an object`},
	} {
		if r := in.do("POST", "/api/v1/decisions", "", "application/json", c.body); r.status != 400 || !strings.Contains(r.body, c.want) {
			t.Errorf("decisions(%s) = %d %s; want 400 …%s…", c.body, r.status, r.body, c.want)
		}
	}
	r = in.admin("POST", "/api/v1/campaigns", `{"advertiserId":"1","name":"Bad",`+flight+`,"timeZone":"Mars/Base","targeting":{"any":[{"key":"$ip","in":["10.0.0.0/99"]},{"dayPart":{"from":"25:00","to":"02:00"}}]}}`)
	for _, want := range []string{`"targeting.any[0].in[0]":"must be a CIDR range`, `"targeting.any[1].dayPart.from":"must be a time \"HH:MM\"`, `"timeZone":"unknown IANA time zone \"Mars/Base\""`} {
		if r.status != 400 || !strings.Contains(r.body, want) {
			t.Errorf("a bad tree = %d %s; want 400 …%s…", r.status, r.body, want)
		}
	}
}

// TestGeoTargetingOverHTTP: with a City database (-geoip), $region,
// $city and $metro come from the viewer's address unless the request
// names them; without one, a rule reading them is refused when written.
func TestGeoTargetingOverHTTP(t *testing.T) {
	t.Parallel()
	city := geoiptest.WriteCity(t, map[string]geoiptest.City{
		"1.2.3.0/24": {Country: "US", Subdivision: "CA", Name: "San Francisco", Metro: 807},
		"5.6.7.0/24": {Country: "US", Subdivision: "NY", Name: "New York", Metro: 501},
	})
	flight := flightJSON(-time.Hour, time.Hour)
	geoTree := `"targeting":{"all":[{"key":"$region","in":["US-CA"]},{"key":"$city","in":["San Francisco"]},{"key":"$metro","in":["807"]}]}`

	plain := start(t, t.TempDir(), nil)
	plain.expect(plain.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	if r := plain.admin("POST", "/api/v1/campaigns", `{"advertiserId":"1","name":"Bay",`+flight+`,`+geoTree+`}`); r.status != 400 ||
		!strings.Contains(r.body, `"targeting":"reads $region, $city or $metro, which need a GeoIP database`) {
		t.Errorf("a geo rule without -geoip = %d %s; want 400 naming targeting", r.status, r.body)
	}

	in := start(t, t.TempDir(), nil, "-geoip", city)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Bay",` + flight + `,"priority":"sponsorship",` + geoTree + `}`)
	in.campaign(`{"advertiserId":"1","name":"House",` + flight + `,"priority":"house"}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	for i := range 2 {
		in.expect(in.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"a%d",%s,"campaignId":"%d","creative":{"type":"html","width":300,"height":250,"html":"x"}}`, i, flight, i+1)), 201, "")
	}
	for _, c := range []struct{ body, want string }{
		{`"ip":"1.2.3.4"`, "1"},
		{`"ip":"5.6.7.8"`, "2"},
		{`"ip":"5.6.7.8","region":"us-ca","city":"san francisco","metro":"807"`, "1"}, // the publisher's word first
		{`"ip":"1.2.3.4","city":"Oakland"`, "2"},
	} {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"s","placement":"side"}],`+c.body+`}`)
		if r.status != 200 || !strings.Contains(r.body, `"s":[{"adId":"`+c.want+`"`) {
			t.Errorf("decision with %s = %d %s; want ad %s", c.body, r.status, r.body, c.want)
		}
	}
}

// TestReportsByKeyValue: with -report-keys, a decision's values of those
// keys (the slot's over the page's) ride in its tracking URLs, and its
// events are counted by them — by ad, campaign and placement; other keys
// are not counted, and a report by a key not chosen is a 400.
func TestReportsByKeyValue(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-report-keys", "section,pos")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"C",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"html","width":300,"height":250,"html":"x"}}`), 201, "")
	for _, body := range []string{
		`{"placements":[{"div":"s","placement":"side","kv":{"pos":"atf"}}],"kv":{"section":"Sports","pos":"btf","author":"kim"}}`,
		`{"placements":[{"div":"s","placement":"side"}],"kv":{"section":"news","tags":["a","b"]}}`,
		`{"placements":[{"div":"s","placement":"side"}]}`,
	} {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", body)
		var got struct {
			Decisions map[string][]struct{ ImpressionURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["s"]) != 1 {
			t.Fatalf("decision %s = %d %s", body, r.status, r.body)
		}
		fire(t, got.Decisions["s"][0].ImpressionURL)
	}
	for _, c := range []struct{ path, want string }{
		{"/api/v1/campaigns/1/stats?by=kv.section", `"breakdown":[{"value":"news","impressions":1,`},
		{"/api/v1/campaigns/1/stats?by=kv.section", `{"value":"sports","impressions":1,`},
		{"/api/v1/ad/1/stats?by=kv.pos", `"breakdown":[{"value":"atf","impressions":1,`},
		{"/api/v1/placements/side/stats?by=kv.section", `{"value":"sports","impressions":1,`},
	} {
		eventually(t, 10*time.Second, func() string {
			if r := in.admin("GET", c.path, ""); r.status != 200 || !strings.Contains(r.body, c.want) {
				return fmt.Sprintf("GET %s = %d %s; want …%s…", c.path, r.status, r.body, c.want)
			}
			return ""
		})
	}
	if r := in.admin("GET", "/api/v1/ad/1/stats?by=kv.pos", ""); strings.Contains(r.body, "btf") {
		t.Errorf("by pos = %s; the slot's pos (atf) replaces the page's (btf)", r.body)
	}
	if r := in.admin("GET", "/api/v1/campaigns/1/stats?by=kv.author", ""); r.status != 400 || !strings.Contains(r.body, `"by"`) {
		t.Errorf("by a key not in -report-keys = %d %s; want 400 naming by", r.status, r.body)
	}
	var out, errOut strings.Builder
	err := run(t.Context(), []string{"serve", "-data", t.TempDir(), "-report-keys", "a,b,c,d"}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	if err == nil || !strings.Contains(errOut.String()+err.Error(), "-report-keys: 4 keys: at most 3") {
		t.Errorf("serve -report-keys a,b,c,d = %v %s; want a usage error", err, errOut.String())
	}
}

// TestReportKeysChosenWithoutRestart: the install's report keys are a
// setting: -report-keys seeds them, PUT /api/v1/settings/report-keys
// changes them on every instance without a restart (the other
// instance's decisions carry the new key's values and its events are
// counted by them), bad keys are a 400 naming keys, and a later
// -report-keys does not overrule what was chosen.
func TestReportKeysChosenWithoutRestart(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "shared.db")
	a := start(t, t.TempDir(), nil, "-db", db, "-insecure-admin", "-poll", "50ms", "-reports-flush", "100ms", "-report-keys", "section")
	b := start(t, t.TempDir(), nil, "-db", db, "-insecure-admin", "-poll", "50ms", "-reports-flush", "100ms")
	keysOf := func(in *instance) string {
		r := in.admin("GET", "/api/v1/settings/report-keys", "")
		if r.status != 200 {
			return fmt.Sprintf("%d %s", r.status, r.body)
		}
		return r.body
	}
	if got, want := keysOf(b), `{"keys":["section"],"max":3}`; got != want {
		t.Fatalf("b's report keys (seeded by a's -report-keys) = %s; want %s", got, want)
	}
	flight := flightJSON(-time.Hour, time.Hour)
	a.expect(a.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	a.campaign(`{"advertiserId":"1","name":"C",` + flight + `}`)
	a.expect(a.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	a.expect(a.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"html","width":300,"height":250,"html":"x"}}`), 201, "")
	for _, c := range []struct{ body, want string }{
		{`{"keys":["a","b","c","d"]}`, `"keys":"4 keys: at most 3`},
		{`{"keys":["Bad key"]}`, `"keys":"\"Bad key\" is not a key`},
		{`{"keys":"pos"}`, `"keys":"must be a list of keys"`},
		{`{}`, `"keys":"is required`},
	} {
		if r := a.admin("PUT", "/api/v1/settings/report-keys", c.body); r.status != 400 || !strings.Contains(r.body, c.want) {
			t.Errorf("PUT report keys %s = %d %s; want 400 with …%s…", c.body, r.status, r.body, c.want)
		}
	}
	a.expect(a.admin("PUT", "/api/v1/settings/report-keys", `{"keys":["POS","section"]}`), 200, `{"keys":["pos","section"],"max":3}`)
	eventually(t, 5*time.Second, func() string {
		if got, want := keysOf(b), `{"keys":["pos","section"],"max":3}`; got != want {
			return fmt.Sprintf("b's report keys = %s; want %s", got, want)
		}
		return ""
	})
	if r := b.admin("GET", "/api/v1/session", ""); !strings.Contains(r.body, `"reportKeys":["pos","section"]`) {
		t.Errorf("b's session = %s; want the report keys the console offers", r.body)
	}
	// b decides (once it serves the ad): its tracking URLs carry pos, and
	// b counts the event by it.
	eventually(t, 5*time.Second, func() string {
		r := b.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"s","placement":"side","kv":{"pos":"atf"}}],"kv":{"section":"news"}}`)
		var got struct {
			Decisions map[string][]struct{ ImpressionURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["s"]) != 1 {
			return fmt.Sprintf("b's decision = %d %s", r.status, r.body)
		}
		fire(t, got.Decisions["s"][0].ImpressionURL)
		return ""
	})
	for _, in := range []*instance{a, b} {
		eventually(t, 10*time.Second, func() string {
			if r := in.admin("GET", "/api/v1/ad/1/stats?by=kv.pos", ""); r.status != 200 || !strings.Contains(r.body, `"breakdown":[{"value":"atf","impressions":1,`) {
				return fmt.Sprintf("GET /api/v1/ad/1/stats?by=kv.pos = %d %s; want atf counted once", r.status, r.body)
			}
			return ""
		})
	}
	// A later -report-keys does not overrule the install's keys.
	c := start(t, t.TempDir(), nil, "-db", db, "-insecure-admin", "-poll", "50ms", "-report-keys", "author")
	if got, want := keysOf(c), `{"keys":["pos","section"],"max":3}`; got != want {
		t.Errorf("c's report keys (started with -report-keys author) = %s; want the install's %s", got, want)
	}
	a.expect(a.admin("PUT", "/api/v1/settings/report-keys", `{"keys":[]}`), 200, `{"keys":[],"max":3}`)
	eventually(t, 5*time.Second, func() string {
		if r := b.admin("GET", "/api/v1/campaigns/1/stats?by=kv.pos", ""); r.status != 400 {
			return fmt.Sprintf("by kv.pos on b after the keys were emptied = %d %s; want 400", r.status, r.body)
		}
		return ""
	})
}

// TestVASTKeyValues: a player's VAST URL carries key-values
// (kv.KEY=value) that video campaigns' targeting reads.
func TestVASTKeyValues(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Sports video",` + flight + `,"targeting":{"key":"section","in":["sports"]}}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"preroll","types":["video"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"v",`+flight+`,"campaignId":"1","creative":{"type":"video","width":1280,"height":720,"mediaUrl":"https://cdn.acme.test/v.mp4","mimeType":"video/mp4","durationMs":15000}}`), 201, "")
	if r := in.get("/vast?placement=preroll&kv.section=sports"); r.status != 200 || !strings.Contains(r.body, "<MediaFile") {
		t.Errorf("VAST for section=sports = %d %s; want the sports video", r.status, r.body)
	}
	if r := in.get("/vast?placement=preroll&kv.section=news"); r.status != 200 || strings.Contains(r.body, "<Ad ") {
		t.Errorf("VAST for section=news = %d %s; want an empty VAST", r.status, r.body)
	}
	if r := in.get("/vast?placement=preroll&kv.Sec%20tion=x"); r.status != 400 || !strings.Contains(r.body, `"kv.Sec tion"`) {
		t.Errorf("VAST with a bad key = %d %s; want 400 naming it", r.status, r.body)
	}
}
