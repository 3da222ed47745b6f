package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A placement's default ad fills a slot nothing else fills — here the
// user has reached the cap of the only campaign — answered as
// "default":true with tracking URLs; its impression counts in the ad's
// report and in no campaign's. An ad without a creative cannot be a
// default ad (400); changing the default ad changes what fills the slot.
func TestDefaultAdFillsEmptySlots(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Capped",` + flight + `,"priority":"standard","frequencyCap":{"count":1,"window":"24h"}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"campaign ad",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"house ad",`+flight+`,"creative":{"type":"native","title":"house"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"bare",`+flight+`}`), 201, "")
	if r := in.admin("POST", "/api/v1/placements", `{"name":"side","defaultAdId":"3"}`); r.status != 400 || !strings.Contains(r.body, "defaultAdId") {
		t.Fatalf("a default ad without a creative = %d %s; want 400 naming defaultAdId", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","defaultAdId":"2"}`), 201, "")
	type choice struct {
		AdID, CampaignID, ImpressionURL string
		Default                         bool
	}
	decide := func() []choice {
		t.Helper()
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"a","placement":"side"}],"user":{"key":"u1"}}`)
		var got struct{ Decisions map[string][]choice }
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		return got.Decisions["a"]
	}
	eventually(t, 5*time.Second, func() string {
		if got := decide(); len(got) != 1 || got[0].CampaignID != "1" {
			return "the first decision does not serve the campaign"
		}
		return ""
	})
	got := decide()
	if len(got) != 1 || !got[0].Default || got[0].AdID != "2" || got[0].CampaignID != "" || got[0].ImpressionURL == "" {
		t.Fatalf("at the campaign's cap: %+v; want the default ad 2, \"default\":true, no campaignId, an impression URL", got)
	}
	if s := fire(t, got[0].ImpressionURL).StatusCode; s != 204 {
		t.Fatalf("the default ad's impression URL = %d; want 204", s)
	}
	eventually(t, 5*time.Second, func() string {
		var s struct{ Totals struct{ Impressions int64 } }
		r := in.admin("GET", "/api/v1/ad/2/stats?bots=include", "")
		if json.Unmarshal([]byte(r.body), &s); s.Totals.Impressions != 1 {
			return "the default ad's report: " + r.body
		}
		return ""
	})
	var c struct{ Totals struct{ Impressions int64 } }
	if r := in.admin("GET", "/api/v1/campaigns/1/stats?bots=include", ""); json.Unmarshal([]byte(r.body), &c) != nil || c.Totals.Impressions != 0 {
		t.Errorf("the campaign's report after the default ad's impression: %s; want no impression", r.body)
	}
	// Another default ad: the next empty slot is its.
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"house 2",`+flight+`,"creative":{"type":"native","title":"house 2"}}`), 201, "")
	in.expect(in.admin("PUT", "/api/v1/placements/side", `{"name":"side","defaultAdId":"4"}`), 200, "")
	eventually(t, 5*time.Second, func() string {
		if got := decide(); len(got) != 1 || got[0].AdID != "4" {
			return "the slot is not filled by the new default ad"
		}
		return ""
	})
}
