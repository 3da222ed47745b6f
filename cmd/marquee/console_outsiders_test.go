//go:build !noconsole

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleTeamInvitesOutsiders: on the Users page the team adds an
// advertiser login bound to its advertiser without a password — the
// invitation's link is shown (no mail server) — and the list shows its
// role and what it sees, never "owner"; on the Keys page it makes the
// advertiser's postback key (bound, conversions:write; the team's scopes
// disabled while bound), listed with its binding. The invited advertiser
// opens the link in another browser, sets a password and lands signed in
// as the advertiser. Screenshots at 1366 and 390 px.
func TestConsoleTeamInvitesOutsiders(t *testing.T) {
	t.Parallel()
	in, b := ownerConsole(t, 1366, 900)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Globex"}`), 201, "")

	b.open("#/users", "#user-form")
	b.labelled("users")
	if eval[bool](b, `document.querySelector('#advertisers-picker').offsetParent !== null`) {
		t.Errorf("the advertisers picker shows before the advertiser role is chosen")
	}
	b.do("invite an advertiser",
		chromedp.SendKeys(chromedp.CSS("#user-form input[type=email]"), "ana@acme.test"),
		chromedp.SetValue(chromedp.CSS("#user-role"), "advertiser"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#user-role').dispatchEvent(new Event('change'))`),
		chromedp.WaitVisible(chromedp.CSS("#advertisers-picker")),
		click(`#advertisers-picker input[value="1"]`),
		click("#user-form button[type=submit]"),
		chromedp.WaitVisible(chromedp.CSS("#invite-url")))
	link := b.text("#invite-url")
	if !strings.HasPrefix(link, in.url+"/admin/#/invite/") {
		t.Fatalf("the invitation's link = %q; want %s/admin/#/invite/…", link, in.url)
	}
	b.screenshot("users-invite-1366.png")
	if got := b.text("#invite"); !strings.Contains(got, "They will see the advertisers Acme only.") {
		t.Errorf("the invitation's notice = %q; want it to say the login sees Acme only", got)
	}
	// The form is empty again: a second login gets only what is chosen
	// for it (a newcomer's second advertiser login was bound to both).
	if reset := eval[bool](b, `document.querySelector('#user-role').value === 'viewer' && document.querySelector('#user-form input[type=email]').value === '' &&
		![...document.querySelectorAll('#user-form input[type=checkbox]')].some(i => i.checked)`); !reset {
		t.Errorf("after an add, the Users form keeps the last role, email or ticks; want it empty")
	}
	b.do("add a second advertiser's login",
		chromedp.SendKeys(chromedp.CSS("#user-form input[type=email]"), "bo@globex.test"),
		chromedp.SetValue(chromedp.CSS("#user-role"), "advertiser"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#user-role').dispatchEvent(new Event('change'))`),
		chromedp.WaitVisible(chromedp.CSS("#advertisers-picker")),
		click(`#advertisers-picker input[value="2"]`),
		click("#user-form button[type=submit]"),
		chromedp.WaitVisible(chromedp.CSS("#invite-url")))
	b.open("#/users", "#user-form")
	if got := b.text("main table"); !strings.Contains(got, "ana@acme.test\tadvertiser\tadvertisers: Acme") || !strings.Contains(got, "bo@globex.test\tadvertiser\tadvertisers: Globex") {
		t.Errorf("the users = %q; want ana@acme.test seeing Acme, bo@globex.test seeing Globex only", got)
	}
	var users struct {
		Users []struct {
			ID    int64
			Email string
		}
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/users", "").body), &users)
	var anaID string
	for _, u := range users.Users {
		if u.Email == "ana@acme.test" {
			anaID = fmt.Sprint(u.ID)
		}
	}
	b.do("let ana see Globex too",
		click(`button[aria-label="Edit what ana@acme.test sees"]`),
		chromedp.WaitVisible(chromedp.CSS("#sees-"+anaID)),
		click(`#sees-`+anaID+` input[value="2"]`),
		click(`#sees-`+anaID+` ~ button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS("#user-form")))
	eventually(t, 5*time.Second, func() string {
		if got := b.text("main table"); !strings.Contains(got, "ana@acme.test\tadvertiser\tadvertisers: Acme, Globex") {
			return "after the edit, the users = " + got
		}
		return ""
	})
	// A new link for ana: the first stops working; the new one is hers.
	anaRow := `[...document.querySelectorAll('main table tr')].find(r => r.textContent.includes('ana@acme.test')).querySelector('.actions button').click()`
	b.do("send ana a new link", chromedp.Evaluate[chromedp.Void](anaRow), chromedp.Evaluate[chromedp.Void](anaRow), chromedp.WaitVisible(chromedp.CSS("#invite-url")))
	if got := b.text("#invite"); !strings.Contains(got, "They will see the advertisers Acme, Globex only.") {
		t.Errorf("the new link's notice = %q; want it to say ana sees Acme and Globex", got)
	}
	old := link
	link = b.text("#invite-url")
	if link == old || !strings.HasPrefix(link, in.url+"/admin/#/invite/") {
		t.Errorf("the new link = %q (the first %q); want another invitation link", link, old)
	}
	if r := in.admin("GET", "/api/v1/audit?entity=user", ""); !strings.Contains(r.body, `"action":"invite"`) || !strings.Contains(r.body, `"fields":["advertisers"]`) {
		t.Errorf("the users' audit = %s; want the new link (invite) and the bounds' edit", r.body)
	}
	b.open("#/users", "#user-form")

	b.open("#/keys", "#key-form")
	b.labelled("keys")
	b.do("make the advertiser's postback key",
		chromedp.SendKeys(chromedp.CSS("#key-form input[type=text]"), "acme postback"),
		chromedp.SetValue(chromedp.CSS("#key-bound"), "advertisers"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#key-bound').dispatchEvent(new Event('change'))`),
		chromedp.WaitVisible(chromedp.CSS("#advertisers-picker")),
		click(`#advertisers-picker input[value="1"]`))
	if disabled := eval[bool](b, `document.querySelector('#key-form input[value="keys:admin"]').disabled && !document.querySelector('#key-form input[value="conversions:write"]').disabled`); !disabled {
		t.Errorf("a key bound to advertisers may hold keys:admin in the form; want it disabled, conversions:write enabled")
	}
	b.do("create it", click(`#key-form input[value="conversions:write"]`), click("#key-form button[type=submit]"), chromedp.WaitVisible(chromedp.CSS("#key-secret")))
	b.open("#/keys", "#key-form")
	if got := b.text("main table"); !strings.Contains(got, "acme postback") || !strings.Contains(got, "conversions:write\tadvertisers: Acme") {
		t.Errorf("the keys = %q; want the postback key with conversions:write, seeing Acme", got)
	}
	narrow := signedInTab(t, in, 390, 844, "owner@example.com", "owner-password-1")
	narrow.open("#/users", "#user-form")
	narrow.screenshot("users-390.png")
	narrow.open("#/keys", "#key-form")
	narrow.screenshot("keys-390.png")

	guest := newTab(t, in.url, 1366, 900)
	guest.do("open the invitation", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#invitation")))
	guest.labelled("invitation")
	guest.do("set a password",
		chromedp.SendKeys(chromedp.CSS("#invitation input[autocomplete=new-password]"), "ana's own password"),
		chromedp.SendKeys(chromedp.CSS(`#invitation .field:nth-of-type(2) input`), "ana's own password"),
		click("#invitation button[type=submit]"),
		chromedp.WaitVisible(chromedp.CSS("#nav a")))
	if role := eval[string](guest, `fetch('/api/v1/session').then(r => r.json()).then(s => s.user.role + ' ' + s.user.email)`); role != "advertiser ana@acme.test" {
		t.Errorf("after the invitation: signed in as %q; want the advertiser ana@acme.test", role)
	}
	b.clean("the team")
	narrow.clean("the team (390 px)")
	guest.clean("the invited advertiser")
}

// TestConsoleAdvertiserWorkspace: an advertiser's login, in the console
// by itself — its home, campaigns, a new draft campaign (no team field
// offered), a new ad with an uploaded image (pending), the submission,
// its reports and invoice, its conversion secret and postback key — and
// no page of its asks for what answers 403. Screenshots at 1366 and 390
// px.
func TestConsoleAdvertiserWorkspace(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil)
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme","budget":{"total":500}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Globex"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Running",` + flight + `,"priority":"sponsorship","weight":7,"labels":[{"name":"secret-label"}],"price":{"model":"cpm","amount":2}}`)
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"ana@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`), 201, "")
	today := time.Now().UTC().Truncate(24 * time.Hour)
	in.expect(in.admin("POST", "/api/v1/invoices", `{"advertiserId":"1","from":"`+today.Add(-24*time.Hour).Format(time.RFC3339)+`","to":"`+today.Format(time.RFC3339)+`"}`), 201, "")

	b := signedInTab(t, in, 1366, 900, "ana@acme.test", "advertiser password")
	b.screenshot("advertiser-home-1366.png")
	b.open("#/campaigns/1", "main h1")
	page := b.text("main")
	for _, internal := range []string{"secret-label", "Weight", "Tier", "decisions (this instance)"} {
		if strings.Contains(page, internal) {
			t.Errorf("the advertiser's campaign page shows the team's %q: %s", internal, page)
		}
	}

	b.open("#/campaigns/new", "#campaign-form")
	b.labelled("the advertiser's campaign editor")
	for _, sel := range []string{"#labels", "#exclusive-labels", "#max-per-page", "#check-availability"} {
		b.absent(sel, "the advertiser's campaign editor")
	}
	b.do("draft a campaign",
		chromedp.SendKeys(chromedp.CSS("#campaign-name"), "Spring"),
		click("#campaign-form button[type=submit]"))
	b.waitHash(`^#/campaigns/\d+$`)
	id := strings.TrimPrefix(b.hash(), "#/campaigns/")
	if r := in.admin("GET", "/api/v1/campaigns/"+id, ""); !strings.Contains(r.body, `"state":"draft"`) || !strings.Contains(r.body, `"advertiserId":"1"`) {
		t.Fatalf("the advertiser's draft = %s", r.body)
	}

	// An ad with an uploaded image, in the draft.
	b.open("#/ads/new?campaign="+id, "#ad-form")
	b.labelled("the advertiser's ad editor")
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 300, 250)))
	file := filepath.Join(t.TempDir(), "banner.png")
	os.WriteFile(file, img.Bytes(), 0o644)
	b.do("add an image ad",
		chromedp.SendKeys(chromedp.CSS(`[data-field="title"] input`), "Banner"),
		chromedp.SetValue(chromedp.CSS(`#creative select[aria-label="Creative type"]`), "image"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#creative select').dispatchEvent(new Event('change'))`),
		chromedp.SetUploadFiles(chromedp.CSS("#creative-file"), []string{file}),
		chromedp.WaitVisible(chromedp.CSS(`#creative-preview img[src^="/assets/"]`)),
		chromedp.SendKeys(chromedp.CSS(`#creative input[data-k="clickUrl"]`), "https://acme.test/spring"),
		click("#ad-form button[type=submit]"))
	// Saved: the ad's page, or its editor with a warning when the editor's
	// default end fell a second after the draft's (opened a second before).
	b.waitHash(`^#/ads/\d+(/edit)?$`)
	if r := in.admin("GET", "/api/v1/ads?campaignId="+id, ""); !strings.Contains(r.body, `"state":"pending"`) || !strings.Contains(r.body, "/assets/") {
		t.Errorf("the advertiser's ad = %s; want it pending, with the uploaded image", r.body)
	}
	b.open("#/campaigns/"+id, "#submit")
	b.do("submit it", click("#submit"))
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/campaigns/"+id, ""); !strings.Contains(r.body, `"state":"pending"`) {
			return "not submitted: " + r.body
		}
		return ""
	})

	// The team's approvals queue shows the ad as it will render; once
	// approved and changed by the advertiser, what changed.
	team := signedInTab(t, in, 1366, 900, "owner@example.com", "owner-password-1")
	team.open("#/approvals", `.approval-creative img[src^="/assets/"]`)
	if got := team.text("main"); !strings.Contains(got, "new: never approved") {
		t.Errorf("the approvals queue = %q; want the new ad marked never approved", got)
	}
	team.screenshot("approvals-1366.png")
	in.expect(in.admin("POST", "/api/v1/campaigns/"+id+"/approve", ""), 200, "")
	var pendingAds struct{ Items []struct{ ID string } }
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/ads?approval=pending", "").body), &pendingAds)
	if len(pendingAds.Items) != 1 {
		t.Fatalf("pending ads = %+v; want the advertiser's one", pendingAds.Items)
	}
	adID := pendingAds.Items[0].ID
	in.expect(in.admin("POST", "/api/v1/ad/"+adID+"/approve", ""), 200, "")
	b.open("#/ads/"+adID+"/edit", "#ad-form")
	b.do("change the approved ad's click URL",
		chromedp.SetValue(chromedp.CSS(`#creative input[data-k="clickUrl"]`), "https://acme.test/sale"),
		click("#ad-form button[type=submit]"))
	eventually(t, 5*time.Second, func() string { // saved (the editor stays open when it warns)
		if r := in.admin("GET", "/api/v1/ads?approval=pending", ""); !strings.Contains(r.body, "https://acme.test/sale") {
			return "the change is not saved: " + r.body
		}
		return ""
	})
	team.open("#/approvals", ".changes")
	if got := team.text(".changes"); !strings.Contains(got, "creative clickUrl (was https://acme.test/spring)") {
		t.Errorf("the changed ad in the approvals queue = %q; want its click URL's change named", got)
	}

	b.open("#/reports", "main h1")
	b.open("#/invoices", "main table")
	b.open("#/advertisers/1", "#conversion-secret")
	b.do("make a postback key", click("#new-postback-key"), chromedp.WaitVisible(chromedp.CSS("#postback-secret")))
	key := b.text("#postback-secret")
	if r := in.do("POST", "/api/v1/conversions", key, "application/json", `{}`); r.status != 400 {
		t.Errorf("a postback with the advertiser's new key = %d %s; want it let through to the body's check (400)", r.status, r.body)
	}
	if r := in.do("GET", "/api/v1/campaigns", key, "", ""); r.status != 403 {
		t.Errorf("the postback key reading campaigns = %d; want 403 (conversions:write only)", r.status)
	}
	b.screenshot("advertiser-account-1366.png")
	narrow := signedInTab(t, in, 390, 844, "ana@acme.test", "advertiser password")
	narrow.screenshot("advertiser-home-390.png")
	narrow.open("#/campaigns/"+id, "main h1")
	narrow.screenshot("advertiser-campaign-390.png")
	b.clean("the advertiser")
	narrow.clean("the advertiser (390 px)")
	team.clean("the team")
}

// TestConsolePublisherWorkspace: a publisher's login sees its placements
// with their tag snippets, its net revenue (its share of what their ads
// earned), people's requests and fill, its header-bidding bidders and its
// statement — and none of its pages asks for what answers 403.
// Screenshots at 1366 and 390 px.
func TestConsolePublisherWorkspace(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"news","revenueShare":0.6}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"news-top","site":"news"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"other-top","site":"other"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"cpm",` + flight + `,"price":{"model":"cpm","amount":1000}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	// Two requests, one filled and shown: $1 earned, $0.60 the publisher's.
	var d struct{ Decisions map[string][]decision }
	r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"news-top"}]}`)
	if json.Unmarshal([]byte(r.body), &d); len(d.Decisions["d"]) != 1 {
		t.Fatalf("decision = %d %s", r.status, r.body)
	}
	fire(t, d.Decisions["d"][0].ImpressionURL)
	in.expect(in.admin("PUT", "/api/v1/campaigns/1", `{"advertiserId":"1","name":"cpm",`+flight+`,"price":{"model":"cpm","amount":1000},"conditions":[{"country":["TW"]}]}`), 200, "")
	// The second request: no campaign fits; a header-bidding bid fills it.
	r = in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"news-top","bids":[{"bidder":"appnexus","cpm":5,"adId":"pb1"}]}]}`)
	if json.Unmarshal([]byte(r.body), &d); len(d.Decisions["d"]) != 1 {
		t.Fatalf("the bid's decision = %d %s", r.status, r.body)
	}
	fire(t, d.Decisions["d"][0].ImpressionURL)
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/reports?by=placement&granularity=total", ""); !strings.Contains(r.body, `"requests":2`) || !strings.Contains(r.body, `"impressions":2`) {
			return "the report: " + r.body
		}
		if r := in.admin("GET", "/api/v1/bidders/stats", ""); !strings.Contains(r.body, `"bidder":"appnexus","bids":1,"wins":1,"winRate":1,"impressions":1`) {
			return "the bidders: " + r.body
		}
		return ""
	})
	today := time.Now().UTC().Truncate(24 * time.Hour)
	in.expect(in.admin("POST", "/api/v1/statements", `{"site":"news","from":"`+today.Format(time.RFC3339)+`","to":"`+today.Add(24*time.Hour).Format(time.RFC3339)+`"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"pub@news.test","role":"publisher","sites":["news"],"password":"publisher password"}`), 201, "")

	b := signedInTab(t, in, 1366, 900, "pub@news.test", "publisher password")
	b.do("the home's figures", chromedp.WaitVisible(chromedp.CSS(`[data-kpi="revenue"]`)))
	for kpi, want := range map[string]string{"requests": "2", "filled": "2", "fill-rate": "100", "revenue": "0.60"} {
		if got := b.text(`[data-kpi="` + kpi + `"] .v`); !strings.Contains(got, want) {
			t.Errorf("the publisher's %s = %q; want %s", kpi, got, want)
		}
	}
	if got := b.text("main"); strings.Contains(got, "other-top") || strings.Contains(got, "Acme") {
		t.Errorf("the publisher's home shows another site's placement or an advertiser: %s", got)
	}
	b.screenshot("publisher-home-1366.png")
	b.open("#/placements/news-top", "#tag-snippet")
	b.open("#/bidders", "#bidders")
	if got := b.text("#bidders table"); !strings.Contains(got, "news-top\tappnexus\t1\t1\t100") {
		t.Errorf("the publisher's bidders = %q; want appnexus on news-top, 1 bid, 1 win", got)
	}
	b.open("#/reports?by=bidder,placement&granularity=total", "#report-table table")
	if head, got := b.text("#report-table thead"), b.text("#report-table tbody"); !strings.Contains(head, "Win rate") || !strings.Contains(got, "appnexus\t") || !strings.Contains(got, "news-top") {
		t.Errorf("the publisher's report by bidder = %q under %q; want appnexus on news-top with its win rate", got, head)
	}
	b.open("#/statements", "main table")
	if got := b.text("main table"); !strings.Contains(got, "news") {
		t.Errorf("the publisher's statements = %q; want its site's", got)
	}
	// The team's overview agrees with the reports: the ad's impression and
	// the bid's.
	team := signedInTab(t, in, 1366, 900, "owner@example.com", "owner-password-1")
	team.do("the overview", chromedp.WaitVisible(chromedp.CSS(`#bid-impressions`)))
	if got := team.text(`[data-kpi="impressions"] .v`); got != "2" {
		t.Errorf("the overview's impressions = %q; want 2, as the reports (the ad's and the bid's)", got)
	}
	narrow := signedInTab(t, in, 390, 844, "pub@news.test", "publisher password")
	narrow.do("the home", chromedp.WaitVisible(chromedp.CSS(`[data-kpi="revenue"]`)))
	narrow.screenshot("publisher-home-390.png")
	b.clean("the publisher")
	narrow.clean("the publisher (390 px)")
	team.clean("the team")
}

// TestConsoleReports: the reports page as ad operations read it — a
// column picker that remembers, days as dates, "—" for a ratio without
// its denominator (eCPC with no click) — and saved reports described in
// words, with their send time and a "Send now" that mails the report.
func TestConsoleReports(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	box, addr := startMailbox(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-reports-flush", "100ms", "-smtp", "smtp://"+addr+"?tls=none", "-smtp-from", "reports@marquee.test")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Spring",` + flight + `,"price":{"model":"cpm","amount":2}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	var d struct{ Decisions map[string][]decision }
	r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`)
	if json.Unmarshal([]byte(r.body), &d); len(d.Decisions["d"]) != 1 {
		t.Fatalf("decision = %d %s", r.status, r.body)
	}
	fire(t, d.Decisions["d"][0].ImpressionURL)
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/reports?by=campaign&granularity=total", ""); !strings.Contains(r.body, `"impressions":1`) {
			return "the report: " + r.body
		}
		return ""
	})

	b := signedInTab(t, in, 1366, 900, "owner@example.com", "owner-password-1")
	b.open("#/reports?by=campaign&granularity=day", "#report-table table")
	head := b.text("#report-table thead")
	cells := eval[[]string](b, `[...document.querySelectorAll('#report-table tbody tr:first-child td')].map(td => td.textContent)`)
	if !strings.Contains(head, "Day") || len(cells) == 0 || regexp.MustCompile(`\dT\d|\d:\d\d`).MatchString(cells[0]) || !regexp.MustCompile(`\d{4}`).MatchString(cells[0]) {
		t.Errorf("a day's row = %q under %q; want a date, not a timestamp", cells, head)
	}
	b.do("show eCPC, hide Spend", click(`#column-picker summary`), click(`#column-picker input[value="ecpc"]`))
	b.do("the table again", chromedp.WaitVisible(chromedp.CSS(`#report-table table`)))
	b.do("hide Spend", click(`#column-picker summary`), click(`#column-picker input[value="spend"]`))
	b.open("#/reports?by=campaign&granularity=total", "#report-table table") // a new page: the choice is remembered
	head = b.text("#report-table thead")
	if !strings.Contains(head, "eCPC") || strings.Contains(head, "Spend") {
		t.Errorf("the columns after the picker = %q; want eCPC shown and Spend hidden, remembered", head)
	}
	ecpc := eval[string](b, `(() => { const i = [...document.querySelectorAll('#report-table thead th')].findIndex(th => th.textContent.startsWith('eCPC')); return document.querySelector('#report-table tbody tr').children[i].textContent; })()`)
	if ecpc != "—" {
		t.Errorf("eCPC with no click = %q; want —", ecpc)
	}

	b.do("save a report emailed every day at 09:30",
		chromedp.SendKeys(chromedp.CSS(`#save-report input[name=name]`), "Spring daily"),
		chromedp.SetValue(chromedp.CSS(`#save-report select[name=every]`), "daily"),
		chromedp.SetValue(chromedp.CSS(`#save-report input[name=at]`), "09:30"),
		chromedp.SendKeys(chromedp.CSS(`#save-report input[name=to]`), "ana@example.com"),
		click(`#save-report button`),
		chromedp.WaitVisible(chromedp.CSS(`[data-send]`)))
	saved := b.text("#saved-reports")
	for _, want := range []string{"By campaign, in total", "Every day at 09:30", "ana@example.com"} {
		if !strings.Contains(saved, want) {
			t.Errorf("the saved reports = %q; lack %q", saved, want)
		}
	}
	b.do("send it now", click(`[data-send]`))
	eventually(t, 10*time.Second, func() string {
		if got := b.text("#saved-reports"); !strings.Contains(got, "Sent.") {
			return "after Send now: " + got
		}
		box.mu.Lock()
		defer box.mu.Unlock()
		if len(box.msgs) == 0 {
			return "no mail"
		}
		return ""
	})

	// Key-value reports chosen here, without a restart: a bad key is
	// named beside the field; a good one becomes a dimension, and the
	// next decision's events are counted by it.
	b.do("choose a bad report key", chromedp.SetValue(chromedp.CSS(`#report-keys input[name=keys]`), "section, Bad key"), click(`#report-keys button`),
		chromedp.WaitVisible(chromedp.CSS(`#report-keys .problem`)))
	if got := b.text("#report-keys .problem"); !strings.Contains(got, `"Bad key" is not a key`) {
		t.Errorf("the problem of a bad key = %q", got)
	}
	b.do("choose section", chromedp.SetValue(chromedp.CSS(`#report-keys input[name=keys]`), "section"), click(`#report-keys button`),
		chromedp.WaitReady(chromedp.CSS(`select[name=by0] option[value="kv.section"]`)))
	r = in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}],"kv":{"section":"sports"}}`)
	if json.Unmarshal([]byte(r.body), &d); len(d.Decisions["d"]) != 1 {
		t.Fatalf("decision = %d %s", r.status, r.body)
	}
	fire(t, d.Decisions["d"][0].ImpressionURL)
	eventually(t, 30*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/reports?by=kv.section&granularity=total", ""); !strings.Contains(r.body, `"value":"sports"`) {
			return "the report by kv.section: " + r.body
		}
		return ""
	})
	b.open("#/reports?by=kv.section&granularity=total", "#report-table table")
	if got := b.text("#report-table tbody"); !strings.Contains(got, "sports") {
		t.Errorf("the console's report by kv.section = %q; want sports", got)
	}
	b.screenshot("reports-1366.png")
	b.clean("the team")
}

// TestConsolePreviewsAPage: the preview decides a whole page — an
// all-or-none roadblock over two placements fills both when both are on
// the page and neither when one is missing — and a chosen time honestly:
// a budgeted campaign two days ahead is chosen, not "budget unknown".
func TestConsolePreviewsAPage(t *testing.T) {
	t.Parallel()
	in, b := ownerConsole(t, 1366, 900)
	flight := flightJSON(-time.Hour, 7*24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"top"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Takeover",` + flight + `,"priority":"sponsorship","roadblock":"all-or-none","budget":{"daily":100},"price":{"model":"cpm","amount":2}}`)
	for _, pl := range []string{"side", "top"} {
		in.expect(in.admin("POST", "/api/v1/ad", `{"title":"`+pl+`",`+flight+`,"campaignId":"1","placements":["`+pl+`"],"creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	}
	preview := func(placements []string, at string) string {
		t.Helper()
		b.open("#/decisions", "#preview-form")
		js := `document.querySelectorAll('#preview-placements input').forEach(i => i.checked = ` + jsString(strings.Join(placements, ",")) + `.split(',').includes(i.value))`
		steps := []chromedp.Action[chromedp.Void]{chromedp.Evaluate[chromedp.Void](js)}
		if at != "" {
			steps = append(steps, chromedp.SetValue(chromedp.ID("preview-at"), at))
		}
		steps = append(steps, click(`#preview-form button[type=submit]`), chromedp.WaitVisible(chromedp.CSS(`#preview-result .preview-slot`)))
		b.do("preview "+strings.Join(placements, "+"), steps...)
		return b.text("#preview-result")
	}
	if got := preview([]string{"side", "top"}, ""); !strings.Contains(got, "side: ad 1 of Takeover") || !strings.Contains(got, "top: ad 2 of Takeover") {
		t.Errorf("the page of side and top = %q; want the roadblock in both", got)
	}
	if got := preview([]string{"side"}, ""); !strings.Contains(got, "side: nothing fills this slot") {
		t.Errorf("a page of side alone = %q; want the all-or-none roadblock out (nothing else fills it)", got)
	}
	later := time.Now().Add(48 * time.Hour).Format("2006-01-02T15:04")
	if got := preview([]string{"side", "top"}, later); !strings.Contains(got, "side: ad 1 of Takeover") || strings.Contains(got, "budget unknown") {
		t.Errorf("the page two days ahead = %q; want the healthy budgeted roadblock chosen, not budget unknown", got)
	}
	b.clean("the team")
}

// TestConsoleWaitsForASlowStore: a read the server answers 503 with
// Retry-After (its store did not answer in time) is asked again when it
// says, and the page shows its figures, not the error.
func TestConsoleWaitsForASlowStore(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil)
	target, err := url.Parse(in.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var refused atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" && r.URL.Path == "/api/v1/stats" && refused.Add(1) <= 2 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"the store did not answer in time; retry later"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	b := newTab(t, front.URL, 1280, 900)
	b.do("open the console", chromedp.Navigate(front.URL+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")
	b.do("the overview, after the refusals", chromedp.WaitVisible(chromedp.CSS(`[data-kpi="impressions"]`)))
	if n := refused.Load(); n < 3 {
		t.Errorf("the overview's reads of /api/v1/stats = %d; want the 2 refused asked again", n)
	}
	if got := b.text("main"); strings.Contains(got, "did not answer") {
		t.Errorf("the overview shows the refusal: %s", got)
	}
}
