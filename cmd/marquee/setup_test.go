package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/auth"
	"marquee/web"
)

// setupToken is the token of the setup link serve wrote under data.
func setupToken(t *testing.T, data string) string {
	t.Helper()
	link := setupLink(data)
	_, token, ok := strings.Cut(link, "#/setup?token=")
	if !ok {
		t.Fatalf("setup-link = %q; want <console URL>#/setup?token=…", link)
	}
	return token
}

// TestFirstRunSetup: a store with no user gets a setup link that makes
// the first owner once, within its hour, and signs them in; a forged,
// expired or second use is refused; the root sends a browser to the
// console; the bootstrap token pasted into sign-in says what it is for.
func TestFirstRunSetup(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil)
	if !strings.Contains(in.log.String(), `"url":"http://127.0.0.1:`) || !strings.Contains(in.log.String(), "no user yet") {
		t.Errorf("log does not name the console URL and the setup link's file:\n%s", in.log)
	}
	if fi, err := os.Stat(filepath.Join(data, "setup-link")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("setup-link: %v, %v; want a 0600 file", fi, err)
	}
	if strings.Contains(in.log.String(), setupToken(t, data)) {
		t.Errorf("the log holds the setup token")
	}
	token := setupToken(t, data)
	in.expect(in.get("/api/v1/setup"), 200, `{"needed":true}`)

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if r, err := noRedirect.Get(in.url + "/"); err != nil || r.StatusCode != 302 || r.Header.Get("Location") != "/admin/" {
		t.Errorf("GET / = %v, %v; want 302 to /admin/", r, err)
	}

	other := auth.New(nil, "not this server's token", nil)
	mine := auth.New(nil, in.token, nil)
	for _, c := range []struct{ name, body, want string }{
		{"forged", `{"token":"` + other.SetupToken(time.Now().Add(time.Hour)) + `","email":"o@example.com","password":"a long passphrase"}`, "invalid or expired setup link"},
		{"expired", `{"token":"` + mine.SetupToken(time.Now().Add(-time.Second)) + `","email":"o@example.com","password":"a long passphrase"}`, "invalid or expired setup link"},
		{"garbage", `{"token":"x.y","email":"o@example.com","password":"a long passphrase"}`, "invalid or expired setup link"},
	} {
		if r, _ := in.session("POST", "/api/v1/setup", c.body, nil); r.status != 401 || !strings.Contains(r.body, c.want) {
			t.Errorf("%s token: %d %s; want 401 %q", c.name, r.status, r.body, c.want)
		}
	}
	r, _ := in.session("POST", "/api/v1/setup", `{"token":"`+token+`","email":"not an email","password":"short"}`, nil)
	if r.status != 400 || !strings.Contains(r.body, `"email":"must be an email address"`) || !strings.Contains(r.body, `"password":`) {
		t.Errorf("bad fields: %d %s; want 400 naming email and password", r.status, r.body)
	}

	r, cookies := in.session("POST", "/api/v1/setup", `{"token":"`+token+`","email":"Owner@Example.com","password":"a long passphrase"}`, nil)
	var s struct {
		User struct{ Email, Role string }
	}
	json.Unmarshal([]byte(r.body), &s)
	if r.status != 201 || s.User.Email != "owner@example.com" || s.User.Role != "owner" {
		t.Fatalf("setup = %d %s; want 201 signed in as the owner owner@example.com", r.status, r.body)
	}
	var cookie *http.Cookie
	for _, c := range cookies {
		if c.Name == web.SessionCookie {
			cookie = c
		}
	}
	if got, _ := in.session("GET", "/api/v1/session", "", cookie); got.status != 200 || !strings.Contains(got.body, "owner@example.com") {
		t.Errorf("the setup's session: %d %s; want signed in", got.status, got.body)
	}
	if r, _ := in.session("POST", "/api/v1/setup", `{"token":"`+token+`","email":"two@example.com","password":"a long passphrase"}`, nil); r.status != 409 {
		t.Errorf("second use of the link = %d %s; want 409", r.status, r.body)
	}
	in.expect(in.get("/api/v1/setup"), 200, `{"needed":false}`)
	in.signIn(t, `{"email":"owner@example.com","password":"a long passphrase"}`)
	if r, _ := in.session("POST", "/api/v1/session", `{"key":"`+in.token+`"}`, nil); r.status != 401 || !strings.Contains(r.body, "bootstrap admin token") {
		t.Errorf("sign-in with the bootstrap token = %d %s; want 401 saying what the token is for", r.status, r.body)
	}

	// Restarted with a user: no setup link, and none left over.
	in.stop()
	again := start(t, data, nil)
	if link := setupLink(data); link != "" || strings.Contains(again.log.String(), "no user yet") {
		t.Errorf("after the first user, setup-link = %q; want none", link)
	}
}
