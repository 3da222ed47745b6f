package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDealsAsObjects: a deal made through the API (every problem named;
// an id taken is a 409) lifts a bid naming it to its tier on the
// instance once it takes the page's bids (clientBids: off by default) — a standard-tier deal's bid beats a standard campaign — only
// from a bidder it lists: the same deal id in a bid of another bidder
// competes in the open auction and loses to the campaign; deleted, the
// deal lifts nothing.
func TestDealsAsObjects(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"std",` + flight + `,"priority":"standard"}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")

	in.expect(in.admin("POST", "/api/v1/deals", `{"id":"PG-12","name":"","bidders":["ok","bad code!"],"tier":"house","floor":-1}`), 400,
		`{"error":"invalid deal","problems":{"bidders[1]":"must be a bidder code: 1 to 64 of A–Z, a–z, 0–9, _ . -","floor":"must be a decimal number from 0 to 1000000000 with at most 6 decimals (e.g. 2.50)","name":"must not be empty","tier":"must be one of sponsorship, standard, remnant"}}`)
	if r := in.admin("POST", "/api/v1/deals", `{"id":"PG-12","name":"Acme PG","bidders":["appnexus"],"tier":"standard","floor":2}`); r.status != 201 || !strings.Contains(r.body, `"clientBids":false`) {
		t.Fatalf("a deal = %d %s; want 201, clientBids false", r.status, r.body)
	}
	if r := in.admin("POST", "/api/v1/deals", `{"id":"PG-12","name":"again","bidders":["x"],"tier":"standard"}`); r.status != 409 {
		t.Errorf("a deal id taken = %d %s; want 409", r.status, r.body)
	}
	winner := func(bidder string) string {
		t.Helper()
		r := in.do("POST", "/api/v1/decisions", "", "application/json",
			`{"placements":[{"div":"d","placement":"side","bids":[{"bidder":"`+bidder+`","cpm":5,"adId":"pb1","size":"300x250","dealId":"PG-12"}]}]}`)
		var got struct {
			Decisions map[string][]struct{ Bidder, CampaignID string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		if b := got.Decisions["d"][0].Bidder; b != "" {
			return "bid:" + b
		}
		return "campaign " + got.Decisions["d"][0].CampaignID
	}
	// By default a deal takes no bid from the page: anyone can forge one.
	if got := winner("appnexus"); got != "campaign 1" {
		t.Errorf("the deal's bid from the page, the deal not taking the page's bids: %s; want the standard campaign", got)
	}
	if r := in.admin("PUT", "/api/v1/deals/PG-12", `{"id":"PG-12","name":"Acme PG","bidders":["appnexus"],"tier":"standard","floor":2,"clientBids":true}`); r.status != 200 || !strings.Contains(r.body, `"clientBids":true`) {
		t.Fatalf("the deal taking the page's bids = %d %s; want 200, clientBids true", r.status, r.body)
	}
	eventually(t, 2*time.Second, func() string {
		if got := winner("appnexus"); got != "bid:appnexus" {
			return "the deal's bidder: " + got + "; want its bid at the deal's standard tier"
		}
		return ""
	})
	if got := winner("forger"); got != "campaign 1" {
		t.Errorf("a bid naming the deal from a bidder it does not list won: %s; want the standard campaign", got)
	}
	if r := in.admin("GET", "/api/v1/deals", ""); r.status != 200 || !strings.Contains(r.body, `"bidders":["appnexus"]`) {
		t.Errorf("GET deals = %d %s", r.status, r.body)
	}
	in.expect(in.admin("DELETE", "/api/v1/deals/PG-12", ""), 204, "")
	if got := winner("appnexus"); got != "campaign 1" {
		t.Errorf("after the deal was deleted: %s; want the standard campaign", got)
	}
}
