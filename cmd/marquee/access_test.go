package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee"
	"marquee/auth"
	"marquee/index"
	"marquee/web"
)

func init() { auth.PasswordCost = 4 } // bcrypt's least: tests sign in often

// createKey creates a key with the admin token and returns its secret
// and id.
func (in *instance) createKey(name string, scopes ...string) (secret string, id int64) {
	in.t.Helper()
	return in.keyFrom(mustJSON(map[string]any{"name": name, "scopes": scopes}))
}

// keyFrom creates the key body describes (its name, scopes, bounds) with
// the admin token and returns its secret and id.
func (in *instance) keyFrom(body string) (secret string, id int64) {
	in.t.Helper()
	r := in.admin("POST", "/api/v1/keys", body)
	var k struct {
		ID  int64
		Key string
	}
	if json.Unmarshal([]byte(r.body), &k); r.status != 201 {
		in.t.Fatalf("create key %s: %d %s", body, r.status, r.body)
	}
	return k.Key, k.ID
}

// concrete fills a route pattern's {name} with a value no entity has.
func concrete(pattern string) string {
	return strings.NewReplacer("{id}", "999999", "{code}", "nosuchcode").Replace(pattern)
}

// TestRouteScopeMatrix sends every route of routes.go a request with no
// credential and with a key of each scope: a route answers only the
// scope it declares (403 naming it otherwise), and the routes without
// one are exactly the public ones.
func TestRouteScopeMatrix(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	keys := map[marquee.Scope]string{}
	for _, sc := range marquee.Scopes {
		keys[sc], _ = in.createKey("only "+string(sc), string(sc))
	}
	wantPublic := []string{"GET /api/v1/ad", "GET /api/v1/ad/{id}", "GET /r/{code}", "GET /e", "POST /e", "POST /stripe/webhook", "GET /vmap",
		"GET /healthz", "GET /readyz", "GET /metrics", "POST /api/v1/session", "POST /api/v1/invitations", "GET /api/v1/setup", "POST /api/v1/setup", "GET /assets/{file}", "POST /api/v1/decisions", "GET /api/v1/decisions", "GET /t/{kind}/{token}",
		"OPTIONS /api/v1/decisions", "GET /t.js", "GET /tag/{file}", "GET /pb.js", "GET /api/v1/floors", "GET /f/pb", "GET /f/{token}", "GET /p/{token}", "GET /vast", "GET /conversion", "GET /sellers.json", "POST /openrtb2/auction", "GET /status"}
	var public []string
	routes := web.NewServer(web.Config{}, web.Deps{Now: time.Now, Index: index.New(time.Now), Registry: prometheus.NewRegistry()}).Routes()
	for _, r := range routes {
		if r.Scope == "" {
			public = append(public, r.Method+" "+r.Pattern)
			continue
		}
		path := concrete(r.Pattern)
		if got := in.do(r.Method, path, "", "application/json", "{}"); got.status != 401 {
			t.Errorf("%s %s without a credential = %d %s; want 401", r.Method, path, got.status, got.body)
		}
		for _, sc := range marquee.Scopes {
			got := in.do(r.Method, path, keys[sc], "application/json", "{}")
			allowed := r.Scope == "signed-in" || r.Scope == sc
			switch {
			case allowed && (got.status == 401 || strings.Contains(got.body, `"missing"`)):
				t.Errorf("%s %s with a %s key = %d %s; want it let through", r.Method, path, sc, got.status, got.body)
			case !allowed && (got.status != 403 || got.body != `{"error":"forbidden","missing":"`+string(r.Scope)+`"}`):
				t.Errorf("%s %s with a %s key = %d %s; want 403 missing %s", r.Method, path, sc, got.status, got.body, r.Scope)
			}
		}
	}
	slices.Sort(public)
	slices.Sort(wantPublic)
	if !slices.Equal(public, wantPublic) {
		t.Errorf("public routes = %v; want %v (every other route must declare a scope)", public, wantPublic)
	}
}

// TestKeyLifecycle creates a key, uses it, sees when it was last used,
// and revokes it; a key expires; a key gets no scope its creator lacks;
// bad keys and bodies are refused.
func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-access-flush", "50ms")
	secret, id := in.createKey("ci", "ads:read")
	if !strings.HasPrefix(secret, "mq_") || len(secret) < 40 {
		t.Fatalf("key secret %q: want mq_ and 256 random bits", secret)
	}
	in.expect(in.do("GET", "/api/v1/ads", secret, "", ""), 200, "")
	in.expect(in.do("POST", "/api/v1/ad", secret, "application/json", "{}"), 403, `{"error":"forbidden","missing":"ads:write"}`)

	eventually(t, 5*time.Second, func() string {
		r := in.admin("GET", "/api/v1/keys", "")
		if strings.Contains(r.body, secret) {
			t.Fatalf("GET /api/v1/keys shows the secret: %s", r.body)
		}
		var list struct{ Keys []marquee.APIKey }
		json.Unmarshal([]byte(r.body), &list)
		for _, k := range list.Keys {
			if k.ID == id && k.LastUsedAt != nil && k.Prefix == secret[:auth.PrefixLen] {
				return ""
			}
		}
		return "key's lastUsedAt never set: " + r.body
	})

	in.expect(in.admin("DELETE", fmt.Sprintf("/api/v1/keys/%d", id), ""), 204, "")
	in.expect(in.do("GET", "/api/v1/ads", secret, "", ""), 401, `{"error":"key revoked"}`)
	in.expect(in.admin("DELETE", "/api/v1/keys/999999", ""), 404, `{"error":"key not found"}`)

	// Expiry.
	r := in.admin("POST", "/api/v1/keys", mustJSON(map[string]any{"name": "short", "scopes": []string{"links:read"},
		"expiresAt": time.Now().Add(1500 * time.Millisecond).Format(time.RFC3339Nano)}))
	var short struct{ Key string }
	json.Unmarshal([]byte(r.body), &short)
	in.expect(in.do("GET", "/api/v1/links", short.Key, "", ""), 200, "")
	eventually(t, 5*time.Second, func() string {
		if got := in.do("GET", "/api/v1/links", short.Key, "", ""); got.status != 401 || got.body != `{"error":"key expired"}` {
			return fmt.Sprintf("expired key = %d %s", got.status, got.body)
		}
		return ""
	})

	// No escalation: a keys:admin key cannot make an ads:write key.
	admin, _ := in.createKey("admin", "keys:admin")
	in.expect(in.do("POST", "/api/v1/keys", admin, "application/json", `{"name":"x","scopes":["ads:write"]}`), 403,
		`{"error":"forbidden: a user or key cannot be given, or be changed while it holds, scopes you lack","missing":"ads:write"}`)

	// Bad input.
	for _, tc := range []struct{ token, want string }{
		{"mq_short", `{"error":"invalid bearer token"}`},
		{"mq_" + strings.Repeat("A", 43), `{"error":"invalid bearer token"}`},
		{strings.Repeat("x", 200), `{"error":"invalid bearer token"}`},
	} {
		in.expect(in.do("GET", "/api/v1/ads", tc.token, "", ""), 401, tc.want)
	}
	in.expect(in.admin("POST", "/api/v1/keys", `{"name":"x","scopes":["ads:fly"]}`), 400,
		`{"error":"invalid key","problems":{"scopes":"unknown scope \"ads:fly\" (scopes: ads:read, ads:write, links:read, links:write, campaigns:read, campaigns:write, reports:read, keys:admin, webhooks:admin, privacy:admin, conversions:write, campaigns:submit, campaigns:approve, billing:write)"}}`)
	in.expect(in.admin("POST", "/api/v1/keys", `{"scopes":[],"expiresAt":"2001-01-01T00:00:00Z"}`), 400,
		`{"error":"invalid key","problems":{"expiresAt":"must be in the future","name":"is required","scopes":"must be a non-empty array of scopes"}}`)
	in.expect(in.admin("POST", "/api/v1/keys", `{"name":"`+strings.Repeat("x", 5000)+`"}`), 413, "")
}

// TestKeyRevokedOnEveryInstance revokes a key on one instance of a
// cluster; the other refuses it within 1 s.
func TestKeyRevokedOnEveryInstance(t *testing.T) { t.Parallel(); eachShared(t, testKeyRevoked) }

func testKeyRevoked(t *testing.T, db sharedDB, dsn string) {
	a := start(t, t.TempDir(), nil, append([]string{"-db", dsn, "-admin-token", "secret-token"}, db.flags...)...)
	b := start(t, t.TempDir(), nil, append([]string{"-db", dsn, "-admin-token", "secret-token"}, db.flags...)...)
	a.token, b.token = "secret-token", "secret-token"
	secret, id := a.createKey("ci", "ads:read")
	b.expect(b.do("GET", "/api/v1/ads", secret, "", ""), 200, "")
	a.expect(a.admin("DELETE", fmt.Sprintf("/api/v1/keys/%d", id), ""), 204, "")
	// How soon is the changelog's propagation (docs/operations.md: NOTIFY,
	// or the poll every -poll); a test asserts that it happens, not a time.
	eventually(t, 10*time.Second, func() string {
		if r := b.do("GET", "/api/v1/ads", secret, "", ""); r.status != 401 {
			return fmt.Sprintf("instance B still answers the revoked key: %d", r.status)
		}
		return ""
	})
	// A user's role change reaches B's sessions too: B signs the user in,
	// A demotes them, B's session ends (a new role ends sessions).
	a.expect(a.admin("POST", "/api/v1/users", `{"email":"ed@example.com","role":"editor","password":"correct horse battery"}`), 201, "")
	c := b.signIn(t, `{"email":"ed@example.com","password":"correct horse battery"}`)
	b.expect(c.do("GET", "/api/v1/ads", ""), 200, "")
	a.expect(a.admin("PUT", "/api/v1/users/1", `{"role":"viewer"}`), 200, "")
	eventually(t, time.Second, func() string {
		if r := c.do("GET", "/api/v1/ads", ""); r.status != 401 {
			return fmt.Sprintf("instance B's session survived the role change: %d", r.status)
		}
		return ""
	})
}

// browser is a client with a session cookie, sending what a page of this
// origin sends.
type browser struct {
	in     *instance
	cookie *http.Cookie
	csrf   string
	origin string // "" sends none
}

func (in *instance) signIn(t *testing.T, body string) *browser {
	t.Helper()
	r, cookies := in.session("POST", "/api/v1/session", body, nil)
	if r.status != 201 {
		t.Fatalf("sign in %s: %d %s", body, r.status, r.body)
	}
	var s struct{ CSRFToken string }
	json.Unmarshal([]byte(r.body), &s)
	for _, c := range cookies {
		if c.Name == web.SessionCookie {
			return &browser{in: in, cookie: c, csrf: s.CSRFToken, origin: in.url}
		}
	}
	t.Fatalf("sign in: no %s cookie in %v", web.SessionCookie, r.header)
	return nil
}

// session sends a request with cookie (if any) and returns the response
// and the cookies it sets.
func (in *instance) session(method, path, body string, cookie *http.Cookie, header ...string) (response, []*http.Cookie) {
	in.t.Helper()
	req, _ := http.NewRequest(method, in.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if cookie != nil {
		req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, string(b)}, resp.Cookies()
}

func (b *browser) do(method, path, body string) response {
	var h []string
	if b.origin != "" {
		h = append(h, "Origin", b.origin)
	}
	if b.csrf != "" {
		h = append(h, "X-CSRF-Token", b.csrf)
	}
	r, _ := b.in.session(method, path, body, b.cookie, h...)
	return r
}

// addUser runs marquee users add on data with the password on stdin.
func addUser(t *testing.T, data, email, role, password string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"users", "add", "-data", data, "-email", email, "-role", role}, func(string) string { return "" },
		strings.NewReader(password+"\n"), &out, &errb); err != nil {
		t.Fatalf("users add: %v; %s", err, errb.String())
	}
}

// TestSessions signs in with a password and with a key: the cookie's
// flags, who you are, rotation, CSRF, sign-out.
func TestSessions(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	addUser(t, data, "Owner@Example.com", "owner", "correct horse battery")
	in := start(t, data, nil)

	r, cookies := in.session("POST", "/api/v1/session", `{"email":"owner@example.com","password":"correct horse battery"}`, nil)
	in.expect(r, 201, "")
	setCookie := r.header.Get("Set-Cookie")
	for _, want := range []string{web.SessionCookie + "=", "httponly", "samesite=strict", "path=/"} {
		if !strings.Contains(strings.ToLower(setCookie), want) {
			t.Errorf("Set-Cookie %q lacks %q", setCookie, want)
		}
	}
	if strings.Contains(strings.ToLower(setCookie), "secure") {
		t.Errorf("Set-Cookie %q is Secure on plain HTTP without -cookie-secure", setCookie)
	}
	var me struct {
		Actor     string
		User      marquee.User
		Scopes    []string
		CSRFToken string
	}
	json.Unmarshal([]byte(r.body), &me)
	if me.User.Email != "owner@example.com" || me.User.Role != "owner" || len(me.Scopes) != len(marquee.Scopes) || me.CSRFToken == "" {
		t.Fatalf("sign-in answer %s", r.body)
	}
	b := &browser{in: in, cookie: cookies[0], csrf: me.CSRFToken, origin: in.url}
	got := b.do("GET", "/api/v1/session", "")
	in.expect(got, 200, "")
	if !strings.Contains(got.body, `"csrfToken":"`+me.CSRFToken+`"`) {
		t.Errorf("GET /api/v1/session = %s; want the CSRF token", got.body)
	}

	// CSRF: a change by cookie needs this origin and the token.
	link := `{"url":"https://example.com/x"}`
	for _, tc := range []struct {
		origin, csrf, want string
	}{
		{"", me.CSRFToken, "cross-origin request refused: Origin must be " + in.url},
		{"https://evil.example", me.CSRFToken, "cross-origin request refused: Origin must be " + in.url},
		{in.url, "", "missing or wrong X-CSRF-Token header (GET /api/v1/session gives it)"},
		{in.url, "forged", "missing or wrong X-CSRF-Token header (GET /api/v1/session gives it)"},
	} {
		c := &browser{in: in, cookie: b.cookie, csrf: tc.csrf, origin: tc.origin}
		in.expect(c.do("POST", "/api/v1/links", link), 403, mustJSON(map[string]string{"error": tc.want}))
	}
	in.expect(b.do("POST", "/api/v1/links", link), 201, "")
	in.expect(in.admin("POST", "/api/v1/links", link), 201, "") // a bearer key needs neither

	// Rotation: signing in again with the cookie ends that session.
	r2, cookies2 := in.session("POST", "/api/v1/session", `{"email":"owner@example.com","password":"correct horse battery"}`, b.cookie)
	in.expect(r2, 201, "")
	if cookies2[0].Value == b.cookie.Value {
		t.Fatal("signing in again kept the session id")
	}
	in.expect(b.do("GET", "/api/v1/session", ""), 401, "")
	b2 := &browser{in: in, cookie: cookies2[0], origin: in.url}
	json.Unmarshal([]byte(r2.body), &me)
	b2.csrf = me.CSRFToken

	// Sign-out clears the cookie where it was set (Path=/), or a
	// browser keeps it.
	out := b2.do("DELETE", "/api/v1/session", "")
	in.expect(out, 204, "")
	if c := (&http.Response{Header: out.header}).Cookies(); len(c) != 1 || c[0].Name != web.SessionCookie || c[0].Value != "" ||
		c[0].Path != "/" || !c[0].HttpOnly || c[0].Expires.After(time.Now()) {
		t.Errorf("sign-out Set-Cookie = %q; want %s cleared with Path=/, HttpOnly and a past expiry", out.header.Values("Set-Cookie"), web.SessionCookie)
	}
	in.expect(b2.do("GET", "/api/v1/session", ""), 401, `{"error":"session expired or signed out: sign in again"}`)
	in.expect(b2.do("GET", "/api/v1/session", ""), 401, "")

	// A forged cookie, and a key's session (it holds the key's scopes).
	in.expect((&browser{in: in, cookie: &http.Cookie{Name: web.SessionCookie, Value: "forged"}}).do("GET", "/api/v1/ads", ""), 401, "")
	secret, _ := in.createKey("viewer", "ads:read")
	kb := in.signIn(t, mustJSON(map[string]string{"key": secret}))
	in.expect(kb.do("GET", "/api/v1/ads", ""), 200, "")
	in.expect(kb.do("POST", "/api/v1/ad", "{}"), 403, `{"error":"forbidden","missing":"ads:write"}`)

	// Bad sign-ins.
	in.expect(in.do("POST", "/api/v1/session", "", "application/json", `{"email":"a@b.c"}`), 400,
		`{"error":"invalid sign-in","problems":{"password":"is required"}}`)
	in.expect(in.do("POST", "/api/v1/session", "", "application/json", `{"key":"x","email":"a@b.c","password":"p"}`), 400, "")
	in.expect(in.do("POST", "/api/v1/session", "", "application/json", `{"email":"`+strings.Repeat("a", 250)+`@b.cd","password":"p"}`), 400,
		`{"error":"invalid sign-in","problems":{"email":"is longer than 254 bytes"}}`)

	// -cookie-secure marks the cookie Secure.
	in.stop()
	in2 := start(t, data, nil, "-cookie-secure")
	r, _ = in2.session("POST", "/api/v1/session", `{"email":"owner@example.com","password":"correct horse battery"}`, nil)
	if !strings.Contains(strings.ToLower(r.header.Get("Set-Cookie")), "secure") {
		t.Errorf("with -cookie-secure, Set-Cookie %q is not Secure", r.header.Get("Set-Cookie"))
	}
}

// TestLoginThrottling fails five sign-ins of an account: the sixth gets
// 429 with Retry-After, and an unknown account gets the same answers; so
// do five from one address, or from one IPv6 /64.
func TestLoginThrottling(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	addUser(t, data, "ana@example.com", "viewer", "correct horse battery")
	in := start(t, data, nil, "-trusted-proxies", "127.0.0.1/32")
	try := func(email, ip string) response {
		r, _ := in.session("POST", "/api/v1/session", mustJSON(map[string]string{"email": email, "password": "wrong password!"}), nil,
			"X-Forwarded-For", ip)
		return r
	}
	for _, email := range []string{"ana@example.com", "nobody@example.com"} {
		for i := range 5 {
			in.expect(try(email, fmt.Sprintf("10.0.0.%d", i)), 401, `{"error":"invalid email, password or key"}`)
		}
		r := try(email, "10.0.1.1")
		in.expect(r, 429, `{"error":"too many failed sign-ins; retry later"}`)
		if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Errorf("429 for %s without Retry-After", email)
		}
	}
	// And by IP: five failures from one address over different accounts.
	for i := range 5 {
		in.expect(try(fmt.Sprintf("u%d@example.com", i), "10.9.9.9"), 401, "")
	}
	in.expect(try("ana2@example.com", "10.9.9.9"), 429, "")
	// And by IPv6 /64: an attacker rotates the low 64 bits for nothing.
	for i := range 5 {
		in.expect(try(fmt.Sprintf("v%d@example.com", i), fmt.Sprintf("2001:db8:7:7:%x::1", i+1)), 401, "")
	}
	in.expect(try("v9@example.com", "2001:db8:7:7:ffff:1:2:3"), 429, "")
	in.expect(try("v9@example.com", "2001:db8:7:8::1"), 401, "") // another /64
	// The right password is throttled too while the wait lasts.
	r, _ := in.session("POST", "/api/v1/session", `{"email":"ana@example.com","password":"correct horse battery"}`, nil, "X-Forwarded-For", "10.0.2.2")
	in.expect(r, 429, "")
}

// TestPasswordChangeThrottled: a stolen session cannot guess the
// password through PUT /api/v1/session/password. Wrong current
// passwords count as failed sign-ins of the account: after five, the
// change answers 429 with Retry-After, the right password too, and so
// does signing in to the account.
func TestPasswordChangeThrottled(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	const password = "correct horse battery"
	addUser(t, data, "ana@example.com", "editor", password)
	in := start(t, data, nil)
	b := in.signIn(t, mustJSON(map[string]string{"email": "ana@example.com", "password": password}))
	guess := func(current string) response {
		return b.do("PUT", "/api/v1/session/password", mustJSON(map[string]string{"current": current, "password": "a brand new password"}))
	}
	for i := range auth.MaxFailures {
		in.expect(guess(fmt.Sprintf("guess number %d", i)), 400, `{"error":"invalid password change","problems":{"current":"is not your password"}}`)
	}
	r := guess(password)
	in.expect(r, 429, `{"error":"too many wrong passwords; retry later"}`)
	if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("429 without Retry-After: %v", r.header)
	}
	r, _ = in.session("POST", "/api/v1/session", mustJSON(map[string]string{"email": "ana@example.com", "password": password}), nil)
	in.expect(r, 429, `{"error":"too many failed sign-ins; retry later"}`)
	in.expect(b.do("GET", "/api/v1/session", ""), 200, "") // the session itself goes on
}

// TestFailedKeySignInAudit: a refused {"key"} sign-in is audited with
// the visible prefix of something shaped like a key, and nothing of
// anything else (a password typed in the wrong field, the bootstrap
// token).
func TestFailedKeySignInAudit(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	unknownKey := "mq_" + strings.Repeat("Ab0-_", 8) + "xyz" // a key's shape; no such key
	for _, key := range []string{"my password 123", unknownKey} {
		r, _ := in.session("POST", "/api/v1/session", mustJSON(map[string]string{"key": key}), nil)
		in.expect(r, 401, `{"error":"invalid email, password or key"}`)
	}
	// The bootstrap token is refused too, with what it is for (its holder
	// is the owner: nothing is revealed to anyone else).
	r, _ := in.session("POST", "/api/v1/session", mustJSON(map[string]string{"key": in.token}), nil)
	if r.status != 401 || !strings.Contains(r.body, "bootstrap admin token") {
		t.Errorf("sign-in with the bootstrap token = %d %s; want 401 saying what it is for", r.status, r.body)
	}
	var log struct{ Entries []marquee.AuditEntry }
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/audit?entity=session", "").body), &log)
	var got []string
	for _, e := range log.Entries {
		got = append(got, e.Action+" "+e.EntityID)
	}
	slices.Sort(got)
	want := []string{"login-failed key", "login-failed key", "login-failed key:" + unknownKey[:auth.PrefixLen]}
	if !slices.Equal(got, want) {
		t.Errorf("audit of refused key sign-ins = %q; want %q", got, want)
	}
}

// TestKeysOutliveTheirCreator: a key keeps working when the user who
// made it is deleted (a program's key must not stop when a person
// leaves), and the key list names who made it, so that an admin can
// revoke it.
func TestKeysOutliveTheirCreator(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	const password = "correct horse battery"
	addUser(t, data, "ana@example.com", "admin", password)
	in := start(t, data, nil)
	b := in.signIn(t, mustJSON(map[string]string{"email": "ana@example.com", "password": password}))
	r := b.do("POST", "/api/v1/keys", `{"name":"ci","scopes":["ads:read"]}`)
	in.expect(r, 201, "")
	var k struct {
		ID        int64
		Key       string
		CreatedBy string
	}
	json.Unmarshal([]byte(r.body), &k)
	var me struct{ User marquee.User }
	json.Unmarshal([]byte(b.do("GET", "/api/v1/session", "").body), &me)
	in.expect(in.admin("DELETE", fmt.Sprintf("/api/v1/users/%d", me.User.ID), ""), 204, "")
	in.expect(b.do("GET", "/api/v1/session", ""), 401, "") // her sessions end with her
	in.expect(in.do("GET", "/api/v1/ads", k.Key, "", ""), 200, "")
	var list struct {
		Keys []struct {
			ID        int64
			CreatedBy string
		}
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/keys", "").body), &list)
	if len(list.Keys) != 1 || list.Keys[0].ID != k.ID || list.Keys[0].CreatedBy != fmt.Sprintf("user:%d ana@example.com", me.User.ID) {
		t.Errorf("GET /api/v1/keys = %+v; want key %d created by user:%d ana@example.com", list.Keys, k.ID, me.User.ID)
	}
}

// TestUsersAndAudit manages users through the API, checks the rules of
// owners, and finds every change in the audit log, with no secret in it,
// in the logs or in the database's files.
func TestUsersAndAudit(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	addUser(t, data, "owner@example.com", "owner", "owner password 1")
	in := start(t, data, nil)
	password := "Zebra-Quartz-9911"
	r := in.admin("POST", "/api/v1/users", mustJSON(map[string]string{"email": "adm@example.com", "role": "admin", "password": password}))
	in.expect(r, 201, "")
	var adm marquee.User
	json.Unmarshal([]byte(r.body), &adm)
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"adm@example.com","role":"viewer","password":"another password"}`), 409,
		`{"error":"create user: email \"adm@example.com\" is taken"}`)
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"x","role":"god","password":"short"}`), 400,
		`{"error":"invalid user","problems":{"email":"must be an email address","password":"must be at least 12 characters","role":"must be one of owner, admin, editor, viewer, advertiser, publisher"}}`)
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"same@example.com","role":"viewer","password":"same@example.com"}`), 400,
		`{"error":"invalid user","problems":{"password":"must not be the email"}}`)

	// An admin cannot remove, demote or make owners; the last owner stays.
	ab := in.signIn(t, mustJSON(map[string]string{"email": "adm@example.com", "password": password}))
	in.expect(ab.do("DELETE", "/api/v1/users/1", ""), 403, `{"error":"forbidden: only an owner can change, remove or make an owner"}`)
	in.expect(ab.do("PUT", fmt.Sprintf("/api/v1/users/%d", adm.ID), `{"role":"owner"}`), 403, "")
	in.expect(ab.do("POST", "/api/v1/users", `{"email":"o2@example.com","role":"owner","password":"another password"}`), 403, "")
	in.expect(in.admin("DELETE", "/api/v1/users/1", ""), 409, `{"error":"delete user: the last owner cannot be removed or demoted; make another owner first"}`)
	in.expect(in.admin("PUT", "/api/v1/users/1", `{"role":"viewer"}`), 409, "")

	// Changes, each to be found in the audit log.
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	ad := in.admin("POST", "/api/v1/ad", adBody("A", from, to, ""))
	in.expect(ad, 201, "")
	var created struct{ ID string }
	json.Unmarshal([]byte(ad.body), &created)
	in.expect(ab.do("PUT", "/api/v1/ad/"+created.ID, adBody("B", from, to, "")), 200, "")
	in.expect(in.admin("DELETE", "/api/v1/ad/"+created.ID, ""), 204, "")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com","code":"promo"}`), 201, "")
	in.expect(in.admin("PUT", "/api/v1/links/promo", `{"url":"https://example.com/2"}`), 200, "")
	in.expect(in.admin("DELETE", "/api/v1/links/promo", ""), 204, "")
	secret, keyID := in.createKey("ci", "ads:read")
	in.expect(in.admin("DELETE", fmt.Sprintf("/api/v1/keys/%d", keyID), ""), 204, "")
	in.expect(in.admin("PUT", fmt.Sprintf("/api/v1/users/%d", adm.ID), `{"role":"editor","password":"a new password!"}`), 200, "")
	in.expect(ab.do("GET", "/api/v1/session", ""), 401, "") // a new role and password end the admin's session
	r, _ = in.session("POST", "/api/v1/session", `{"email":"adm@example.com","password":"wrong password!"}`, nil)
	in.expect(r, 401, "")
	in.expect(in.admin("DELETE", fmt.Sprintf("/api/v1/users/%d", adm.ID), ""), 204, "")

	r = in.admin("GET", "/api/v1/audit?limit=500", "")
	in.expect(r, 200, "")
	var log struct {
		Entries []marquee.AuditEntry
		Total   int
	}
	json.Unmarshal([]byte(r.body), &log)
	find := func(entity, action, actorPrefix string, fields ...string) {
		t.Helper()
		for _, e := range log.Entries {
			if e.Entity == entity && e.Action == action && strings.HasPrefix(e.Actor, actorPrefix) && slices.Equal(e.Fields, fields) && e.IP != "" {
				return
			}
		}
		t.Errorf("no audit entry %s %s by %s… with fields %v in %s", entity, action, actorPrefix, fields, r.body)
	}
	find("user", "create", "cli", "email", "role", "password")
	find("user", "create", "token", "email", "role", "password")
	find("session", "login", "user:", []string{}...)
	find("ad", "create", "token", "title", "startAt", "endAt")
	find("ad", "replace", "user:", "title")
	find("ad", "delete", "token", []string{}...)
	find("link", "create", "token", "code", "url", "redirect")
	find("link", "replace", "token", "url")
	find("link", "delete", "token", []string{}...)
	find("key", "create", "token", "name", "scopes", "expiresAt")
	find("key", "revoke", "token", []string{}...)
	find("user", "update", "token", "password", "role")
	find("session", "login-failed", "anonymous", []string{}...)
	find("user", "delete", "token", []string{}...)
	if log.Total != len(log.Entries) {
		t.Errorf("audit total %d, %d entries", log.Total, len(log.Entries))
	}
	// Filters.
	r = in.admin("GET", "/api/v1/audit?entity=key&actor=token", "")
	json.Unmarshal([]byte(r.body), &log)
	if log.Total != 2 {
		t.Errorf("GET /api/v1/audit?entity=key&actor=token = %s; want the key's create and revoke", r.body)
	}
	in.expect(in.admin("GET", "/api/v1/audit?limit=0&from=yesterday", ""), 400,
		`{"error":"invalid query","problems":{"from":"must be an RFC 3339 time","limit":"must be an integer from 1 to 500"}}`)

	// A user changes their own password (their sessions end).
	in.expect(in.admin("POST", "/api/v1/users", mustJSON(map[string]string{"email": "ed@example.com", "role": "editor", "password": password})), 201, "")
	eb := in.signIn(t, mustJSON(map[string]string{"email": "ed@example.com", "password": password}))
	in.expect(eb.do("PUT", "/api/v1/session/password", `{"current":"not it at all","password":"x"}`), 400,
		`{"error":"invalid password change","problems":{"password":"must be at least 12 characters"}}`)
	in.expect(eb.do("PUT", "/api/v1/session/password", `{"current":"not it at all","password":"a good new password"}`), 400,
		`{"error":"invalid password change","problems":{"current":"is not your password"}}`)
	in.expect(eb.do("PUT", "/api/v1/session/password", mustJSON(map[string]string{"current": password, "password": "ed's new password"})), 204, "")
	in.expect(eb.do("GET", "/api/v1/session", ""), 401, "")
	eb = in.signIn(t, `{"email":"ed@example.com","password":"ed's new password"}`)
	in.expect(eb.do("DELETE", "/api/v1/session", ""), 204, "")
	r = in.admin("GET", "/api/v1/audit?entity=session&limit=500", "")
	if !strings.Contains(r.body, `"actor":"user:3 ed@example.com","entity":"session","entityId":"user:3","action":"logout"`) {
		t.Errorf("no audit entry of the sign-out in %s", r.body)
	}
	in.expect(in.do("PUT", "/api/v1/session/password", in.token, "application/json", `{}`), 403,
		`{"error":"only a user signed in with a password can change it"}`)

	// No secret at rest, in the audit log or in the log.
	in.stop()
	for _, s := range []string{secret, password, "a new password!", "ed's new password", in.token} {
		if strings.Contains(in.log.String(), s) {
			t.Errorf("the log holds the secret %q", s)
		}
	}
	filepath.Walk(data, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || filepath.Base(path) == "admin-token" {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, s := range []string{secret, password, "a new password!", "owner password 1", "ed's new password"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %q in plain text", path, s)
			}
		}
		return nil
	})
}

// TestMetricsToken puts /metrics behind -metrics-token.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-metrics-token", "scrape-secret")
	in.expect(in.do("GET", "/metrics", "", "", ""), 401,
		`{"error":"missing or wrong metrics token: send Authorization: Bearer <-metrics-token>"}`)
	in.expect(in.do("GET", "/metrics", "wrong", "", ""), 401, "")
	if r := in.do("GET", "/metrics", "scrape-secret", "", ""); r.status != 200 || !strings.Contains(r.body, "marquee_") {
		t.Fatalf("GET /metrics with the token = %d", r.status)
	}
	open := start(t, t.TempDir(), nil)
	open.expect(open.do("GET", "/metrics", "", "", ""), 200, "")
}

// TestNoCredentialGrantsMoreThanItHolds is the authorisation rule of
// principals as a table: every route that creates, changes or removes a
// user, a key or a session, tried by a session of every role and by a
// key of every scope (and of every scope at once): a change is let
// through only when the acting credential holds keys:admin and every
// scope the principal holds before and after it, and only an owner may
// touch an owner. A refusal is 403 and changes nothing.
func TestNoCredentialGrantsMoreThanItHolds(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	const pw = "correct horse battery"
	// A user of role: with an advertiser or a site for the bound roles.
	userBody := func(fields map[string]any, role string) string {
		fields["role"] = role
		switch role {
		case marquee.RoleAdvertiser:
			fields["advertisers"] = []string{"1"}
		case marquee.RolePublisher:
			fields["sites"] = []string{"news"}
		}
		return mustJSON(fields)
	}
	bound := func(role string) bool { return role == marquee.RoleAdvertiser || role == marquee.RolePublisher }
	for _, role := range marquee.Roles {
		if !bound(role) {
			addUser(t, data, "actor-"+role+"@example.com", role, pw)
		}
	}
	in := start(t, data, nil)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	for _, role := range marquee.Roles {
		if bound(role) {
			in.expect(in.admin("POST", "/api/v1/users", userBody(map[string]any{"email": "actor-" + role + "@example.com", "password": pw}, role)), 201, "")
		}
	}
	type actor struct {
		name   string
		scopes marquee.ScopeSet
		owner  bool
		do     func(method, path, body string) response
	}
	var actors []actor
	for _, role := range marquee.Roles {
		b := in.signIn(t, mustJSON(map[string]string{"email": "actor-" + role + "@example.com", "password": pw}))
		scopes, _ := marquee.RoleScopes(role)
		actors = append(actors, actor{"a " + role + "'s session", scopes, role == marquee.RoleOwner, b.do})
	}
	keyActor := func(name string, scopes ...string) actor {
		secret, _ := in.createKey(name, scopes...)
		set, _, _ := marquee.ParseScopes(scopes)
		return actor{name, set, false, func(method, path, body string) response {
			return in.do(method, path, secret, "application/json", body)
		}}
	}
	for _, sc := range marquee.Scopes {
		actors = append(actors, keyActor("a "+string(sc)+" key", string(sc)))
	}
	all := make([]string, len(marquee.Scopes))
	for i, sc := range marquee.Scopes {
		all[i] = string(sc)
	}
	actors = append(actors, keyActor("an every-scope key", all...))
	// A key that signs in opens a session with exactly the key's scopes.
	keySession := keyActor("a keys:admin key's session", "keys:admin")
	{
		secret, _ := in.createKey("session key", "keys:admin")
		b := in.signIn(t, mustJSON(map[string]string{"key": secret}))
		keySession.do = b.do
	}
	actors = append(actors, keySession)

	n := 0
	newUser := func(role string) int64 { // made by the bootstrap token
		n++
		r := in.admin("POST", "/api/v1/users", userBody(map[string]any{"email": fmt.Sprintf("target%d@example.com", n), "password": pw}, role))
		if r.status != 201 {
			t.Fatalf("create target %s: %d %s", role, r.status, r.body)
		}
		var u marquee.User
		json.Unmarshal([]byte(r.body), &u)
		return u.ID
	}
	roleOf := func(id int64) string {
		var u marquee.User
		json.Unmarshal([]byte(in.admin("GET", fmt.Sprintf("/api/v1/users/%d", id), "").body), &u)
		return u.Role
	}
	may := func(a actor, held ...marquee.ScopeSet) bool {
		if !a.scopes.Has(marquee.ScopeKeysAdmin) {
			return false
		}
		for _, s := range held {
			if !a.scopes.Contains(s) {
				return false
			}
		}
		return true
	}
	check := func(a actor, what string, allowed bool, r response) {
		t.Helper()
		switch {
		case allowed && r.status >= 300:
			t.Errorf("%s: %s = %d %s; want it allowed", a.name, what, r.status, r.body)
		case !allowed && r.status != 403:
			t.Errorf("%s: %s = %d %s; want 403", a.name, what, r.status, r.body)
		}
	}
	for _, a := range actors {
		for _, role := range marquee.Roles {
			rs, _ := marquee.RoleScopes(role)
			ok := may(a, rs) && (role != marquee.RoleOwner || a.owner)

			r := a.do("POST", "/api/v1/users", userBody(map[string]any{"email": fmt.Sprintf("new%d@example.com", n), "password": pw}, role))
			n++
			check(a, "create a user of role "+role, ok, r)

			id := newUser(role)
			check(a, "set the password of a user of role "+role, ok,
				a.do("PUT", fmt.Sprintf("/api/v1/users/%d", id), `{"password":"another long passphrase"}`))
			check(a, "change the email of a user of role "+role, ok,
				a.do("PUT", fmt.Sprintf("/api/v1/users/%d", id), mustJSON(map[string]string{"email": fmt.Sprintf("moved%d@example.com", n)})))
			check(a, "remove a user of role "+role, ok, a.do("DELETE", fmt.Sprintf("/api/v1/users/%d", id), ""))

			viewer := newUser(marquee.RoleViewer)
			r = a.do("PUT", fmt.Sprintf("/api/v1/users/%d", viewer), userBody(map[string]any{}, role))
			check(a, "make a viewer "+role, ok, r)
			if want := map[bool]string{true: role, false: marquee.RoleViewer}[ok]; roleOf(viewer) != want {
				t.Errorf("%s: after making a viewer %s (%d), the user's role is %s; want %s", a.name, role, r.status, roleOf(viewer), want)
			}
			if role != marquee.RoleViewer {
				demoted := newUser(role)
				check(a, "demote a user of role "+role+" to viewer", ok,
					a.do("PUT", fmt.Sprintf("/api/v1/users/%d", demoted), `{"role":"viewer"}`))
			}
		}
		for _, sc := range marquee.Scopes {
			one, _, _ := marquee.ParseScopes([]string{string(sc)})
			ok := may(a, one)
			check(a, "create a "+string(sc)+" key", ok,
				a.do("POST", "/api/v1/keys", mustJSON(map[string]any{"name": "made", "scopes": []string{string(sc)}})))
			_, id := in.createKey("target", string(sc))
			check(a, "revoke a "+string(sc)+" key", ok, a.do("DELETE", fmt.Sprintf("/api/v1/keys/%d", id), ""))
		}
	}
}

// TestKeysThatOnlyPost: an advertiser's postback key (conversions:write,
// nothing else) posts conversions and nothing of credentials — making,
// listing or revoking postback keys and rotating the conversion secret
// are a 403 to it, and to a session it opened — so a leaked server key
// cannot mint keys that outlive it; and when a key is revoked, the keys it
// made die with it.
func TestKeysThatOnlyPost(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	account, _ := in.keyFrom(`{"name":"acme","scopes":["conversions:write","reports:read"],"advertisers":["1"]}`)
	r := in.do("POST", "/api/v1/advertisers/1/postback-keys", account, "application/json", "")
	var pk struct {
		ID  int64
		Key string
	}
	if json.Unmarshal([]byte(r.body), &pk); r.status != 201 || pk.Key == "" {
		t.Fatalf("the account's postback key = %d %s; want 201", r.status, r.body)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/advertisers/1/postback-keys"},
		{"GET", "/api/v1/advertisers/1/postback-keys"},
		{"DELETE", fmt.Sprintf("/api/v1/advertisers/1/postback-keys/%d", pk.ID)},
		{"POST", "/api/v1/advertisers/1/conversion-secret"},
	} {
		if r := in.do(c.method, c.path, pk.Key, "application/json", ""); r.status != 403 || !strings.Contains(r.body, "only posts conversions") {
			t.Errorf("%s %s with the postback key = %d %s; want 403", c.method, c.path, r.status, r.body)
		}
	}
	if r := in.signIn(t, mustJSON(map[string]string{"key": pk.Key})).do("POST", "/api/v1/advertisers/1/postback-keys", ""); r.status != 403 {
		t.Errorf("a postback key from a session the postback key opened = %d %s; want 403", r.status, r.body)
	}
	// The account's key revoked: the postback key it made dies with it.
	var keys struct{ Keys []struct{ ID int64 } }
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/keys", "").body), &keys)
	var accountID int64
	for _, k := range keys.Keys {
		if k.ID != pk.ID {
			accountID = k.ID
		}
	}
	in.expect(in.admin("DELETE", fmt.Sprintf("/api/v1/keys/%d", accountID), ""), 204, "")
	if r := in.do("POST", "/api/v1/conversions", pk.Key, "application/json", `{}`); r.status != 401 {
		t.Errorf("a postback with the key its revoked maker made = %d %s; want 401", r.status, r.body)
	}
}
