package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Tests of trafficking's approval (docs/api.md#approval): a campaign is a
// draft when created, pending once submitted, and serves only once
// approved — on every instance.

// TestApprovalServesOnlyApproved: two instances on one database. A draft
// and then a pending sponsorship campaign never serve on either (the
// house campaign fills every slot); once approved on one instance, both
// serve it (a sponsorship always wins) within the propagation bound.
func TestApprovalServesOnlyApproved(t *testing.T) {
	t.Parallel()
	eachShared(t, testApprovalServesOnlyApproved)
}

func testApprovalServesOnlyApproved(t *testing.T, db sharedDB, dsn string) {
	a, b := db.start(t, dsn), db.start(t, dsn)
	flight := flightJSON(-time.Hour, 24*time.Hour)
	a.expect(a.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	a.expect(a.admin("POST", "/api/v1/placements", `{"name":"top"}`), 201, "")
	house := a.campaign(`{"advertiserId":"1","name":"House",` + flight + `,"priority":"house"}`)
	r := a.admin("POST", "/api/v1/campaigns", `{"advertiserId":"1","name":"Sponsor",`+flight+`,"priority":"sponsorship"}`)
	var sponsor struct{ ID, State string }
	if json.Unmarshal([]byte(r.body), &sponsor); r.status != 201 || sponsor.State != "draft" {
		t.Fatalf("create = %d %s; want 201 with a draft", r.status, r.body)
	}
	for _, c := range []string{house, sponsor.ID} {
		a.expect(a.admin("POST", "/api/v1/ad", `{"title":"ad of `+c+`",`+flight+`,"campaignId":"`+c+`","placements":["top"],"creative":{"type":"native","title":"t"}}`), 201, "")
	}
	// decide answers the campaign an instance chose, or what it answered.
	decide := func(in *instance) string {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"top"}]}`)
		var got struct {
			Decisions map[string][]struct{ CampaignID string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["d"]) != 1 {
			return fmt.Sprintf("%d %s", r.status, r.body)
		}
		return got.Decisions["d"][0].CampaignID
	}
	never := func(state string) {
		// The placement and the house campaign's ad reach instance b first:
		// then a decision that could serve the sponsor would.
		eventually(t, time.Second, func() string {
			if got := decide(b); got != house {
				return "instance b answers " + got + "; want the house campaign"
			}
			return ""
		})
		for i := range 200 {
			if got := decide([]*instance{a, b}[i%2]); got != house {
				t.Fatalf("a %s campaign served (decision %d chose campaign %s; want the house campaign %s)", state, i, got, house)
			}
		}
	}
	never("draft")
	a.expect(a.admin("POST", "/api/v1/campaigns/"+sponsor.ID+"/submit", ""), 200, "")
	never("pending")
	a.expect(a.admin("POST", "/api/v1/campaigns/"+sponsor.ID+"/approve", ""), 200, "")
	if got := decide(a); got != sponsor.ID {
		t.Fatalf("the approving instance chose campaign %s right after; want the sponsor %s (read-your-writes)", got, sponsor.ID)
	}
	eventually(t, time.Second, func() string {
		if got := decide(b); got != sponsor.ID {
			return "instance b chose campaign " + got + "; want the approved sponsor " + sponsor.ID
		}
		return ""
	})
}

// TestApprovalMatrix: who may submit, approve and reject a campaign, by
// role and by key — an advertiser's own account submits its campaigns
// and never approves or rejects; an editor submits and never approves; a
// refused action leaves the state as it was; every move is in the audit
// log with its actor.
func TestApprovalMatrix(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, 24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Other"}`), 201, "")
	users := map[string]*browser{}
	for _, u := range []struct{ role, extra string }{{"admin", ""}, {"editor", ""}, {"viewer", ""},
		{"advertiser", `,"advertisers":["1"]`}, {"publisher", `,"sites":["s"]`}} {
		in.expect(in.admin("POST", "/api/v1/users", `{"email":"`+u.role+`@example.com","role":"`+u.role+`","password":"a long password"`+u.extra+`}`), 201, "")
		users[u.role] = in.signIn(t, `{"email":"`+u.role+`@example.com","password":"a long password"}`)
	}
	key := func(body string) string { k, _ := in.keyFrom(body); return k }
	keys := map[string]string{
		"advertiser key": key(`{"name":"acme","scopes":["campaigns:read","campaigns:submit"],"advertisers":[1]}`),
		"writer key":     key(`{"name":"writer","scopes":["campaigns:write"]}`),
		"approver key":   key(`{"name":"approver","scopes":["campaigns:approve"]}`),
	}
	as := func(who string) func(method, path, body string) response {
		if who == "token" {
			return in.admin
		}
		if b, ok := users[who]; ok {
			return b.do
		}
		return func(method, path, body string) response {
			return in.do(method, path, keys[who], "application/json", body)
		}
	}
	// A campaign of advertiser adv in state (draft or pending), made by the
	// admin token.
	n := 0
	campaign := func(adv, state string) string {
		n++
		r := in.admin("POST", "/api/v1/campaigns", fmt.Sprintf(`{"advertiserId":"%s","name":"c%d",%s}`, adv, n, flight))
		var c struct{ ID string }
		if json.Unmarshal([]byte(r.body), &c); r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		if state == "pending" {
			in.expect(in.admin("POST", "/api/v1/campaigns/"+c.ID+"/submit", ""), 200, "")
		}
		return c.ID
	}
	stateOf := func(id string) string {
		var c struct{ State string }
		json.Unmarshal([]byte(in.admin("GET", "/api/v1/campaigns/"+id, "").body), &c)
		return c.State
	}
	type cell struct {
		who              string
		submit, approve  int // status on advertiser 1's campaign
		reject           int
		submitOtherOwner int // submit of advertiser 2's
	}
	for _, c := range []cell{
		{"token", 200, 200, 200, 200},
		{"admin", 200, 200, 200, 200},
		{"editor", 200, 403, 403, 200},
		{"viewer", 403, 403, 403, 403},
		{"advertiser", 200, 403, 403, 404}, // another advertiser's campaign is not found to it
		{"advertiser key", 200, 403, 403, 404},
		{"publisher", 403, 403, 403, 403},
		{"writer key", 403, 403, 403, 403},
		{"approver key", 403, 200, 200, 403},
	} {
		for _, step := range []struct {
			action, adv, from, to string
			want                  int
		}{{"submit", "1", "draft", "pending", c.submit}, {"submit", "2", "draft", "pending", c.submitOtherOwner},
			{"approve", "1", "pending", "active", c.approve}, {"reject", "1", "pending", "draft", c.reject}} {
			id := campaign(step.adv, step.from)
			r := as(c.who)("POST", "/api/v1/campaigns/"+id+"/"+step.action, `{"reason":"not this week"}`)
			want := step.from
			if step.want == 200 {
				want = step.to
			}
			if r.status != step.want || stateOf(id) != want {
				t.Errorf("%s by %s of advertiser %s's %s campaign = %d %s (now %s); want %d, %s", step.action, c.who, step.adv, step.from,
					r.status, r.body, stateOf(id), step.want, want)
			}
			if step.want == 403 && step.action != "submit" && !strings.Contains(r.body, "campaigns:approve") && !strings.Contains(r.body, "not open") {
				t.Errorf("%s by %s = %s; want the missing scope named", step.action, c.who, r.body)
			}
		}
	}
	// The audit log: the advertiser's submission, the admin's approval.
	id := campaign("1", "draft")
	users["advertiser"].do("POST", "/api/v1/campaigns/"+id+"/submit", "")
	users["admin"].do("POST", "/api/v1/campaigns/"+id+"/approve", "")
	r := in.admin("GET", "/api/v1/audit?entity=campaign&limit=2", "")
	var log struct {
		Entries []struct{ Actor, Action, EntityID string }
	}
	if json.Unmarshal([]byte(r.body), &log); len(log.Entries) != 2 || log.Entries[0].Action != "approve" || !strings.Contains(log.Entries[0].Actor, "admin@example.com") ||
		log.Entries[1].Action != "submit" || !strings.Contains(log.Entries[1].Actor, "advertiser@example.com") || log.Entries[0].EntityID != id {
		t.Errorf("audit = %s; want the admin's approval of %s after the advertiser's submission", r.body, id)
	}
}

// TestAdApproval: an advertiser's user writes a creative in its own
// campaign (never another's): it waits for approval and never serves;
// rejected with a reason, it is a draft the advertiser reads; changed by
// the advertiser, it waits again; approved, it serves. The advertiser
// cannot approve; the team's own ads need no approval.
func TestAdApproval(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, 24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Other"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"top"}`), 201, "")
	acme := in.campaign(`{"advertiserId":"1","name":"Acme spring",` + flight + `,"priority":"sponsorship"}`)
	other := in.campaign(`{"advertiserId":"2","name":"Other",` + flight + `,"priority":"house"}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"house",`+flight+`,"campaignId":"`+other+`","placements":["top"],"creative":{"type":"native","title":"h","clickUrl":"https://other.test/"}}`), 201, `{"id":"1"}`)
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"adv@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`), 201, "")
	adv := in.signIn(t, `{"email":"adv@acme.test","password":"advertiser password"}`)

	body := `{"title":"Acme banner",` + flight + `,"campaignId":"` + acme + `","placements":["top"],"creative":{"type":"native","title":"Acme"}}`
	for _, bad := range []string{strings.Replace(body, `"campaignId":"`+acme+`"`, `"campaignId":"`+other+`"`, 1), strings.Replace(body, `"campaignId":"`+acme+`",`, "", 1)} {
		if r := adv.do("POST", "/api/v1/ad", bad); r.status != 400 || !strings.Contains(r.body, `"campaignId":"must be one of your campaigns`) {
			t.Errorf("an advertiser's ad outside its campaigns = %d %s; want 400 naming campaignId", r.status, r.body)
		}
	}
	trusted := strings.Replace(body, `"creative":{"type":"native","title":"Acme"}`, `"creative":{"type":"tag","width":300,"height":250,"html":"<b>x</b>","trusted":true}`, 1)
	if r := adv.do("POST", "/api/v1/ad", trusted); r.status != 400 || !strings.Contains(r.body, `"creative.trusted":"only the ad team marks a tag trusted`) {
		t.Errorf("an advertiser's trusted tag = %d %s; want 400 naming creative.trusted", r.status, r.body)
	}
	adv.do("POST", "/api/v1/ad", body)
	state := func() (string, string) { // as the team reads it
		var page struct {
			Items []struct {
				ID, State string
				Review    struct{ Reason string }
			}
		}
		json.Unmarshal([]byte(in.admin("GET", "/api/v1/ads?campaignId="+acme, "").body), &page)
		for _, a := range page.Items {
			if a.ID == "2" {
				return a.State, a.Review.Reason
			}
		}
		return "", ""
	}
	if s, _ := state(); s != "pending" {
		t.Fatalf("the advertiser's ad is %q; want pending", s)
	}
	// The public read of the ad contract answers approved ads only, and
	// never who approved them.
	if r := in.get("/api/v1/ad/2"); r.status != 404 || strings.Contains(r.body, "Acme banner") {
		t.Errorf("GET /api/v1/ad/2 (pending) = %d %s; want 404", r.status, r.body)
	}
	serves := func() string {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"top"}]}`)
		var got struct {
			Decisions map[string][]struct{ AdID string }
		}
		json.Unmarshal([]byte(r.body), &got)
		if len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision: %d %s", r.status, r.body)
		}
		return got.Decisions["d"][0].AdID
	}
	for range 50 {
		if got := serves(); got != "1" {
			t.Fatalf("a pending ad served (ad %s); want the house ad", got)
		}
	}
	if r := in.get("/api/v1/ad?limit=10"); strings.Contains(r.body, "Acme banner") {
		t.Errorf("the ad list = %s; a pending ad is listed nowhere", r.body)
	}
	if r := adv.do("POST", "/api/v1/ad/2/approve", ""); r.status != 403 {
		t.Errorf("the advertiser's approval = %d %s; want 403", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/ad/2/reject", `{"reason":"the logo is too small"}`), 200, "")
	if s, reason := state(); s != "draft" || reason != "the logo is too small" {
		t.Fatalf("after the rejection: %s %q", s, reason)
	}
	if r := adv.do("GET", "/api/v1/ads?campaignId="+acme, ""); !strings.Contains(r.body, "the logo is too small") {
		t.Errorf("the advertiser's ads = %s; want the rejection's reason", r.body)
	}
	if r := adv.do("PUT", "/api/v1/ad/2", strings.Replace(body, "Acme banner", "Acme banner, bigger logo", 1)); r.status != 200 || !strings.Contains(r.body, `"state":"pending"`) {
		t.Fatalf("the advertiser's change = %d %s; want it pending again", r.status, r.body)
	}
	if r := adv.do("PUT", "/api/v1/ad/1", body); r.status != 404 {
		t.Errorf("the advertiser's change of another's ad = %d %s; want 404", r.status, r.body)
	}
	if r := in.get("/api/v1/ad/2"); r.status != 404 {
		t.Errorf("GET /api/v1/ad/2 (changed, pending again) = %d %s; want 404", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/ad/2/approve", ""), 200, "")
	if got := serves(); got != "2" {
		t.Errorf("after the approval the decision chose ad %s; want 2 (the sponsorship)", got)
	}
	if r := in.get("/api/v1/ad/2"); r.status != 200 || !strings.Contains(r.body, "bigger logo") || strings.Contains(r.body, `"review"`) || strings.Contains(r.body, "@") {
		t.Errorf("GET /api/v1/ad/2 (approved) = %d %s; want 200 without its review or anyone's email", r.status, r.body)
	}
	// One ad of a campaign paused (by its advertiser), then resumed.
	if r := adv.do("POST", "/api/v1/ad/2/pause", ""); r.status != 200 || !strings.Contains(r.body, `"state":"paused"`) {
		t.Fatalf("the advertiser's pause = %d %s", r.status, r.body)
	}
	if got := serves(); got != "1" {
		t.Errorf("a paused ad served (ad %s)", got)
	}
	if r := adv.do("POST", "/api/v1/ad/1/pause", ""); r.status != 404 {
		t.Errorf("the advertiser's pause of another's ad = %d %s; want 404", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/ad/2/approve", ""), 409, "")
	in.expect(in.admin("POST", "/api/v1/ad/2/resume", ""), 200, "")
	if got := serves(); got != "2" {
		t.Errorf("after the resume the decision chose ad %s; want 2", got)
	}
	in.expect(in.admin("POST", "/api/v1/ad/1/reject", `{"reason":"x"}`), 409, "")
	if r := in.admin("GET", "/api/v1/audit?entity=ad&limit=10", ""); !strings.Contains(r.body, `"action":"approve"`) || !strings.Contains(r.body, `"action":"reject"`) || !strings.Contains(r.body, `"actor":"user:1 adv@acme.test","entity":"ad","entityId":"2","action":"pause"`) {
		t.Errorf("audit = %s; want the ad's approval, rejection and the advertiser's pause", r.body)
	}
}
