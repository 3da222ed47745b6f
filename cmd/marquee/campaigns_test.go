package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCampaignsOverHTTP manages the whole model through the API: an
// advertiser, a campaign paused and resumed, a placement, an ad with a
// creative in them; each bad input named; archive rules; the audit log;
// and the original ad contract unchanged for an ad without any of it.
func TestCampaignsOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	created := func(path, body string) map[string]any {
		t.Helper()
		r := in.admin("POST", path, body)
		var v map[string]any
		if r.status != 201 || json.Unmarshal([]byte(r.body), &v) != nil || r.header.Get("Location") == "" {
			t.Fatalf("POST %s %s = %d %s (Location %q)", path, body, r.status, r.body, r.header.Get("Location"))
		}
		return v
	}
	adv := created("/api/v1/advertisers", `{"name":"Acme","notes":"since 2020"}`)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 409, `{"error":"create advertiser: an active advertiser is named \"Acme\" already"}`)
	camp := created("/api/v1/campaigns", `{"advertiserId":"`+adv["id"].(string)+`","name":"Spring","startAt":"2026-01-01T00:00:00Z",
		"endAt":"2031-01-01T00:00:00Z","priority":"sponsorship","goal":{"metric":"clicks","total":1000},"frequencyCap":{"count":3,"window":"24h"}}`)
	if camp["pacing"] != "even" || camp["state"] != "draft" || camp["weight"] != 1.0 {
		t.Errorf("campaign = %v; want even pacing (a goal), a draft, weight 1", camp)
	}
	cid := camp["id"].(string)
	in.expect(in.admin("POST", "/api/v1/campaigns/"+cid+"/resume", ""), 409, `{"error":"change campaign state: campaign `+cid+` is draft: resume moves a campaign that is paused"}`)
	in.expect(in.admin("POST", "/api/v1/campaigns/"+cid+"/submit", ""), 200, "")
	in.expect(in.admin("POST", "/api/v1/campaigns/"+cid+"/reject", `{}`), 400, `{"error":"invalid rejection","problems":{"reason":"is required: say what to change"}}`)
	if r := in.admin("POST", "/api/v1/campaigns/"+cid+"/reject", `{"reason":"the flight starts before the IO"}`); r.status != 200 ||
		!strings.Contains(r.body, `"state":"draft","review":{"action":"reject","reason":"the flight starts before the IO","by":"token"`) {
		t.Errorf("reject = %d %s; want a draft with the reason, by the admin token", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/campaigns/"+cid+"/approve", ""), 200, "")
	created("/api/v1/placements", `{"name":"home-top","site":"example.com","sizes":["300x250"],"types":["html","native"]}`)
	ad := created("/api/v1/ad", `{"title":"Spring banner","startAt":"2026-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z","campaignId":"`+cid+`",
		"placements":["home-top"],"creative":{"type":"html","width":300,"height":250,"html":"<b>Spring</b>","clickUrl":"https://acme.test/?p={placement}"}}`)
	if r := in.get("/api/v1/ad/" + ad["id"].(string)); !strings.Contains(r.body, `"campaignId":"`+cid+`","creative":{"type":"html","width":300,"height":250,"clickUrl":"https://acme.test/?p={placement}","html":"\u003cb\u003eSpring\u003c/b\u003e"},"placements":["home-top"]`) {
		t.Errorf("GET the ad = %s; want its campaign, creative and placements", r.body)
	}
	// A window beyond the flight is allowed, and said.
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Late","startAt":"2025-06-01T00:00:00Z","endAt":"2032-01-01T00:00:00Z","campaignId":"`+cid+`"}`), 201,
		`{"id":"2","warnings":{"endAt":"after its campaign's flight ends (2031-01-01T00:00:00.000Z): the ad serves until then",`+
			`"startAt":"before its campaign's flight starts (2026-01-01T00:00:00.000Z): the ad serves from then"}}`)
	if r := in.admin("PUT", "/api/v1/ad/2", `{"title":"Late","startAt":"2032-01-01T00:00:00Z","endAt":"2033-01-01T00:00:00Z","campaignId":"`+cid+`"}`); !strings.Contains(r.body, `"warnings":{"campaignId":"the ad's window and its campaign's flight`) {
		t.Errorf("an ad outside its flight = %s; want a warning that it will not serve", r.body)
	}
	in.expect(in.admin("DELETE", "/api/v1/ad/2", ""), 204, "")
	// The contract's list is unchanged by what ads carry.
	in.expect(in.get("/api/v1/ad?limit=1"), 200, `{"items":[{"title":"Spring banner","endAt":"2031-01-01T00:00:00.000Z"}]}`)

	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/api/v1/campaigns", `{"advertiserId":"99","name":"x","startAt":"2026-01-01T00:00:00Z","endAt":"2027-01-01T00:00:00Z"}`, 400, `"advertiserId":"no advertiser 99"`},
		{"POST", "/api/v1/campaigns", `{"advertiserId":"1","name":"x","startAt":"2026-01-01T00:00:00Z","endAt":"2027-01-01T00:00:00Z","goal":{"metric":"clicks","total":0},"frequencyCap":{"count":1,"window":"2h"}}`, 400,
			`"frequencyCap.window":"must be one of 1h, 24h, 7d, flight","goal.total":"must be a positive integer"`},
		{"POST", "/api/v1/placements", `{"name":"home top"}`, 400, `"name":"must be 1 to 64 characters`},
		{"POST", "/api/v1/ad", `{"title":"x","startAt":"2026-01-01T00:00:00Z","endAt":"2027-01-01T00:00:00Z","campaignId":"77","placements":["nope"]}`, 400,
			`"campaignId":"no campaign 77","placements[0]":"no placement \"nope\""`},
		{"POST", "/api/v1/ad", `{"title":"x","startAt":"2026-01-01T00:00:00Z","endAt":"2027-01-01T00:00:00Z","creative":{"type":"image","width":1,"height":1,"image":"https://cdn.test/a.png","clickUrl":"javascript:x"}}`, 400,
			`"creative.clickUrl":"must be an absolute http or https URL`},
		{"GET", "/api/v1/campaigns?state=running&advertiserId=x", "", 400, `"advertiserId":"must be an advertiser's id","state":"must be one of draft, pending, active, paused, archived"`},
		{"GET", "/api/v1/campaigns/99", "", 404, `campaign 99 not found`},
		{"GET", "/api/v1/placements/Nope", "", 404, `no placement \"Nope\"`},
		{"DELETE", "/api/v1/advertisers/" + adv["id"].(string), "", 409, `has campaigns that are not archived (` + cid + `)`},
		{"DELETE", "/api/v1/placements/home-top", "", 409, `ads are limited to placement \"home-top\"`},
	} {
		r := in.admin(c.method, c.path, c.body)
		if r.status != c.status || !strings.Contains(r.body, c.want) {
			t.Errorf("%s %s %s = %d %s; want %d …%s…", c.method, c.path, c.body, r.status, r.body, c.status, c.want)
		}
	}

	in.expect(in.admin("POST", "/api/v1/campaigns/"+cid+"/pause", ""), 200, "")
	if r := in.admin("GET", "/api/v1/campaigns?advertiserId="+adv["id"].(string)+"&state=paused", ""); !strings.Contains(r.body, `"total":1`) {
		t.Errorf("paused campaigns of Acme = %s", r.body)
	}
	in.expect(in.admin("POST", "/api/v1/campaigns/"+cid+"/resume", ""), 200, "")
	in.expect(in.admin("DELETE", "/api/v1/campaigns/"+cid, ""), 204, "")
	in.expect(in.admin("POST", "/api/v1/campaigns/"+cid+"/resume", ""), 409, `{"error":"change campaign state: campaign `+cid+` is archived: resume moves a campaign that is paused"}`)
	in.expect(in.admin("DELETE", "/api/v1/advertisers/"+adv["id"].(string), ""), 204, "")
	if r := in.admin("GET", "/api/v1/advertisers?q=ac&state=archived", ""); !strings.Contains(r.body, `"name":"Acme"`) {
		t.Errorf("archived advertisers starting with ac = %s", r.body)
	}
	created("/api/v1/advertisers", `{"name":"Acme"}`) // the name is free again

	r := in.admin("GET", "/api/v1/audit?entity=campaign", "")
	for _, action := range []string{"create", "pause", "resume", "archive"} {
		if !strings.Contains(r.body, `"action":"`+action+`"`) {
			t.Errorf("audit of campaigns = %s; want the creation, the pause, the resume and the archive named so", r.body)
		}
	}
	if strings.Contains(r.body, `"action":"delete"`) || !strings.Contains(r.body, `"fields":["state"]`) {
		t.Errorf("audit of campaigns = %s; want the state changes' fields, and no delete (a campaign is archived)", r.body)
	}
	if r := in.admin("GET", "/api/v1/audit?entity=advertiser", ""); !strings.Contains(r.body, `"action":"archive"`) {
		t.Errorf("audit of advertisers = %s; want its archive", r.body)
	}
}

// TestAssetsOverHTTP uploads an image raw and as a form, serves it
// content-addressed and cached, lets an image creative use it, and
// refuses SVG, other types and oversized bodies.
func TestAssetsOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	var pngBody bytes.Buffer
	png.Encode(&pngBody, image.NewGray(image.Rect(0, 0, 300, 250)))
	upload := func(contentType string, body []byte) response {
		t.Helper()
		req, _ := http.NewRequest("POST", in.url+"/api/v1/assets", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+in.token)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return response{resp.StatusCode, resp.Header, string(b)}
	}
	r := upload("application/octet-stream", pngBody.Bytes()) // the type is sniffed, not believed
	var a struct {
		URL           string
		Type          string
		Width, Height int
	}
	if json.Unmarshal([]byte(r.body), &a); r.status != 201 || a.Type != "image/png" || a.Width != 300 || a.Height != 250 || !strings.HasPrefix(a.URL, "/assets/") {
		t.Fatalf("upload = %d %s", r.status, r.body)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "banner.png")
	fw.Write(pngBody.Bytes())
	mw.Close()
	if r := upload(mw.FormDataContentType(), form.Bytes()); r.status != 200 || !strings.Contains(r.body, a.URL) {
		t.Errorf("the same image as a form = %d %s; want 200 with the same url", r.status, r.body)
	}
	got := in.get(a.URL)
	if got.status != 200 || got.body != pngBody.String() || got.header.Get("Content-Type") != "image/png" ||
		!strings.Contains(got.header.Get("Cache-Control"), "immutable") || !strings.Contains(got.header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("GET %s = %d %v (%d bytes)", a.URL, got.status, got.header, len(got.body))
	}
	in.expect(in.get(strings.Replace(a.URL, ".png", ".gif", 1)), 404, "")
	in.expect(in.get("/assets/"+strings.Repeat("0", 64)+".png"), 404, "")
	created := in.admin("POST", "/api/v1/ad", `{"title":"Banner","startAt":"2026-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z",
		"creative":{"type":"image","width":300,"height":250,"image":"`+a.URL+`"}}`)
	in.expect(created, 201, "")

	if r := upload("image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`)); r.status != 415 || !strings.Contains(r.body, "SVG") {
		t.Errorf("an SVG = %d %s; want 415 naming SVG", r.status, r.body)
	}
	if r := upload("image/png", []byte("GIF89a but not really")); r.status != 400 && r.status != 415 {
		t.Errorf("a broken image = %d %s; want 400 or 415", r.status, r.body)
	}
	// Over the asset limit, under the server's body limit (which cuts the
	// connection of a larger body, tested with the other limits).
	if r := upload("image/png", append(pngBody.Bytes(), make([]byte, 1010<<10)...)); r.status != 413 || !strings.Contains(r.body, "the limit is 1024000") {
		t.Errorf("a 1010 KiB upload = %d %s; want 413 naming the limit", r.status, r.body)
	}
	if r := in.do("POST", "/api/v1/assets", "", "image/png", pngBody.String()); r.status != 401 {
		t.Errorf("an upload without a credential = %d; want 401", r.status)
	}
}

// TestCampaignReportsOverHTTP: events sent to /e naming a campaign, a
// placement and an ad reach the reports of the campaign (unverified: its
// goal's progress and its spend count none of them), its advertiser and
// the placement.
func TestCampaignReportsOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Spring","startAt":"` +
		time.Now().Add(-24*time.Hour).UTC().Format(time.RFC3339) + `","endAt":"` + time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339) +
		`","goal":{"metric":"clicks","total":100},"price":{"model":"cpc","amount":0.25}}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"home-top"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"A","startAt":"2026-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z","campaignId":"1"}`), 201, "")
	client := &http.Client{Timeout: 5 * time.Second}
	for i, typ := range []string{"impression", "impression", "impression", "click", "click"} {
		if s, err := get(client, fmt.Sprintf("%s/e?type=%s&ad=1&campaign=1&placement=home-top&uid=u%d", in.url, typ, i%2)); err != nil || s != 204 {
			t.Fatalf("beacon = %d, %v", s, err)
		}
	}
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/campaigns/1/stats"); s.Totals.Clicks != 2 {
			return fmt.Sprintf("campaign 1: %+v", s.Totals)
		}
		return ""
	})
	r := in.admin("GET", "/api/v1/campaigns/1/stats", "")
	// Beacons are counted for what they name, marked unverified: they
	// neither bill nor deliver the goal (docs/api.md#verified-counts).
	for _, want := range []string{`"totals":{"impressions":3,"clicks":2,`, `"unverifiedImpressions":3,"unverifiedClicks":2,`, `"spend":0,`,
		`"goal":{"metric":"clicks","total":100,"delivered":0,"progress":0,"expectedByNow":50,"status":"behind"}`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("campaign report %s lacks %s", r.body, want)
		}
	}
	// Paused, it is not "behind": its pace is not judged.
	in.expect(in.admin("POST", "/api/v1/campaigns/1/pause", ""), 200, "")
	if r := in.admin("GET", "/api/v1/campaigns/1/stats", ""); !strings.Contains(r.body, `"expectedByNow":50,"status":"paused"}`) && !strings.Contains(r.body, `"progress":0,"status":"paused"}`) {
		t.Errorf("a paused campaign's goal = %s; want status paused", r.body)
	}
	for _, path := range []string{"/api/v1/advertisers/1/stats", "/api/v1/placements/home-top/stats?by=country", "/api/v1/ad/1/stats"} {
		if s := in.stats(path); s.Totals.Impressions != 3 || s.Totals.Clicks != 2 {
			t.Errorf("%s totals = %+v; want 3 impressions, 2 clicks", path, s.Totals)
		}
	}
	in.expect(in.admin("GET", "/api/v1/placements/nowhere/stats", ""), 404, `{"error":"no placement \"nowhere\""}`)
	in.expect(in.admin("GET", "/api/v1/advertisers/9/stats", ""), 404, `{"error":"advertiser 9 not found"}`)
}
