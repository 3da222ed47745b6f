package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// verifiedStats is what a campaign's report says of its verified counts
// and spend.
type verifiedStats struct {
	Totals struct {
		Impressions, Clicks, Completes          int64
		UnverifiedImpressions, UnverifiedClicks int64
	}
	Spend *float64
}

// Counts that drive delivery and money come only from events a decision
// vouches for: five anonymous clicks naming a CPC campaign neither meet
// its 5-click goal nor bill it; a click whose decision's impression never
// fired is written but not verified; an image ad's video events are not
// counted at all; an impression and then its click bill once (the click
// fired again is counted as invalid traffic, repeatClick). Forty
// anonymous decisions with no impression leave a 30-impression goal
// unmet and the campaign serving.
func TestOnlyVerifiedEventsDeliverAndBill(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-pacing-refresh", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"CPC",` + flight + `,"priority":"sponsorship","price":{"model":"cpc","amount":1.5},"goal":{"metric":"clicks","total":5}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"img",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	for range 5 {
		if s := fire(t, in.url+"/e?type=click&campaign=1&ad=1").StatusCode; s != 204 {
			t.Fatalf("anonymous click beacon = %d", s)
		}
	}
	decide := func() (imp, click string) {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"a","placement":"side"}]}`)
		var got struct {
			Decisions map[string][]struct{ ImpressionURL, ClickURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["a"]) != 1 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		return got.Decisions["a"][0].ImpressionURL, got.Decisions["a"][0].ClickURL
	}
	_, orphanClick := decide() // its impression never fires
	if s := fire(t, orphanClick).StatusCode; s != 302 {
		t.Fatalf("click = %d", s)
	}
	imp, click := decide()
	video := strings.Replace(imp, "/t/i/", "/t/e/", 1) // a "complete" of an image ad
	for _, u := range []string{video, imp, click, click} {
		fire(t, u)
	}
	campaign := func() verifiedStats {
		var v verifiedStats
		r := in.admin("GET", "/api/v1/campaigns/1/stats?bots=include", "")
		if r.status != 200 || json.Unmarshal([]byte(r.body), &v) != nil {
			t.Fatalf("campaign stats = %d %s", r.status, r.body)
		}
		return v
	}
	eventually(t, 5*time.Second, func() string {
		if v := campaign(); v.Totals.Clicks != 8 || v.Totals.UnverifiedClicks != 7 || v.Totals.Impressions != 1 || v.Totals.UnverifiedImpressions != 0 ||
			v.Totals.Completes != 0 || v.Spend == nil || *v.Spend != 1.5 {
			return fmt.Sprintf("campaign: %+v, spend %v; want 8 clicks of which 7 unverified (5 beacons, the orphan, the repeat: invalid traffic), 1 impression, no complete, spend 1.5 (one click)", v.Totals, v.Spend)
		}
		return ""
	})
	time.Sleep(300 * time.Millisecond) // a pacing refresh
	if d := in.admin("GET", "/api/v1/campaigns/1/delivery", ""); !strings.Contains(d.body, `"delivered":1,`) || !strings.Contains(d.body, `"serving":true`) {
		t.Errorf("campaign 1's delivery = %s; want 1 click delivered of 5, serving", d.body)
	}

	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"top"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Impressions",` + flight + `,"goal":{"metric":"impressions","total":30}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"n",`+flight+`,"campaignId":"2","placements":["top"],"creative":{"type":"native","title":"t"}}`), 201, "")
	for range 40 {
		in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"a","placement":"top"}]}`)
	}
	eventually(t, 5*time.Second, func() string {
		d := in.admin("GET", "/api/v1/campaigns/2/delivery", "")
		if !strings.Contains(d.body, `"delivered":0,`) || !strings.Contains(d.body, `"serving":true`) {
			return "campaign 2's delivery after 40 anonymous decisions = " + d.body + "; want none delivered, serving"
		}
		return ""
	})
}
