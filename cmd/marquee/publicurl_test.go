package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPublicURL: with -public-url, the absolute URLs the server answers —
// a decision's tracking and frame URLs, VAST's and VMAP's, an invitation's
// link — are the public origin's whatever the request's Host header says
// (a client chooses it); without it they are the request's own.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-public-url", "https://Ads.Example.NET")
	flight := flightJSON(-time.Hour, 24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"pre","types":["video"],"adBreaks":[{"offset":"start","ads":1}]}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"c",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","placements":["side"],"creative":{"type":"html","width":300,"height":250,"html":"<a href={clickUrl}>x</a>","clickUrl":"https://acme.test/"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"v",`+flight+`,"campaignId":"1","placements":["pre"],"creative":{"type":"video","mediaUrl":"https://cdn.test/v.mp4","mimeType":"video/mp4","durationMs":15000,"clickUrl":"https://acme.test/"}}`), 201, "")
	forged := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, in.url+path, strings.NewReader(body))
		req.Host = "attacker.example"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+in.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	body := forged("POST", "/api/v1/decisions", `{"placements":[{"div":"d","placement":"side"}]}`)
	var got struct {
		Decisions map[string][]struct{ ImpressionURL, ClickURL, FrameURL string }
	}
	if json.Unmarshal([]byte(body), &got); len(got.Decisions["d"]) != 1 {
		t.Fatalf("decision = %s", body)
	}
	d := got.Decisions["d"][0]
	for _, u := range []string{d.ImpressionURL, d.ClickURL, d.FrameURL} {
		if !strings.HasPrefix(u, "https://ads.example.net/") {
			t.Errorf("a decision's URL %q with Host attacker.example; want the public URL's", u)
		}
	}
	for _, path := range []string{"/vast?placement=pre", "/vmap?placement=pre&duration=60"} {
		if b := forged("GET", path, ""); strings.Contains(b, "attacker.example") || !strings.Contains(b, "https://ads.example.net/") {
			t.Errorf("GET %s with Host attacker.example = %s; want the public URL's, never the Host's", path, b)
		}
	}
	if b := forged("POST", "/api/v1/users", `{"email":"ana@example.com","role":"viewer"}`); !strings.Contains(b, `"url":"https://ads.example.net/admin/#/invite/`) {
		t.Errorf("an invitation with Host attacker.example = %s; want its link on the public URL", b)
	}
	if r := in.admin("GET", "/api/v1/creative-preview", ""); !strings.Contains(r.body, `"url":"https://ads.example.net/f/`) {
		t.Errorf("a preview's frame URL = %s; want it on the public URL", r.body)
	}
	if _, _, err := runCLI(t, "", "serve", "-public-url", "ads.example.net/x", "-addr", "127.0.0.1:0", "-data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "-public-url") {
		t.Errorf("serve -public-url ads.example.net/x = %v; want a usage error naming -public-url", err)
	}
}
