package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"marquee/reports/geoiptest"
)

// Targeting fails closed: a campaign for US and CA on the web does not
// serve a viewer of unknown country, nor an Android browser that sends no
// platform field; it serves a viewer GeoIP places in the US (by the
// connection's address through a trusted proxy, or by the ip a
// server-to-server client passes); and its tracking events carry the
// decision's country and platform, so that reports break tag traffic down
// by them.
func TestTargetingFailsClosed(t *testing.T) {
	geo := geoiptest.Write(t, map[string]string{"81.2.69.0/24": "US", "5.6.7.0/24": "DE"})
	in := start(t, t.TempDir(), nil, "-geoip", geo, "-trusted-proxies", "127.0.0.1/32", "-reports-flush", "100ms")
	flight := `"startAt":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `","endAt":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"`
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/campaigns", `{"advertiserId":"1","name":"NA web",`+flight+`,"conditions":[{"country":["US","CA"],"platform":["web"]}]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t"}}`), 201, "")
	const desktop = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	const android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36"
	decide := func(body, xff, ua string) string {
		t.Helper()
		r := in.doHeaders("POST", "/api/v1/decisions", "application/json", `{"placements":[{"div":"a","placement":"side"}]`+body+`}`,
			"X-Forwarded-For", xff, "User-Agent", ua)
		if r.status != 200 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		var got struct {
			Decisions map[string][]struct{ ImpressionURL string }
		}
		json.Unmarshal([]byte(r.body), &got)
		if len(got.Decisions["a"]) == 0 {
			return ""
		}
		return got.Decisions["a"][0].ImpressionURL
	}
	for _, c := range []struct {
		what, body, xff, ua string
		served              bool
	}{
		{"unknown country (an address GeoIP does not know)", "", "9.9.9.9", desktop, false},
		{"a German address", "", "5.6.7.7", desktop, false},
		{"a US address, Android, no platform field", "", "81.2.69.7", android, false},
		{"a US address, a desktop browser", "", "81.2.69.7", desktop, true},
		{"a server's call passing a US viewer's ip and userAgent", `,"ip":"81.2.69.9","userAgent":"` + desktop + `"`, "9.9.9.9", "server/1.0", true},
		{"a US address, the request saying android", `,"platform":"android"`, "81.2.69.7", desktop, false},
	} {
		if got := decide(c.body, c.xff, c.ua) != ""; got != c.served {
			t.Errorf("%s: served %v; want %v", c.what, got, c.served)
		}
	}
	imp := decide("", "81.2.69.7", desktop)
	req := in.doHeaders("GET", strings.TrimPrefix(imp, in.url), "", "", "User-Agent", android, "X-Forwarded-For", "5.6.7.7")
	if req.status != 204 {
		t.Fatalf("impression = %d", req.status)
	}
	eventually(t, 5*time.Second, func() string {
		s := in.stats("/api/v1/campaigns/1/stats?by=country&bots=include")
		if len(s.Breakdown) != 1 || s.Breakdown[0].Country != "US" || s.Breakdown[0].Impressions != 1 {
			return fmt.Sprintf("campaign by country = %+v; want the impression under US (the decision's, not the pixel's DE)", s.Breakdown)
		}
		return ""
	})
	if s := in.stats("/api/v1/campaigns/1/stats?by=platform&bots=include"); len(s.Breakdown) != 1 || s.Breakdown[0].Platform != "web" {
		t.Errorf("campaign by platform = %+v; want web (the decision's, not the pixel's Android)", s.Breakdown)
	}
}
