//go:build !noconsole

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestApprovalQueueInBrowser: an advertiser's user submits its draft from
// the console and sees no way to approve it; the owner's approval queue
// lists it, rejects it with a reason the advertiser then reads, and
// approves it once submitted again.
func TestApprovalQueueInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil)
	now := time.Now().UTC()
	flight := flightJSON(-time.Hour, 24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/campaigns", `{"advertiserId":"1","name":"Spring",`+flight+`}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"adv@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`), 201, "")
	state := func() (string, string) {
		var c struct {
			State  string
			Review struct{ Reason string }
		}
		json.Unmarshal([]byte(in.admin("GET", "/api/v1/campaigns/1", "").body), &c)
		return c.State, c.Review.Reason
	}

	adv := newTab(t, in.url, 1280, 900)
	adv.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	adv.signIn("adv@acme.test", "advertiser password")
	adv.open("#/campaigns/1", "#submit")
	adv.absent("#approve", "an advertiser's user cannot approve")
	adv.do("its draft is its to edit", chromedp.WaitVisible(chromedp.CSS("#edit")))
	adv.do("submit", click("#submit"), chromedp.WaitVisible(chromedp.CSS("#approval p.muted")))
	adv.absent("#edit", "an advertiser's user cannot edit a campaign under review")
	if s, _ := state(); s != "pending" {
		t.Fatalf("after the advertiser's submission the campaign is %s; want pending", s)
	}

	owner := newTab(t, in.url, 1280, 900)
	owner.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	owner.signIn("owner@example.com", "owner-password-1")
	owner.open("#/approvals", "form.reject")
	owner.labelled("approval queue")
	if txt := owner.text("main table"); !strings.Contains(txt, "Spring") || !strings.Contains(txt, "adv@acme.test") {
		t.Errorf("the queue says %q; want Spring, submitted by adv@acme.test", txt)
	}
	owner.do("reject with a reason", chromedp.SendKeys(chromedp.CSS("form.reject input"), "the flight starts before the IO"),
		click("form.reject button"), chromedp.WaitNotPresent(chromedp.CSS("form.reject")))
	if s, reason := state(); s != "draft" || reason != "the flight starts before the IO" {
		t.Fatalf("after the rejection the campaign is %s (%q); want a draft with the reason", s, reason)
	}

	adv.open("#/campaigns/1", "#submit")
	if txt := adv.text("dl.facts"); !strings.Contains(txt, "rejected by user:") || !strings.Contains(txt, "the flight starts before the IO") {
		t.Errorf("the advertiser's page says %q; want the rejection and its reason", txt)
	}
	adv.do("submit again", click("#submit"), chromedp.WaitVisible(chromedp.CSS("#approval p.muted")))
	owner.open("#/approvals", `button[data-id="1"]`)
	owner.do("approve", click(`button[data-id="1"]`), chromedp.WaitNotPresent(chromedp.CSS(`button[data-id="1"]`)))
	if s, _ := state(); s != "active" {
		t.Fatalf("after the approval the campaign is %s; want active", s)
	}

	// The advertiser's creative waits in the queue too; approved there.
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"top"}`), 201, "")
	advAPI := in.signIn(t, `{"email":"adv@acme.test","password":"advertiser password"}`)
	if r := advAPI.do("POST", "/api/v1/ad", `{"title":"Spring banner","startAt":"`+now.Add(-time.Hour).Format(time.RFC3339)+`","endAt":"`+
		now.Add(24*time.Hour).Format(time.RFC3339)+`","campaignId":"1","placements":["top"],"creative":{"type":"native","title":"Spring","clickUrl":"https://acme.test/"}}`); r.status != 201 {
		t.Fatalf("the advertiser's creative = %d %s", r.status, r.body)
	}
	owner.open("#/approvals", `button[data-ad="1"]`)
	owner.do("approve the creative", click(`button[data-ad="1"]`), chromedp.WaitNotPresent(chromedp.CSS(`button[data-ad="1"]`)))
	if r := in.get("/api/v1/ad/1"); !strings.Contains(r.body, `"state":"active"`) {
		t.Errorf("the creative after its approval = %s", r.body)
	}
}
