package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMoneyEverywhere: the currency given once (-currency) is on every
// spend; a campaign's report prices its range and each bucket; an
// advertiser's report adds up its campaigns' spend (a flat fee's share
// included, from its approval); the top list of campaigns names them with
// their spend; and the CSVs carry names, CTR, spend and currency.
func TestMoneyEverywhere(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-currency", "eur")
	now := time.Now().UTC().Truncate(time.Second)
	start, end := now.Add(-time.Hour), now.Add(time.Hour)
	flight := `"startAt":"` + start.Format(time.RFC3339) + `","endAt":"` + end.Format(time.RFC3339) + `"`
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Other"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Per mille",` + flight + `,"priority":"sponsorship","price":{"model":"cpm","amount":2000}}`)
	_, approved := in.approvedCampaign(`{"advertiserId":"1","name":"Flat fee",` + flight + `,"price":{"model":"flat","amount":100}}`)
	// The flat fee is billed for its flight's part after its approval.
	fee := feeFrom(100e6, 2*time.Hour, approved, end, false)
	in.campaign(`{"advertiserId":"2","name":"Unpriced",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"big",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")

	if r := in.admin("GET", "/api/v1/session", ""); !strings.Contains(r.body, `"currency":"EUR"`) {
		t.Errorf("session = %s; want the configured currency, EUR", r.body)
	}
	var got struct {
		Decisions map[string][]struct{ ImpressionURL, ClickURL string }
	}
	r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"placement":"side"}]}`)
	if json.Unmarshal([]byte(r.body), &got) != nil || len(got.Decisions["side"]) != 1 {
		t.Fatalf("decisions = %s", r.body)
	}
	fire(t, got.Decisions["side"][0].ImpressionURL)
	fire(t, got.Decisions["side"][0].ClickURL)
	range_ := "?from=" + now.Add(-2*time.Hour).Format(time.RFC3339) + "&to=" + now.Add(2*time.Hour).Format(time.RFC3339) + "&granularity=hour"
	type report struct {
		Spend    *float64
		Currency string
		Series   []struct{ Spend *float64 }
		Top      []struct {
			ID, Name    string
			Impressions int64
			Spend       *float64
		}
	}
	read := func(path string) (rep report) {
		t.Helper()
		r := in.admin("GET", path, "")
		if r.status != 200 || json.Unmarshal([]byte(r.body), &rep) != nil {
			t.Fatalf("GET %s = %d %s", path, r.status, r.body)
		}
		return rep
	}
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/campaigns/1/stats" + range_); s.Totals.Impressions != 1 {
			return fmt.Sprintf("campaign 1: %+v", s.Totals)
		}
		return ""
	})
	c := read("/api/v1/campaigns/1/stats" + range_)
	var buckets float64
	for _, p := range c.Series {
		if p.Spend == nil {
			t.Fatalf("campaign 1's series has a bucket without spend: %+v", c.Series)
		}
		buckets += *p.Spend
	}
	if c.Spend == nil || *c.Spend != 2 || c.Currency != "EUR" || buckets != 2 {
		t.Errorf("campaign 1: spend %v %q, buckets' %v; want 2 EUR (one impression at CPM 2,000), in its buckets too", c.Spend, c.Currency, buckets)
	}
	// The flat fee's share of the range: the range covers its whole flight.
	if a := read("/api/v1/advertisers/1/stats" + range_); a.Spend == nil || money(2e6+fee) != fmt.Sprint(*a.Spend) || a.Currency != "EUR" {
		t.Errorf("advertiser 1: spend %v %q; want %s EUR (2 + the flat fee's %s)", a.Spend, a.Currency, money(2e6+fee), money(fee))
	}
	if a := read("/api/v1/advertisers/2/stats" + range_); a.Spend != nil {
		t.Errorf("advertiser 2 (no priced campaign): spend %v; want none", *a.Spend)
	}
	top := read("/api/v1/stats" + range_ + "&top=campaigns&limit=5")
	if len(top.Top) != 2 || top.Top[0].ID != "1" || top.Top[0].Name != "Per mille" || top.Top[0].Spend == nil || *top.Top[0].Spend != 2 || top.Currency != "EUR" ||
		top.Top[1].Name != "Flat fee" || top.Top[1].Impressions != 0 || top.Top[1].Spend == nil || fmt.Sprint(*top.Top[1].Spend) != money(fee) {
		t.Errorf("top campaigns = %+v (%s); want Per mille with its 2 EUR, then the flat fee's %s without an event", top.Top, top.Currency, money(fee))
	}
	// A range without any event (report rows are hours: it starts after
	// the impression's hour): the flat fee's share is still spent. Before
	// its approval, nothing is.
	from, to := now.Truncate(time.Hour).Add(time.Hour), end
	share := feeFrom(100e6, 2*time.Hour, from, to, false)
	quiet := "?from=" + from.Format(time.RFC3339) + "&to=" + to.Format(time.RFC3339)
	if q := read("/api/v1/stats" + quiet + "&top=campaigns"); len(q.Top) != 1 || q.Top[0].Name != "Flat fee" || q.Top[0].Spend == nil || fmt.Sprint(*q.Top[0].Spend) != money(share) {
		t.Errorf("top campaigns of %s (no event) = %+v; want the flat fee's share, %s", quiet, q.Top, money(share))
	}
	before := "?from=" + start.Format(time.RFC3339) + "&to=" + approved.Truncate(time.Second).Format(time.RFC3339)
	if q := read("/api/v1/stats" + before + "&top=campaigns"); slices.ContainsFunc(q.Top, func(c struct {
		ID, Name    string
		Impressions int64
		Spend       *float64
	}) bool {
		return c.Name == "Flat fee"
	}) {
		t.Errorf("top campaigns of %s (before the approval) = %+v; want no flat fee", before, q.Top)
	}
	if one := read("/api/v1/stats" + range_ + "&top=campaigns&limit=1"); len(one.Top) != 1 {
		t.Errorf("top campaigns, limit 1 = %+v; want one", one.Top)
	}
	if adv := read("/api/v1/stats" + range_ + "&top=advertisers"); len(adv.Top) != 1 || adv.Top[0].Name != "Acme" || adv.Top[0].Spend == nil || fmt.Sprint(*adv.Top[0].Spend) != money(2e6+fee) {
		t.Errorf("top advertisers = %+v; want Acme with %s", adv.Top, money(2e6+fee))
	}
	if pl := read("/api/v1/stats" + range_ + "&top=placements"); len(pl.Top) != 1 || pl.Top[0].Name != "side" || pl.Top[0].Impressions != 1 {
		t.Errorf("top placements = %+v; want side with its impression", pl.Top)
	}
	csv := in.admin("GET", "/api/v1/stats"+range_+"&top=campaigns&format=csv", "").body
	lines := strings.Split(csv, "\n")
	if head, row := lines[0], lines[1]; len(lines) != 4 || !strings.HasPrefix(head, "id,name,impressions,") || !strings.HasSuffix(head, ",ctr,viewability,video_viewability,completion_rate,spend,currency") ||
		!strings.HasPrefix(row, "1,Per mille,1,1,") || !strings.HasSuffix(row, ",1,0,0,0,2,EUR") || lines[2] != "2,Flat fee,"+strings.Repeat("0,", 26)+money(fee)+",EUR" {
		t.Errorf("top campaigns' CSV =\n%s\nwant id,name,…,ctr,…,spend,currency, Per mille's row with CTR 1 and 2 EUR, the flat fee's with %s", csv, money(fee))
	}
	series := in.admin("GET", "/api/v1/campaigns/1/stats"+range_+"&format=csv", "").body
	if head, _, _ := strings.Cut(series, "\n"); !strings.HasSuffix(head, ",uniques,ctr,spend,currency") || !strings.Contains(series, ",1,2,EUR\n") {
		t.Errorf("campaign 1's CSV =\n%s\nwant …,uniques,ctr,spend,currency and the bucket with CTR 1 and 2 EUR", series)
	}
}
