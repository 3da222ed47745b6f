package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTraffickingOverHTTP: labels, a roadblock and rotation set through
// the API and kept; two airlines never on one page; an all-or-none
// roadblock fills its page together, and its video carries its HTML
// companion in VAST (required="all"), whose creativeView counts the
// companion's impression; explain names the rotation.
func TestTraffickingOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, 24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	for _, p := range []string{`{"name":"side","sizes":["300x250"]}`, `{"name":"top","sizes":["728x90"]}`,
		`{"name":"preroll","types":["video"]}`, `{"name":"companion","sizes":["300x250"],"types":["html","image"]}`} {
		in.expect(in.admin("POST", "/api/v1/placements", p), 201, "")
	}
	html := func(w, h int) string {
		return fmt.Sprintf(`"creative":{"type":"html","width":%d,"height":%d,"html":"<b>hi</b>","clickUrl":"https://acme.test/"}`, w, h)
	}
	// Two airlines, each with ads for side and top, weighted 1:3 within.
	for _, name := range []string{"Air", "Jet"} {
		id := in.campaign(`{"advertiserId":"1","name":"` + name + `",` + flight + `,"labels":[{"name":"airline","exclusive":true}]}`)
		for _, pl := range []struct {
			name string
			w, h int
		}{{"side", 300, 250}, {"top", 728, 90}} {
			in.expect(in.admin("POST", "/api/v1/ad", `{"title":"`+name+` `+pl.name+`",`+flight+`,"campaignId":"`+id+`","placements":["`+pl.name+`"],`+html(pl.w, pl.h)+`}`), 201, "")
		}
	}
	r := in.admin("GET", "/api/v1/campaigns/1", "")
	if !strings.Contains(r.body, `"labels":[{"name":"airline","exclusive":true}]`) {
		t.Fatalf("campaign 1 = %s; want its labels", r.body)
	}
	type choice struct{ AdID, CampaignID string }
	decide := func(body string) map[string][]choice {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", body)
		var got struct{ Decisions map[string][]choice }
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 {
			t.Fatalf("decision %s: %d %s", body, r.status, r.body)
		}
		return got.Decisions
	}
	page := `{"placements":[{"div":"a","placement":"side"},{"div":"b","placement":"top"}]}`
	for i := range 50 {
		d := decide(page)
		if len(d["a"]) == 1 && len(d["b"]) == 1 && d["a"][0].CampaignID != d["b"][0].CampaignID {
			t.Fatalf("decision %d: airlines %s and %s on one page", i, d["a"][0].CampaignID, d["b"][0].CampaignID)
		}
	}

	// A roadblock: a video for preroll, an HTML companion; all or none.
	road := in.campaign(`{"advertiserId":"1","name":"Takeover",` + flight + `,"priority":"sponsorship","roadblock":"all-or-none",` +
		`"rotation":{"type":"weighted","weights":{"6":2}}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"video",`+flight+`,"campaignId":"`+road+`","placements":["preroll"],`+
		`"creative":{"type":"video","mediaUrl":"https://cdn.acme.test/v.mp4","mimeType":"video/mp4","durationMs":15000,"clickUrl":"https://acme.test/v"}}`), 201, `{"id":"5"}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"banner",`+flight+`,"campaignId":"`+road+`","placements":["companion"],`+html(300, 250)+`}`), 201, `{"id":"6"}`)
	// A page of the companion placement without the preroll: never the
	// roadblock; explain says which placement it lacks.
	r = in.do("POST", "/api/v1/decisions", in.token, "application/json", `{"placements":[{"div":"c","placement":"companion"}],"explain":true}`)
	if strings.Contains(r.body, `"campaignId":"`+road+`","adId"`) || !strings.Contains(r.body, "no slot of preroll") {
		t.Errorf("a page without the preroll = %s; want the roadblock left out, its missing placement named", r.body)
	}
	// A page of both: both.
	d := decide(`{"placements":[{"div":"v","placement":"preroll"},{"div":"c","placement":"companion"}]}`)
	if len(d["v"]) != 1 || len(d["c"]) != 1 || d["v"][0].AdID != "5" || d["c"][0].AdID != "6" {
		t.Errorf("the roadblock's page = %+v; want ads 5 and 6 together", d)
	}
	r = in.do("GET", "/vast?placement=preroll", "", "", "")
	decodeVAST(t, r) // a VAST 4.2 document the schema takes, companions and all
	var doc struct {
		Creatives []struct {
			Linear       *struct{} `xml:"Linear"`
			CompanionAds *struct {
				Required  string `xml:"required,attr"`
				Companion []struct {
					ID       string `xml:"id,attr"`
					HTML     string `xml:"HTMLResource"`
					Click    string `xml:"CompanionClickThrough"`
					Tracking []struct {
						Event string `xml:"event,attr"`
						URL   string `xml:",chardata"`
					} `xml:"TrackingEvents>Tracking"`
				}
			}
		} `xml:"Ad>InLine>Creatives>Creative"`
	}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil || len(doc.Creatives) != 2 || doc.Creatives[1].CompanionAds == nil {
		t.Fatalf("VAST = %s (%v); want the video and its companions", r.body, err)
	}
	ca := doc.Creatives[1].CompanionAds
	if ca.Required != "all" || len(ca.Companion) != 1 || ca.Companion[0].ID != "6" || ca.Companion[0].HTML != "<b>hi</b>" ||
		!strings.HasPrefix(ca.Companion[0].Click, in.url+"/t/c/") || len(ca.Companion[0].Tracking) != 1 || ca.Companion[0].Tracking[0].Event != "creativeView" {
		t.Fatalf("CompanionAds = %+v; want ad 6, required all, its signed click and creativeView", ca)
	}
	for range 2 { // fired twice, counted once
		if s := fire(t, strings.TrimSpace(ca.Companion[0].Tracking[0].URL)).StatusCode; s != 204 {
			t.Fatalf("creativeView = %d", s)
		}
	}
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/ad/6/stats"); s.Totals.Impressions != 1 {
			return fmt.Sprintf("the companion's impressions: %d; want 1", s.Totals.Impressions)
		}
		return ""
	})
	r = in.do("POST", "/api/v1/decisions", in.token, "application/json", `{"placements":[{"div":"v","placement":"preroll"},{"div":"c","placement":"companion"}],"explain":true}`)
	if !strings.Contains(r.body, `"rotation":"weighted: weight 2 of 2"`) {
		t.Errorf("explain = %s; want the companion's rotation named", r.body)
	}
}

// TestBulkOverHTTP: a campaign cloned with its ads (a draft, the copy's
// name); many paused, resumed and approved at once, each its own result
// (a state a move does not allow is that one's 409, the rest change); a
// targeting set on many, then cleared; an editor cannot bulk-approve.
func TestBulkOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, 24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	a := in.campaign(`{"advertiserId":"1","name":"Spring",` + flight + `,"labels":[{"name":"airline","exclusive":true}]}`)
	for _, title := range []string{"one", "two"} {
		in.expect(in.admin("POST", "/api/v1/ad", `{"title":"`+title+`",`+flight+`,"campaignId":"`+a+`","placements":["side"],"creative":{"type":"native","title":"t"}}`), 201, "")
	}
	r := in.admin("POST", "/api/v1/campaigns/"+a+"/clone", "")
	var cl struct {
		Campaign struct{ ID, Name, State string }
		Ads      []string
	}
	if json.Unmarshal([]byte(r.body), &cl); r.status != 201 || cl.Campaign.Name != "Spring (copy)" || cl.Campaign.State != "draft" || len(cl.Ads) != 2 {
		t.Fatalf("clone = %d %s; want a draft named Spring (copy) with two ads", r.status, r.body)
	}
	if r := in.admin("GET", "/api/v1/campaigns/"+cl.Campaign.ID, ""); !strings.Contains(r.body, `"labels":[{"name":"airline","exclusive":true}]`) {
		t.Errorf("the clone = %s; want the original's settings", r.body)
	}
	if r := in.admin("GET", "/api/v1/ads?campaignId="+cl.Campaign.ID, ""); !strings.Contains(r.body, `"title":"one"`) || !strings.Contains(r.body, `"total":2`) {
		t.Errorf("the clone's ads = %s", r.body)
	}
	in.expect(in.admin("POST", "/api/v1/campaigns/"+a+"/clone", `{"name":"Summer"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/campaigns/99/clone", ""), 404, "")

	// Bulk: a is active, the clones (2, 3) drafts.
	bulk := func(body string) []struct {
		ID     string
		Status int
		Error  string
	} {
		r := in.admin("POST", "/api/v1/campaigns/bulk", body)
		var got struct {
			Results []struct {
				ID     string
				Status int
				Error  string
			}
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 {
			t.Fatalf("bulk %s = %d %s", body, r.status, r.body)
		}
		return got.Results
	}
	res := bulk(`{"ids":["` + a + `","2","3"],"action":"approve"}`)
	if len(res) != 3 || res[0].Status != 200 || res[1].Status != 200 || res[2].Status != 200 {
		t.Fatalf("approve many = %+v", res)
	}
	res = bulk(`{"ids":["` + a + `","2","99"],"action":"pause"}`)
	if res[0].Status != 200 || res[1].Status != 200 || res[2].Status != 404 {
		t.Fatalf("pause many = %+v; want two paused, 99 not found", res)
	}
	in.expect(in.admin("POST", "/api/v1/campaigns/"+a+"/clone", ""), 201, "") // 4, a draft
	res = bulk(`{"ids":["` + a + `","4"],"action":"resume"}`)
	if res[0].Status != 200 || res[1].Status != 409 || !strings.Contains(res[1].Error, "is draft") {
		t.Fatalf("resume many = %+v; want a resumed, 4 (a draft) a conflict", res)
	}
	res = bulk(`{"ids":["` + a + `","3"],"targeting":{"key":"section","in":["sports"]}}`)
	if res[0].Status != 200 || res[1].Status != 200 {
		t.Fatalf("targeting many = %+v", res)
	}
	if r := in.admin("GET", "/api/v1/campaigns/3", ""); !strings.Contains(r.body, `"targeting":{"key":"section","in":["sports"]}`) {
		t.Errorf("campaign 3 = %s; want the targeting set", r.body)
	}
	bulk(`{"ids":["3"],"targeting":null}`)
	if r := in.admin("GET", "/api/v1/campaigns/3", ""); strings.Contains(r.body, `"targeting"`) {
		t.Errorf("campaign 3 = %s; want the targeting cleared", r.body)
	}
	for _, c := range []struct{ body, want string }{
		{`{"ids":[],"action":"pause"}`, `"ids":"must be an array of 1 to 500 campaign ids"`},
		{`{"ids":["1"],"action":"reject"}`, `"action":"must be one of pause, resume, archive, submit, approve"`},
		{`{"ids":["1"]}`, `"action":"give exactly one of action`},
		{`{"ids":["1","1"],"action":"pause"}`, `"ids[1]":"is named twice"`},
		{`{"ids":["1"],"targeting":{"key":"section"}}`, `"targeting`},
	} {
		if r := in.admin("POST", "/api/v1/campaigns/bulk", c.body); r.status != 400 || !strings.Contains(r.body, c.want) {
			t.Errorf("bulk %s = %d %s; want 400 …%s…", c.body, r.status, r.body, c.want)
		}
	}
	editor, _ := in.createKey("editor", "campaigns:write", "campaigns:submit")
	if r := in.do("POST", "/api/v1/campaigns/bulk", editor, "application/json", `{"ids":["3"],"action":"approve"}`); r.status != 403 || !strings.Contains(r.body, `"missing":"campaigns:approve"`) {
		t.Errorf("an editor's bulk approval = %d %s; want 403 naming campaigns:approve", r.status, r.body)
	}
	if r := in.admin("GET", "/api/v1/audit?entity=campaign&limit=50", ""); strings.Count(r.body, `"action":"pause"`) != 2 || !strings.Contains(r.body, `"action":"approve"`) {
		t.Errorf("audit = %s; want each campaign's change recorded", r.body)
	}
}
