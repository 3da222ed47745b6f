package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestMoneyChangesAudited: every change of money is in the audit log with
// its actor and what it held before and after — a site made, its revenue
// share changed, deleted; a deal made, changed, deleted; a prepaid
// advertiser credited; an invoice issued and credited (the credit note,
// and the invoice it cancels); a statement issued — each filterable by
// its kind (?entity=).
func TestMoneyChangesAudited(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-currency", "eur")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Prepaid","prepaid":true}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"news","domains":["news.example"],"revenueShare":0.7}`), 201, "")
	in.expect(in.admin("PUT", "/api/v1/sites/news", `{"name":"news","domains":["news.example"],"revenueShare":0.6}`), 200, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"gone","domains":["gone.example"],"revenueShare":0.5}`), 201, "")
	in.expect(in.admin("DELETE", "/api/v1/sites/gone", ""), 204, "")
	in.expect(in.admin("POST", "/api/v1/deals", `{"id":"PG-1","name":"PG","bidders":["a"],"floor":2,"tier":"standard"}`), 201, "")
	in.expect(in.admin("PUT", "/api/v1/deals/PG-1", `{"id":"PG-1","name":"PG","bidders":["a"],"floor":3,"tier":"standard"}`), 200, "")
	in.expect(in.admin("DELETE", "/api/v1/deals/PG-1", ""), 204, "")
	in.topUp("2", `{"amount":"2.5","kind":"credit","reason":"a misdelivered day"}`)
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
	period := `"from":"` + day.Format(time.RFC3339) + `","to":"` + day.AddDate(0, 0, 1).Format(time.RFC3339) + `"`
	r := in.admin("POST", "/api/v1/invoices", `{"advertiserId":"1",`+period+`}`)
	var inv struct{ ID, Number string }
	if json.Unmarshal([]byte(r.body), &inv); r.status != 201 {
		t.Fatalf("invoice = %d %s", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/invoices/"+inv.ID+"/credit", ""), 201, "")
	in.expect(in.admin("POST", "/api/v1/statements", `{"site":"news",`+period+`}`), 201, "")

	type entry struct {
		Actor, EntityID, Action string
		Before, After           json.RawMessage
	}
	audit := func(entity string) []entry {
		var page struct{ Entries []entry }
		r := in.admin("GET", "/api/v1/audit?entity="+entity, "")
		if json.Unmarshal([]byte(r.body), &page); r.status != 200 {
			t.Fatalf("GET /api/v1/audit?entity=%s = %d %s", entity, r.status, r.body)
		}
		return page.Entries
	}
	has := func(entity, id string, before, after string) {
		t.Helper()
		for _, e := range audit(entity) {
			if e.EntityID == id && e.Actor != "" && strings.Contains(string(e.Before), before) && strings.Contains(string(e.After), after) &&
				(before == "" || len(e.Before) > 0) && (after == "" || len(e.After) > 0) {
				return
			}
		}
		t.Errorf("audit of %s: no entry of %q with before %q and after %q in %+v", entity, id, before, after, audit(entity))
	}
	has("site", "news", "", `"revenueShare":0.7`)
	has("site", "news", `"revenueShare":0.7`, `"revenueShare":0.6`)
	has("site", "gone", `"revenueShare":0.5`, "")
	has("deal", "PG-1", "", `"floor":2`)
	has("deal", "PG-1", `"floor":2`, `"floor":3`)
	has("deal", "PG-1", `"floor":3`, "")
	has("topUp", "1", `"credited":0`, `"credited":2.5`)
	has("invoice", inv.Number, "", `"total":0`)
	has("invoice", inv.Number, `"number":"`+inv.Number+`"`, `"creditedBy":"MQ-000002"`)
	has("invoice", "MQ-000002", "", `"corrects":"`+inv.Number+`"`)
	has("statement", "MQ-000003", "", `"site":"news"`)
	if n := len(audit("site")); n != 4 {
		t.Errorf("the sites' audit entries = %d; want 4 (two made, one changed, one deleted)", n)
	}
}
