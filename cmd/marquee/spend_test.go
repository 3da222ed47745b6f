package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/tracking"
)

// moneyWorld is an instance (EUR) with one campaign a price model, each
// alone on its own placement: cpm 1.234567, vcpm 3.5, cpc 0.37, cpa
// 4.10 (its click URL carries {clickId}) and a flat 12 a day, over a
// two-hour flight; advertiser 1 owns them all, advertiser 2 none.
type moneyWorld struct {
	*instance
	flight     string
	from, to   time.Time
	placements []string
	// fee is the daily flat fee's (campaign 5's) part of the flight after
	// its approval, in micro-units: 12 a day, about half of 1.
	fee int64
}

// total is the spend of deliver's events, the two conversions of
// TestSpendByPriceModel and TestInvoices, and the flat fee, in
// micro-units: 0.008642 + 0.007 + 0.74 + 8.2 + the fee.
func (w *moneyWorld) total() string { return money(8_955_642 + w.fee) }

// twoHoursOfToday is a two-hour flight around now within now's UTC day
// (the hour before to the hour after, moved inside the day near
// midnight): a daily flat fee of such a flight is a twelfth of a day's in
// the reports and on an invoice of the day at any time the tests run.
func twoHoursOfToday(now time.Time) (from, to time.Time) {
	now = now.UTC().Truncate(time.Second)
	day := now.Truncate(24 * time.Hour)
	from = now.Add(-time.Hour)
	if from.Before(day) {
		from = day
	}
	if last := day.Add(22 * time.Hour); from.After(last) {
		from = last
	}
	return from, from.Add(2 * time.Hour)
}

func newMoneyWorld(t *testing.T, flags ...string) *moneyWorld {
	in := start(t, t.TempDir(), nil, append([]string{"-reports-flush", "100ms", "-currency", "eur"}, flags...)...)
	w := &moneyWorld{instance: in}
	w.from, w.to = twoHoursOfToday(time.Now())
	w.flight = `"startAt":"` + w.from.Format(time.RFC3339) + `","endAt":"` + w.to.Format(time.RFC3339) + `"`
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Other"}`), 201, "")
	for i, price := range []string{`{"model":"cpm","amount":"1.234567"}`, `{"model":"vcpm","amount":3.5}`, `{"model":"cpc","amount":0.37}`,
		`{"model":"cpa","amount":"4.10","currency":"eur"}`, `{"model":"daily","amount":12}`} {
		pl := fmt.Sprintf("p%d", i+1)
		w.placements = append(w.placements, pl)
		in.expect(in.admin("POST", "/api/v1/placements", `{"name":"`+pl+`"}`), 201, "")
		_, approved := in.approvedCampaign(`{"advertiserId":"1","name":"C` + pl + `",` + w.flight + `,"price":` + price + `}`)
		if strings.Contains(price, "daily") {
			w.fee = feeFrom(12e6, 24*time.Hour, approved, w.to, true)
		}
		in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a`+pl+`",`+w.flight+`,"campaignId":"`+fmt.Sprint(i+1)+`","placements":["`+pl+`"],`+
			`"creative":{"type":"native","title":"t","clickUrl":"https://shop.test/land?cid={clickId}"}}`), 201, "")
	}
	return w
}

// deliver fires the events the price models' tests bill: 7 impressions
// of p1 (CPM); 4 of p2 (vCPM) measured by the tag (m=1), 2 of them
// viewable; 3 of p3 (CPC), 2 of them clicked.
func (w *moneyWorld) deliver(t *testing.T) {
	t.Helper()
	for range 7 {
		fire(t, w.decide(t, "p1", "").ImpressionURL)
	}
	for i := range 4 {
		d := w.decide(t, "p2", "")
		fire(t, d.ImpressionURL+"?m=1")
		if i < 2 {
			fire(t, d.ViewURL)
		}
	}
	for i := range 3 {
		d := w.decide(t, "p3", "")
		fire(t, d.ImpressionURL)
		if i < 2 {
			fire(t, d.ClickURL)
		}
	}
}

// decision is one decision's tracking URLs.
type decision struct{ ImpressionURL, ViewURL, ClickURL string }

func (w *moneyWorld) decide(t *testing.T, placement, user string) decision {
	t.Helper()
	body := `{"placements":[{"div":"d","placement":"` + placement + `"}]`
	if user != "" {
		body += `,"user":{"key":"` + user + `"}`
	}
	r := w.do("POST", "/api/v1/decisions", "", "application/json", body+`}`)
	var got struct{ Decisions map[string][]decision }
	if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["d"]) != 1 {
		t.Fatalf("decision of %s: %d %s", placement, r.status, r.body)
	}
	return got.Decisions["d"][0]
}

// clickID fires d's click and returns the click id the landing page got.
func clickID(t *testing.T, d decision) string {
	t.Helper()
	resp := fire(t, d.ClickURL)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || err != nil || loc.Query().Get("cid") == "" {
		t.Fatalf("click = %d to %q; want the landing page with a click id", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("cid")
}

// TestSpendByPriceModel: on a known mix of events, each price model's
// spend is exact to the micro-unit — 7 impressions at CPM 1.234567 cost
// 0.008642 (8,641.969 micro-units, rounded once), 2 views of 4 measured
// impressions at vCPM 3.5 cost 0.007, 2 clicks at CPC 0.37 cost 0.74, 2
// conversions at CPA 4.10 cost 8.2 (a repeated order counts once; a click
// whose impression never counted, and its pixel's conversion, are invalid
// traffic, left out of the report of people's),
// and 12 a day over
// a two-hour flight is 1 — in the report by campaign, with eCPM, eCPC,
// eCPA, conversions, their value and ROAS; amounts in another currency
// are refused.
func TestSpendByPriceModel(t *testing.T) {
	t.Parallel()
	w := newMoneyWorld(t)
	w.deliver(t)
	var ids []string
	for range 2 {
		d := w.decide(t, "p4", "")
		fire(t, d.ImpressionURL)
		ids = append(ids, clickID(t, d))
	}
	unverified := clickID(t, w.decide(t, "p4", "")) // clicked, its impression never fired
	fire(t, w.decide(t, "p5", "").ImpressionURL)

	// Conversions: a postback of a key bound to Acme, a pixel, the same
	// order again, and a pixel of an unverified click.
	var key struct {
		Secret string `json:"key"`
	}
	r := w.admin("POST", "/api/v1/keys", `{"name":"acme shop","scopes":["conversions:write"],"advertisers":["1"]}`)
	if json.Unmarshal([]byte(r.body), &key); r.status != 201 || key.Secret == "" {
		t.Fatalf("bound key: %d %s", r.status, r.body)
	}
	var other struct {
		Secret string `json:"key"`
	}
	json.Unmarshal([]byte(w.admin("POST", "/api/v1/keys", `{"name":"other","scopes":["conversions:write"],"advertisers":["2"]}`).body), &other)
	if r := w.do("POST", "/api/v1/conversions", other.Secret, "application/json", `{"clickId":"`+ids[0]+`","orderId":"o-1","value":"30"}`); r.status != 403 {
		t.Errorf("another advertiser's key posting Acme's click = %d %s; want 403", r.status, r.body)
	}
	if r := w.do("POST", "/api/v1/conversions", key.Secret, "application/json", `{"clickId":"`+ids[0]+`","orderId":"o-1","value":"30","currency":"USD"}`); r.status != 400 || !strings.Contains(r.body, `"currency"`) {
		t.Errorf("a conversion in USD = %d %s; want 400 naming currency", r.status, r.body)
	}
	r = w.do("POST", "/api/v1/conversions", key.Secret, "application/json", `{"clickId":"`+ids[0]+`","orderId":"o-1","value":"30","currency":"EUR"}`)
	if r.status != 201 || !strings.Contains(r.body, `"counted":true`) || !strings.Contains(r.body, `"attribution":"click"`) || !strings.Contains(r.body, `"verified":true`) {
		t.Fatalf("postback = %d %s; want 201 counted, post-click, verified", r.status, r.body)
	}
	if r := w.do("POST", "/api/v1/conversions", key.Secret, "application/json", `{"clickId":"`+ids[1]+`","orderId":"o-1","value":"30"}`); r.status != 200 || !strings.Contains(r.body, `"duplicate":true`) {
		t.Errorf("the same order again = %d %s; want 200, a duplicate", r.status, r.body)
	}
	// The advertiser's own account (here a key that does more than post)
	// makes its conversion secret — the key that only posts cannot; its
	// server signs the pixel's click id, order id and value with it.
	if r := w.do("POST", "/api/v1/advertisers/1/conversion-secret", key.Secret, "application/json", ""); r.status != 403 || !strings.Contains(r.body, "only posts conversions") {
		t.Errorf("the conversion secret by a key that only posts = %d %s; want 403", r.status, r.body)
	}
	account, _ := w.keyFrom(`{"name":"acme","scopes":["conversions:write","reports:read"],"advertisers":["1"]}`)
	var cs struct{ Secret string }
	if r := w.do("POST", "/api/v1/advertisers/1/conversion-secret", account, "application/json", ""); r.status != 201 || json.Unmarshal([]byte(r.body), &cs) != nil || !strings.HasPrefix(cs.Secret, "mqcs_") {
		t.Fatalf("the advertiser's conversion secret = %d %s; want 201 with mqcs_…", r.status, r.body)
	}
	if r := w.do("POST", "/api/v1/advertisers/2/conversion-secret", account, "application/json", ""); r.status != 404 {
		t.Errorf("another advertiser's conversion secret with Acme's key = %d %s; want 404", r.status, r.body)
	}
	if resp := fire(t, w.url+"/conversion?clickId="+ids[1]+"&orderId=o-2&value=15.5&sig="+tracking.SignConversion(cs.Secret, ids[1], "o-2", "15.5")); resp.StatusCode != 204 {
		t.Errorf("signed pixel = %d; want 204", resp.StatusCode)
	}
	if resp := fire(t, w.url+"/conversion?clickId="+unverified+"&orderId=o-3&value=99"); resp.StatusCode != 204 {
		t.Errorf("pixel of an unverified click = %d; want 204", resp.StatusCode)
	}

	// Amounts in another currency are refused.
	w.expect(w.admin("POST", "/api/v1/campaigns", `{"advertiserId":"1","name":"usd",`+w.flight+`,"price":{"model":"cpm","amount":1,"currency":"USD"}}`), 400,
		`{"error":"invalid campaign","problems":{"price.currency":"is USD, but this install counts money in EUR (one currency per install: -currency)"}}`)
	w.expect(w.admin("POST", "/api/v1/advertisers", `{"name":"usd","budget":{"daily":5,"currency":"usd"}}`), 400,
		`{"error":"invalid advertiser","problems":{"budget.currency":"is USD, but this install counts money in EUR (one currency per install: -currency)"}}`)

	type row struct {
		Dims                                                  map[string]struct{ ID string }
		Impressions, Clicks, Conversions, PostViewConversions int64
		PostClickConversions                                  int64
		Spend, ECPM, ECPC, ECPA, ConversionValue, ROAS        json.Number
	}
	q := "/api/v1/reports?by=campaign&granularity=total&from=" + w.from.Add(-time.Hour).Format(time.RFC3339) + "&to=" + w.to.Add(time.Hour).Format(time.RFC3339)
	var rep struct {
		Currency string
		Totals   row
		Rows     []row
	}
	eventually(t, 5*time.Second, func() string {
		rep.Rows = nil
		if r := w.admin("GET", q, ""); json.Unmarshal([]byte(r.body), &rep) != nil || rep.Totals.Conversions != 2 {
			return "the report: " + r.body
		}
		return ""
	})
	want := map[string]row{
		"1": {Impressions: 7, Spend: "0.008642", ECPM: "1.234571"},
		"2": {Impressions: 4, Spend: "0.007", ECPM: "1.75"},
		"3": {Impressions: 3, Clicks: 2, Spend: "0.74", ECPM: "246.666667", ECPC: "0.37"},
		// The click without a counted impression and its pixel's conversion
		// are invalid traffic (noImpression): not in people's report.
		"4": {Impressions: 2, Clicks: 2, Conversions: 2, PostClickConversions: 2, Spend: "8.2", ECPM: "4100", ECPC: "4.1", ECPA: "4.1", ConversionValue: "45.5", ROAS: "5.548780487804878"},
		"5": {Impressions: 1, Spend: json.Number(money(w.fee)), ECPM: json.Number(money(w.fee * 1000))},
	}
	if len(rep.Rows) != len(want) || rep.Currency != "EUR" {
		t.Fatalf("report by campaign = %+v (%s); want %d rows in EUR", rep.Rows, rep.Currency, len(want))
	}
	for _, got := range rep.Rows {
		id := got.Dims["campaign"].ID
		wt := want[id]
		zero := func(n json.Number) json.Number {
			if n == "" {
				return "0"
			}
			return n
		}
		if got.Impressions != wt.Impressions || got.Clicks != wt.Clicks || got.Conversions != wt.Conversions || got.PostClickConversions != wt.PostClickConversions ||
			got.Spend != zero(wt.Spend) || got.ECPM != zero(wt.ECPM) || got.ECPC != zero(wt.ECPC) || got.ECPA != zero(wt.ECPA) ||
			got.ConversionValue != zero(wt.ConversionValue) || got.ROAS != zero(wt.ROAS) {
			t.Errorf("campaign %s: %+v; want %+v", id, got, wt)
		}
	}
	if rep.Totals.Spend != json.Number(w.total()) {
		t.Errorf("total spend = %s; want %s (0.008642 + 0.007 + 0.74 + 8.2 + the daily fee's %s)", rep.Totals.Spend, w.total(), money(w.fee))
	}

	// Post-view from the advertiser's server: a user who saw the CPA
	// campaign's ad and did not click converts; said without consent, the
	// user key is not used.
	fire(t, w.decide(t, "p4", "u-9").ImpressionURL)
	eventually(t, 2*time.Second, func() string {
		r := w.do("POST", "/api/v1/conversions", key.Secret, "application/json", `{"userKey":"u-9","advertiserId":"1","orderId":"v-1","consent":false}`)
		if r.status != 202 {
			return fmt.Sprintf("a post-view postback without consent = %d %s; want 202, nothing attributed", r.status, r.body)
		}
		r = w.do("POST", "/api/v1/conversions", key.Secret, "application/json", `{"userKey":"u-9","advertiserId":"1","orderId":"v-1","value":8}`)
		if r.status != 201 || !strings.Contains(r.body, `"attribution":"view"`) || !strings.Contains(r.body, `"verified":true`) {
			return fmt.Sprintf("a post-view postback = %d %s; want 201, post-view, verified", r.status, r.body)
		}
		return ""
	})
	eventually(t, 5*time.Second, func() string {
		var rep struct{ Totals row }
		if r := w.admin("GET", q, ""); json.Unmarshal([]byte(r.body), &rep) != nil || rep.Totals.PostViewConversions != 1 || rep.Totals.Spend != json.Number(money(8_955_642+4_100_000+w.fee)) {
			return "after a post-view conversion, the report: " + r.body
		}
		return ""
	})
}

// TestBudgetAfterRestart: with memory counters, an instance that
// restarts has lost what its campaigns spent; the reports, read before
// the first decision, floor it: a campaign that spent its daily budget
// stays stopped, from the first decision after the restart.
func TestBudgetAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := start(t, dir, nil, "-reports-flush", "100ms", "-budget-sync", "50ms")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"c",` + flight + `,"budget":{"daily":2},"price":{"model":"cpm","amount":1000}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/campaigns/1/delivery", ""); !strings.Contains(r.body, `"serving":true`) {
			return r.body
		}
		return ""
	})
	served := func(in *instance) bool {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`)
		var got struct{ Decisions map[string][]decision }
		json.Unmarshal([]byte(r.body), &got)
		if len(got.Decisions["d"]) == 1 {
			fire(t, got.Decisions["d"][0].ImpressionURL)
			return true
		}
		return false
	}
	for range 2 {
		if !served(in) {
			t.Fatal("the campaign did not serve before its budget was spent")
		}
	}
	eventually(t, 5*time.Second, func() string { // counted in the reports
		var rep struct{ Totals struct{ Spend float64 } }
		json.Unmarshal([]byte(in.admin("GET", "/api/v1/reports?by=campaign&granularity=total", "").body), &rep)
		if rep.Totals.Spend != 2 {
			return fmt.Sprintf("reports' spend %v; want 2", rep.Totals.Spend)
		}
		return ""
	})
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	again := start(t, dir, nil, "-reports-flush", "100ms", "-budget-sync", "50ms")
	for i := range 20 {
		if served(again) {
			t.Fatalf("decision %d after the restart served the campaign whose daily budget was spent", i)
		}
	}
	// The delivery says why once the first sync read the spend (before
	// it: "budget unknown", and the campaign does not serve either).
	eventually(t, 5*time.Second, func() string {
		if r := again.admin("GET", "/api/v1/campaigns/1/delivery", ""); !strings.Contains(r.body, `"why":"budget spent"`) {
			return "after the restart: " + r.body + "; want budget spent"
		}
		return ""
	})
}

// TestTwoHoursOfToday: the money tests' flight holds now and stays in
// now's UTC day, whatever the hour.
func TestTwoHoursOfToday(t *testing.T) {
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct{ now, from time.Time }{
		{day.Add(10 * time.Minute), day}, {day.Add(12 * time.Hour), day.Add(11 * time.Hour)}, {day.Add(23*time.Hour + 50*time.Minute), day.Add(22 * time.Hour)},
	} {
		from, to := twoHoursOfToday(c.now)
		if !from.Equal(c.from) || to.Sub(from) != 2*time.Hour || c.now.Before(from) || !c.now.Before(to) || to.After(day.Add(24*time.Hour)) {
			t.Errorf("twoHoursOfToday(%v) = %v, %v; want from %v, two hours holding now within the day", c.now, from, to, c.from)
		}
	}
}
