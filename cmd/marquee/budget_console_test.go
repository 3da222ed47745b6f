//go:build !noconsole

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBudgetInBrowser: in Chromium, a campaign is given a daily budget
// in its editor; its page shows the budget, what it spent today of it
// and, when the budget is spent, that it stopped; a campaign paced
// evenly to its budget shows what the straight line allows by now.
func TestBudgetInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-budget-sync", "50ms", "-currency", "EUR")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Spring",` + flight + `,"price":{"model":"cpm","amount":1000}}`)
	in.campaign(`{"advertiserId":"1","name":"Even",` + flight + `,"priority":"remnant","pacing":"even","budget":{"daily":100},"price":{"model":"cpm","amount":1}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"s",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")

	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")
	b.open("#/campaigns/1/edit", "#campaign-form")
	b.labelled("campaign editor with a budget")
	b.do("a daily budget of 3", chromedp.SendKeys(chromedp.CSS(`#budget-daily`), "3"), click(`#campaign-form button[type=submit]`))
	b.waitHash(`^#/campaigns/1$`)
	if r := in.admin("GET", "/api/v1/campaigns/1", ""); !strings.Contains(r.body, `"budget":{"daily":3}`) {
		t.Fatalf("the API has campaign 1 as %s; want its daily budget of 3", r.body)
	}
	// Three impressions at a CPM of 1,000 spend the 3.
	for range 3 {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`)
		i := strings.Index(r.body, `"impressionUrl":"`)
		if i < 0 {
			t.Fatalf("decision: %s", r.body)
		}
		u := r.body[i+len(`"impressionUrl":"`):]
		fire(t, u[:strings.IndexByte(u, '"')])
	}
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/campaigns/1/delivery", ""); !strings.Contains(r.body, `"why":"budget spent"`) {
			return "delivery: " + r.body
		}
		return ""
	})
	b.open("#/campaigns/1", "#delivery")
	facts, card := b.text("main .facts"), b.text("#delivery")
	if !strings.Contains(facts, "Budget") || !strings.Contains(facts, "€3.00 a day") {
		t.Errorf("campaign page facts = %q; want its budget, €3.00 a day", facts)
	}
	if !strings.Contains(card, "Serving") || !strings.Contains(card, "no — budget spent") || !strings.Contains(card, "€3.00 of €3.00 (100.00%)") {
		t.Errorf("delivery card = %q; want not serving (budget spent), €3.00 of €3.00 spent today", card)
	}
	b.open("#/campaigns/2", "#delivery")
	if card := b.text("#delivery"); !strings.Contains(card, "€0.00 of €100.00") || !strings.Contains(card, "even pacing allows €") {
		t.Errorf("the evenly paced campaign's delivery card = %q; want €0.00 of €100.00 spent and what even pacing allows by now", card)
	}
}
