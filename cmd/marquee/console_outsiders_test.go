//go:build !noconsole

package main

import (
	"strings"
	"testing"

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
	b.open("#/users", "#user-form")
	if got := b.text("main table"); !strings.Contains(got, "ana@acme.test\tadvertiser\tadvertisers: Acme") {
		t.Errorf("the users = %q; want ana@acme.test as advertiser, seeing Acme", got)
	}

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
	narrow := newTab(t, in.url, 390, 844)
	narrow.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	narrow.signIn("owner@example.com", "owner-password-1")
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
	for _, tb := range []*tab{b, narrow, guest} {
		if errs, _ := tb.logged(); len(errs) > 0 {
			t.Errorf("the console logged errors: %v", errs)
		}
	}
}
