package main

import (
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestInvitations: a user added without a password gets a one-time link
// instead — shown to whoever invited when no mail server is configured,
// mailed (and not shown) when one is. Until it is used nobody signs in
// as them; a wrong token is a 404, a weak password a 400 naming it; the
// link sets the password and signs them in, once (a replay is a 404);
// the audit log records the acceptance.
func TestInvitations(t *testing.T) {
	t.Parallel()
	box, addr := startMailbox(t)
	for _, mailed := range []bool{false, true} {
		flags := []string{}
		if mailed {
			flags = append(flags, "-smtp", "smtp://"+addr+"?tls=none", "-smtp-from", "team@marquee.test")
		}
		in := start(t, t.TempDir(), nil, flags...)
		in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
		r := in.admin("POST", "/api/v1/users", `{"email":"ana@acme.test","role":"advertiser","advertisers":["1"]}`)
		var u struct {
			Email  string
			Invite struct {
				URL       string
				Sent      bool
				ExpiresAt time.Time
			}
		}
		if json.Unmarshal([]byte(r.body), &u); r.status != 201 || u.Invite.Sent != mailed || (u.Invite.URL == "") == !mailed ||
			u.Invite.ExpiresAt.Before(time.Now().Add(6*24*time.Hour)) {
			t.Fatalf("mailed %v: invite = %d %s; want 201, sent %v, the link shown only when not mailed, a week to use it", mailed, r.status, r.body, mailed)
		}
		link := u.Invite.URL
		if mailed {
			var msg string
			eventually(t, 5*time.Second, func() string {
				box.mu.Lock()
				defer box.mu.Unlock()
				for _, m := range box.msgs {
					if strings.Contains(m, "ana@acme.test") {
						msg = m
						return ""
					}
				}
				return "no invitation mailed"
			})
			b, _ := io.ReadAll(quotedprintable.NewReader(strings.NewReader(msg)))
			link = regexp.MustCompile(`http://\S+/admin/#/invite/\S+`).FindString(string(b))
		}
		_, token, ok := strings.Cut(link, "/admin/#/invite/")
		if !ok || !strings.HasPrefix(link, in.url) {
			t.Fatalf("mailed %v: link %q; want %s/admin/#/invite/TOKEN", mailed, link, in.url)
		}
		if r, _ := in.session("POST", "/api/v1/session", `{"email":"ana@acme.test","password":"`+token+`"}`, nil); r.status != 401 {
			t.Errorf("signing in before the invitation is used = %d %s; want 401", r.status, r.body)
		}
		accept := func(tok, pw string) response {
			r, _ := in.session("POST", "/api/v1/invitations", `{"token":"`+tok+`","password":"`+pw+`"}`, nil)
			return r
		}
		if r := accept(token+"x", "a long enough password"); r.status != 404 {
			t.Errorf("a wrong token = %d %s; want 404", r.status, r.body)
		}
		if r := accept(token, "short"); r.status != 400 || !strings.Contains(r.body, `"password"`) {
			t.Errorf("a weak password = %d %s; want 400 naming password", r.status, r.body)
		}
		r, cookies := in.session("POST", "/api/v1/invitations", `{"token":"`+token+`","password":"a long enough password"}`, nil)
		if r.status != 201 || len(cookies) == 0 || !strings.Contains(r.body, `"role":"advertiser"`) {
			t.Fatalf("accepting = %d %s; want 201 signed in as the advertiser", r.status, r.body)
		}
		if r := accept(token, "another long password"); r.status != 404 {
			t.Errorf("the link again = %d %s; want 404 (once)", r.status, r.body)
		}
		in.signIn(t, `{"email":"ana@acme.test","password":"a long enough password"}`)
		if r := in.admin("GET", "/api/v1/audit?entity=user", ""); !strings.Contains(r.body, `"action":"accept invitation"`) || !strings.Contains(r.body, "ana@acme.test") {
			t.Errorf("the audit log = %s; want the acceptance", r.body)
		}
	}
}
