//go:build !noconsole

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTraffickingInBrowser: the campaign editor sets exclusive labels, a
// roadblock and weighted rotation; the API keeps them and the campaign's
// page says them.
func TestTraffickingInBrowser(t *testing.T) {
	t.Parallel()
	in, b := ownerConsole(t, 1280, 900)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	b.open("#/campaigns/new?advertiser=1", "#campaign-form")
	b.labelled("campaign editor with trafficking")
	b.do("fill trafficking", chromedp.SendKeys(chromedp.CSS(`[data-field="name"] input`), "Takeover"),
		chromedp.SendKeys(chromedp.ID("exclusive-labels"), "Airline"), chromedp.SendKeys(chromedp.ID("labels"), "travel"),
		chromedp.SetValue(chromedp.CSS(`[data-field="roadblock"] select`), "all-or-none"),
		chromedp.SetValue(chromedp.CSS(`[data-field="rotation.type"] select`), "weighted"),
		chromedp.SendKeys(chromedp.ID("rotation-weights"), "5:3, 6:1"),
		click(`#campaign-form button[type=submit]`))
	id := strings.TrimPrefix(b.waitHash(`^#/campaigns/\d+$`), "#/campaigns/")
	r := in.admin("GET", "/api/v1/campaigns/"+id, "")
	for _, want := range []string{`"labels":[{"name":"airline","exclusive":true},{"name":"travel"}]`, `"roadblock":"all-or-none"`,
		`"rotation":{"type":"weighted","weights":{"5":3,"6":1}}`, `"state":"draft"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the API has campaign %s as %s; want %s", id, r.body, want)
		}
	}
	b.do("the campaign's page", chromedp.WaitVisible(chromedp.CSS("dl.facts")))
	if txt := b.text("dl.facts"); !strings.Contains(txt, "airline (exclusive), travel") || !strings.Contains(txt, "all or none") || !strings.Contains(txt, "ad 5 × 3") {
		t.Errorf("the campaign's page says %q; want its labels, roadblock and weights", txt)
	}

	// Clone it from its page; approve both drafts from the list at once.
	b.do("clone", click("#clone"))
	b.waitFor("the clone's page", `location.hash !== '#/campaigns/`+id+`'`, 5*time.Second)
	clone := strings.TrimPrefix(b.waitHash(`^#/campaigns/\d+$`), "#/campaigns/")
	b.open("#/campaigns", "input.pick")
	b.labelled("campaign list with bulk actions")
	b.do("approve both", click(`input.pick[value="`+id+`"]`), click(`input.pick[value="`+clone+`"]`), click(`#bulk button[data-action="approve"]`),
		chromedp.WaitVisible(chromedp.CSS(`#bulk-results [role=status]`)))
	if txt := b.text("#bulk-results"); !strings.Contains(txt, "2 changed") {
		t.Errorf("the bulk result says %q; want 2 changed", txt)
	}
	for _, c := range []string{id, clone} {
		if r := in.admin("GET", "/api/v1/campaigns/"+c, ""); !strings.Contains(r.body, `"state":"active"`) {
			t.Errorf("campaign %s after the bulk approval = %s; want active", c, r.body)
		}
	}
	if r := in.admin("GET", "/api/v1/campaigns/"+clone, ""); !strings.Contains(r.body, `"name":"Takeover (copy)"`) || !strings.Contains(r.body, `"roadblock":"all-or-none"`) {
		t.Errorf("the clone = %s; want Takeover (copy) with the original's settings", r.body)
	}
}
