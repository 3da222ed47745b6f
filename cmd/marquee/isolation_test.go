package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee/index"
	"marquee/web"
)

// isolationWorld is two advertisers and two sites: A (Acme) and site S
// (mysite) are the accounts'; B (Zzbrand) and site T (zztsite) are the
// others', every name of theirs marked "zz" so that an answer that shows
// any of it is caught.
func isolationWorld(t *testing.T) *instance {
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Zzbrand"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Acme spring",` + flight + `,"price":{"model":"cpm","amount":1000}}`)
	in.campaign(`{"advertiserId":"2","name":"Zzbcampaign",` + flight + `,"price":{"model":"cpm","amount":3000}}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","site":"mysite"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"zzt-top","site":"zztsite"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"mysite","revenueShare":0.7}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"zztsite","revenueShare":0.5}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"acme ad",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"zzbad",`+flight+`,"campaignId":"2","creative":{"type":"native","title":"t"}}`), 201, "")
	return in
}

// TestAccountIsolation: every route of routes.go × an advertiser user of
// A, a publisher user of site S, and keys bound likewise. Nothing of
// advertiser B or site T is answered, listed, counted or exported: a
// route not open to the account answers 403; a route open to it answers
// B's or T's ids and names 404; no answer to the account (lists,
// reports, CSV) names B or T; each open route answers the account's own.
// Then the figures: the account's reports count exactly its own events.
func TestAccountIsolation(t *testing.T) {
	t.Parallel()
	in := isolationWorld(t)
	// Traffic on both sites, each campaign's impressions fired.
	type choice struct{ CampaignID, ImpressionURL string }
	served := map[[2]string]int64{} // campaign, placement → impressions
	for i := range 40 {
		pl := []string{"side", "zzt-top"}[i%2]
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"`+pl+`"}]}`)
		var got struct{ Decisions map[string][]choice }
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision: %d %s", r.status, r.body)
		}
		c := got.Decisions["d"][0]
		fire(t, c.ImpressionURL)
		served[[2]string{c.CampaignID, pl}]++
	}
	var total int64
	for _, n := range served {
		total += n
	}
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/stats"); s.Totals.Impressions != total {
			return fmt.Sprintf("%d impressions counted of %d", s.Totals.Impressions, total)
		}
		return ""
	})

	// Invoices: 1 the advertiser's, 2 the other's; statements: 3 the
	// publisher's site's, 4 the other site's.
	today := time.Now().UTC().Truncate(24 * time.Hour)
	period := `"from":"` + today.Add(-24*time.Hour).Format(time.RFC3339) + `","to":"` + today.Add(24*time.Hour).Format(time.RFC3339) + `"`
	for _, adv := range []string{"1", "2"} {
		in.expect(in.admin("POST", "/api/v1/invoices", `{"advertiserId":"`+adv+`",`+period+`}`), 201, "")
	}
	for _, site := range []string{"mysite", "zztsite"} {
		in.expect(in.admin("POST", "/api/v1/statements", `{"site":"`+site+`",`+period+`}`), 201, "")
	}

	// The accounts: users (signed in) and keys.
	mkUser := func(body string) {
		in.expect(in.admin("POST", "/api/v1/users", body), 201, "")
	}
	mkUser(`{"email":"adv@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`)
	mkUser(`{"email":"pub@mysite.test","role":"publisher","sites":["mysite"],"password":"publisher password"}`)
	advUser := in.signIn(t, `{"email":"adv@acme.test","password":"advertiser password"}`)
	pubUser := in.signIn(t, `{"email":"pub@mysite.test","password":"publisher password"}`)
	key := func(body string) string { k, _ := in.keyFrom(body); return k }
	advKey := key(`{"name":"acme","scopes":["ads:read","campaigns:read","reports:read","campaigns:submit","ads:write","conversions:write","billing:write"],"advertisers":[1]}`)
	pubKey := key(`{"name":"mysite","scopes":["campaigns:read","reports:read"],"sites":["mysite"]}`)
	// Saved reports: 1 the advertiser's, 2 the team's, 3 the publisher's.
	for _, sr := range []struct{ token, body string }{{advKey, `{"name":"acme weekly","query":"by=campaign"}`},
		{in.token, `{"name":"zzb and zzt","query":"by=advertiser"}`}, {pubKey, `{"name":"mysite fill","query":"by=placement"}`}} {
		in.expect(in.do("POST", "/api/v1/saved-reports", sr.token, "application/json", sr.body), 201, "")
	}
	type account struct {
		name       string
		publisher  bool
		do         func(method, path, body string) response
		own, other map[string]string // a path's {name}s: the account's, and the others'
	}
	bearer := func(k string) func(method, path, body string) response {
		return func(method, path, body string) response { return in.do(method, path, k, "application/json", body) }
	}
	advOwn := map[string]string{"{id}": "1", "{name}": "side"}
	advOther := map[string]string{"{id}": "2", "{name}": "zzt-top"}
	pubOwn := map[string]string{"{id}": "3", "{name}": "side"} // {id}: a saved report (publishers have no other route of an id)
	pubOther := map[string]string{"{id}": "2", "{name}": "zzt-top"}
	accounts := []account{
		{"advertiser user", false, advUser.do, advOwn, advOther},
		{"advertiser key", false, bearer(advKey), advOwn, advOther},
		{"publisher user", true, pubUser.do, pubOwn, pubOther},
		{"publisher key", true, bearer(pubKey), pubOwn, pubOther},
	}
	srv := web.NewServer(web.Config{}, web.Deps{Now: time.Now, Index: index.New(time.Now), Registry: prometheus.NewRegistry()})
	open := map[string]string{} // route → "advertiser", "publisher" or "any"
	for _, r := range []string{"GET /api/v1/session", "GET /api/v1/reports", "PUT /api/v1/session/password",
		"POST /api/v1/saved-reports", "GET /api/v1/saved-reports", "GET /api/v1/saved-reports/{id}", "PUT /api/v1/saved-reports/{id}",
		"DELETE /api/v1/saved-reports/{id}", "GET /api/v1/saved-reports/{id}/deliveries", "POST /api/v1/saved-reports/{id}/send", "GET /api/v1/settings/report-keys"} {
		open[r] = "any"
	}
	for _, r := range []string{"GET /api/v1/advertisers", "GET /api/v1/advertisers/{id}", "GET /api/v1/advertisers/{id}/stats",
		"GET /api/v1/campaigns", "GET /api/v1/campaigns/{id}", "GET /api/v1/campaigns/{id}/stats", "GET /api/v1/campaigns/{id}/delivery",
		"GET /api/v1/ads", "GET /api/v1/ad/{id}/stats", "GET /api/v1/invoices", "GET /api/v1/invoices/{id}", "POST /api/v1/campaigns/{id}/submit", "POST /api/v1/ad", "PUT /api/v1/ad/{id}", "DELETE /api/v1/ad/{id}",
		"POST /api/v1/campaigns", "PUT /api/v1/campaigns/{id}", "POST /api/v1/assets", "POST /api/v1/advertisers/{id}/conversion-secret",
		"POST /api/v1/conversions", "GET /api/v1/advertisers/{id}/postback-keys", "POST /api/v1/advertisers/{id}/postback-keys", "DELETE /api/v1/advertisers/{id}/postback-keys/{key}",
		"POST /api/v1/ad/{id}/pause", "POST /api/v1/ad/{id}/resume", "POST /api/v1/advertisers/{id}/top-ups", "GET /api/v1/advertisers/{id}/balance",
		"GET /api/v1/creative-preview"} { // a preview frame of its own creatives (it shows what its parent sends)
		open[r] = "advertiser"
	}
	for _, r := range []string{"GET /api/v1/placements", "GET /api/v1/placements/{name}", "GET /api/v1/placements/{name}/stats", "GET /api/v1/sites", "GET /api/v1/sites/{name}", "GET /api/v1/sites/{name}/ads.txt", "POST /api/v1/sites/{name}/ads-txt/check", "GET /api/v1/sites/{name}/quality",
		"GET /api/v1/statements", "GET /api/v1/statements/{id}", "GET /api/v1/bidders/stats"} {
		open[r] = "publisher"
	}
	// What of the others' an answer must not hold: B's names and T's.
	// (A signed token's base64, such as a preview frame's /f/… URL, or a
	// session's random CSRF token, can spell zzt by chance: tokens are
	// left out of the check.)
	token := regexp.MustCompile(`/f/[A-Za-z0-9_-]+`)
	csrf := regexp.MustCompile(`"csrfToken":"[^"]*"`)
	leaks := func(r response) bool {
		b := strings.ToLower(csrf.ReplaceAllString(token.ReplaceAllString(r.body, "/f/TOKEN"), `"csrfToken":""`))
		return r.status < 300 && (strings.Contains(b, "zzb") || strings.Contains(b, "zzt"))
	}
	fill := func(pattern string, names map[string]string) string {
		for k, v := range names {
			pattern = strings.ReplaceAll(pattern, k, v)
		}
		return strings.NewReplacer("{code}", "nosuchcode", "{userKey...}", "u1", "{file}", "x.png", "{asset...}", "x", "{key}", "999999").Replace(pattern)
	}
	for _, r := range srv.Routes() {
		if r.Scope == "" || r.Method+" "+r.Pattern == "DELETE /api/v1/session" {
			continue // public routes answer anyone alike; signing out would end the user's session for the rest
		}
		route := r.Method + " " + r.Pattern
		for _, a := range accounts {
			kind, isOpen := open[route]
			isOpen = isOpen && (kind == "any" || kind == "publisher" == a.publisher)
			other := a.do(r.Method, fill(r.Pattern, a.other), "{}")
			switch {
			case !isOpen && other.status != 403:
				t.Errorf("%s (%s) by the %s = %d %s; want 403 (not open to it)", route, fill(r.Pattern, a.other), a.name, other.status, other.body)
			case isOpen && strings.Contains(r.Pattern, "{") && other.status != 404:
				t.Errorf("%s of the others' (%s) by the %s = %d %s; want 404", route, fill(r.Pattern, a.other), a.name, other.status, other.body)
			case leaks(other):
				t.Errorf("%s by the %s answers the others': %s", route, a.name, other.body)
			}
			if !isOpen || r.Method != "GET" {
				continue
			}
			path := fill(r.Pattern, a.own)
			switch r.Pattern {
			case "/api/v1/reports":
				path += "?by=country"
			case "/api/v1/sites/{name}":
				path = "/api/v1/sites/mysite"
			case "/api/v1/sites/{name}/quality":
				path = "/api/v1/sites/mysite/quality"
			case "/api/v1/statements/{id}":
				path = "/api/v1/statements/3"
			case "/api/v1/sites/{name}/ads.txt", "/api/v1/sites/{name}/ads-txt/check":
				continue // a 409 without -seller-domain; TestSellersJSONAndAdsTxt and TestAdsTxtCheckOnAsk read their own
			case "/api/v1/advertisers/{id}/balance":
				continue // advertiser 1 is invoiced (a 409); TestTopUpByCard reads a prepaid one's by its own account
			}
			own := a.do(r.Method, path, "")
			if own.status != 200 || leaks(own) {
				t.Errorf("%s (%s) by the %s = %d %s; want 200 with its own only\n%s", route, fill(r.Pattern, a.own), a.name, own.status, own.body, in.log.String()[max(0, len(in.log.String())-1500):])
			}
		}
	}

	// Reports of every shape, JSON and CSV: only the account's own; each
	// side reads its own side (an advertiser not where its ads ran, a
	// publisher not whose ads filled its slots).
	for _, a := range accounts {
		mine := []string{"by=advertiser", "by=campaign,country", "by=ad&format=csv", "by=campaign&advertiser=2", "by=device&campaign=2&format=csv"}
		theirs := []string{"by=placement", "by=site,country", "by=campaign&placement=side", "by=country&site=mysite", "by=bidder"}
		if a.publisher {
			mine = []string{"by=site,country,device", "by=placement&format=csv", "by=placement&site=zztsite", "by=country&placement=zzt-top&format=csv", "by=bidder,placement"}
			theirs = []string{"by=advertiser", "by=campaign,placement", "by=ad&format=csv", "by=placement&campaign=1"}
		}
		for _, q := range mine {
			r := a.do("GET", "/api/v1/reports?"+q, "")
			if r.status != 200 || leaks(r) {
				t.Errorf("report %s by the %s = %d %s; want 200 without the others'", q, a.name, r.status, r.body)
			}
		}
		for _, q := range theirs {
			if r := a.do("GET", "/api/v1/reports?"+q, ""); r.status != 400 {
				t.Errorf("report %s by the %s = %d %s; want 400 (the other side's dimensions)", q, a.name, r.status, r.body)
			}
		}
	}
	// The figures: exactly the account's events.
	var mine, onSite int64
	for k, n := range served {
		if k[0] == "1" {
			mine += n
		}
		if k[1] == "side" {
			onSite += n
		}
	}
	for _, a := range accounts {
		r := a.do("GET", "/api/v1/reports?by=country", "")
		var rep struct{ Totals struct{ Impressions int64 } }
		json.Unmarshal([]byte(r.body), &rep)
		want := mine
		if a.publisher {
			want = onSite
		}
		if rep.Totals.Impressions != want {
			t.Errorf("the %s's report counts %d impressions; want its own %d", a.name, rep.Totals.Impressions, want)
		}
	}
	// A bound key holds only what its kind may (an advertiser's: its ads
	// and submissions, never links; a publisher's: reads); an advertiser
	// user needs advertisers.
	for _, body := range []string{`{"name":"x","scopes":["links:write"],"advertisers":[1]}`, `{"name":"x","scopes":["ads:write"],"sites":["mysite"]}`,
		`{"name":"x","scopes":["reports:read"],"advertisers":[1],"sites":["s"]}`,
		`{"name":"x","scopes":["reports:read"],"advertisers":[99]}`} {
		if r := in.admin("POST", "/api/v1/keys", body); r.status != 400 {
			t.Errorf("POST /api/v1/keys %s = %d %s; want 400", body, r.status, r.body)
		}
	}
	for _, body := range []string{`{"email":"x@acme.test","role":"advertiser","password":"a long password"}`,
		`{"email":"x@acme.test","role":"viewer","advertisers":["1"],"password":"a long password"}`,
		`{"email":"x@acme.test","role":"publisher","sites":["mysite"],"advertisers":["1"],"password":"a long password"}`} {
		if r := in.admin("POST", "/api/v1/users", body); r.status != 400 {
			t.Errorf("POST /api/v1/users %s = %d %s; want 400", body, r.status, r.body)
		}
	}
}

// TestBoundAccountsMailOnlyTheirOwn: an advertiser's account schedules a
// report to its own login's address, or to a domain the operator allows
// (-report-mail-domains), but not to an outside address (a 400 naming
// it), nor to more than 5 addresses; it keeps at most 10 saved reports
// (a 409 past them). The team's account is not limited. (An advertiser's
// account scheduled reports to 600 outside addresses in 2 s before.)
func TestBoundAccountsMailOnlyTheirOwn(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-report-mail-domains", "Agency.example")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"Ana@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`), 201, "")
	key, _ := in.keyFrom(`{"name":"acme","scopes":["reports:read"],"advertisers":[1]}`)
	save := func(token string, to ...string) response {
		body := `{"name":"weekly","query":"by=campaign","schedule":{"every":"weekly","to":["` + strings.Join(to, `","`) + `"]}}`
		return in.do("POST", "/api/v1/saved-reports", token, "application/json", body)
	}
	if r := save(key, "someone@outside.example"); r.status != 400 || !strings.Contains(r.body, `"schedule.to[0]"`) {
		t.Errorf("an outside address = %d %s; want 400 naming schedule.to[0]", r.status, r.body)
	}
	if r := save(key, "a@agency.example", "b@agency.example", "c@agency.example", "d@agency.example", "e@agency.example", "f@agency.example"); r.status != 400 || !strings.Contains(r.body, `"schedule.to"`) {
		t.Errorf("six addresses = %d %s; want 400 naming schedule.to", r.status, r.body)
	}
	for i := range 10 {
		if r := save(key, "ana@acme.test", "x@agency.example"); r.status != 201 {
			t.Fatalf("saved report %d to the login's address and the allowed domain = %d %s; want 201", i+1, r.status, r.body)
		}
	}
	if r := save(key, "ana@acme.test"); r.status != 409 {
		t.Errorf("an 11th saved report = %d %s; want 409", r.status, r.body)
	}
	if r := save(in.token, "someone@outside.example"); r.status != 201 {
		t.Errorf("the team's report to any address = %d %s; want 201", r.status, r.body)
	}
}
