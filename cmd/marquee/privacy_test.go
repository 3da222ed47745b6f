package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/privacy/privacytest"
)

// The visitor every privacy test sends: an address of each family and a
// user key, which must never reach a file, a webhook or a stream where
// the mode says so.
const (
	visitorV4  = "203.0.113.77"
	visitorV6  = "2001:db8:1234:5678::1"
	visitorKey = "visitor-42"
	referrer   = "https://news.example:8443/story?email=ana%40example.com#top"
)

// privacyServer runs a server in mode behind a trusted proxy (so that a
// test names the visitor's address), with a campaign, an ad with a click
// URL on placement "side" and a short link "promo"; a webhook of clicks
// delivers to its hooks; flags (a broker's) go to the server too.
type privacyServer struct {
	*instance
	mu    sync.Mutex
	hooks []string
}

func newPrivacyServer(t *testing.T, mode string, flags ...string) *privacyServer {
	t.Helper()
	p := &privacyServer{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.hooks = append(p.hooks, string(b))
		p.mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	flags = append([]string{"-insecure-admin", "-privacy", mode, "-trusted-proxies", "127.0.0.1/32", "-events-flush", "20ms",
		"-webhooks-allow-http", "-webhooks-allow-private", "-reports-flush", "100ms"}, flags...)
	p.instance = start(t, t.TempDir(), nil, flags...)
	in := p.instance
	cappedAd(in)
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/a","code":"promo"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/webhooks", fmt.Sprintf(`{"url":%q,"events":["click"]}`, hook.URL)), 201, "")
	return p
}

// cappedAd gives in one campaign capped at one serve a day per user, with
// one ad (an HTML creative with a click URL) on placement "side".
func cappedAd(in *instance) {
	in.t.Helper()
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Capped",` + flight + `,"frequencyCap":{"count":1,"window":"24h"}}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"one",`+flight+`,"campaignId":"1","creative":{"type":"html","width":300,"height":250,"html":"<a href='{clickUrl}'>x</a>","clickUrl":"https://acme.example/"}}`), 201, "")
}

// from sends a request as the visitor at addr (through the trusted
// proxy), with header's pairs.
func (p *privacyServer) from(addr, method, path, contentType, body string, header ...string) response {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.url+path, strings.NewReader(body))
	req.Header.Set("X-Forwarded-For", addr)
	req.Header.Set("User-Agent", iphoneUA) // a person's browser: a bot's events are never verified
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// decide asks for one ad on "side" for the visitor's key with consent
// (a JSON value, or "") and header, and returns its tracking URLs (paths)
// and the answer.
func (p *privacyServer) decide(consent string, header ...string) (impression, view, click string, answer string) {
	p.t.Helper()
	body := `{"placements":[{"div":"a","placement":"side"}],"user":{"key":"` + visitorKey + `"}`
	if consent != "" {
		body += `,"consent":` + consent
	}
	r := p.from(visitorV4, "POST", "/api/v1/decisions", "application/json", body+"}", header...)
	var got struct {
		Decisions map[string][]struct{ ImpressionURL, ViewURL, ClickURL string }
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &got) != nil {
		p.t.Fatalf("decisions = %d %s", r.status, r.body)
	}
	if len(got.Decisions["a"]) == 0 {
		return "", "", "", r.body
	}
	a := got.Decisions["a"][0]
	return strings.TrimPrefix(a.ImpressionURL, p.url), strings.TrimPrefix(a.ViewURL, p.url), strings.TrimPrefix(a.ClickURL, p.url), r.body
}

// everyPath sends one event down every path: a beacon, a batch, a
// redirect, and a decision's impression, view and click.
func (p *privacyServer) everyPath(gdpr string) {
	p.t.Helper()
	consent := ""
	if gdpr != "" {
		consent = `{"gdpr":` + gdpr + `}`
	}
	q := "/e?type=beacon&uid=" + visitorKey
	if gdpr != "" {
		q += "&gdpr=" + gdpr
	}
	p.expect(p.from(visitorV4, "GET", q, "", ""), 204, "")
	p.expect(p.from(visitorV6, "POST", strings.Replace(q, "/e?type=beacon&uid="+visitorKey, "/e?", 1), "application/json",
		`[{"type":"batch","uid":"`+visitorKey+`"}]`), 202, "")
	if r := p.from(visitorV4, "GET", "/r/promo", "", "", "Referer", referrer); r.status != 302 {
		p.t.Fatalf("redirect = %d %s", r.status, r.body)
	}
	imp, view, click, answer := p.decide(consent)
	if imp == "" {
		p.t.Fatalf("no ad decided: %s", answer)
	}
	for _, u := range []string{imp, view, click} {
		if r := p.from(visitorV6, "GET", u, "", ""); r.status >= 400 {
			p.t.Fatalf("GET %s = %d %s", u, r.status, r.body)
		}
	}
}

// files returns the event lines the server wrote, decoded, and their
// bytes.
func files(t *testing.T, data string) ([]map[string]any, string) {
	t.Helper()
	var lines []map[string]any
	for _, l := range eventLines(t, data) {
		if l["receivedAt"] != nil { // not a stream's cursor
			lines = append(lines, l)
		}
	}
	var raw bytes.Buffer
	filepath.WalkDir(filepath.Join(data, "events"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, "dt=") {
			catFile(p, &raw)
		}
		return nil
	})
	return lines, raw.String()
}

func byType(lines []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, l := range lines {
		typ, _ := l["type"].(string)
		out[typ] = append(out[typ], l)
	}
	return out
}

// Every event path, under each mode, writes what the mode says — checked
// in the bytes of the files, of the webhook's deliveries and of the Kafka
// stream: balanced and strict never hold the visitor's address or user
// key; off holds both; the uid of a beacon and of a decision's events is
// one pseudonym.
func TestPrivacyModesEveryPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode, gdpr     string
		ip4, ip6, ref  string
		rawUID, anyUID bool
	}{
		{"off", "", visitorV4, visitorV6, referrer, true, true},
		{"balanced", "", "203.0.113.0", "2001:db8:1234::", "https://news.example:8443/story", false, true},
		{"strict", "0", "203.0.113.0", "2001:db8:1234::", "https://news.example:8443", false, true},
		{"strict", "", "203.0.113.0", "2001:db8:1234::", "https://news.example:8443", false, false},
	} {
		t.Run(c.mode+"/gdpr="+c.gdpr, func(t *testing.T) {
			kafka := newKafkaBroker(t)
			p := newPrivacyServer(t, c.mode, kafka.flags()...)
			p.everyPath(c.gdpr)
			eventually(t, 15*time.Second, func() string {
				p.mu.Lock()
				defer p.mu.Unlock()
				if n := strings.Count(strings.Join(p.hooks, ""), `"type":"click"`); n < 2 {
					return fmt.Sprintf("the webhook has %d clicks; want the redirect's and the ad's", n)
				}
				return ""
			})
			// Kafka is sent to while the server runs; at its stop, what the
			// shutdown timeout leaves is sent at the next start (a -race run
			// on two loaded cores once stopped before the first send).
			eventually(t, 30*time.Second, func() string {
				seen := map[any]bool{}
				for _, s := range kafka.received(t) {
					seen[s.line["type"]] = true
				}
				for _, typ := range []string{"beacon", "batch", "click", "impression", "view"} {
					if !seen[typ] {
						return "Kafka has no " + typ + " event yet"
					}
				}
				return ""
			})
			p.stop()
			lines, raw := files(t, p.data)
			types := byType(lines)
			for _, typ := range []string{"beacon", "batch", "click", "impression", "view"} {
				if len(types[typ]) == 0 {
					t.Fatalf("no %s event in the files: %s", typ, raw)
				}
			}
			ipOf := map[string]string{"beacon": c.ip4, "batch": c.ip6, "impression": c.ip6, "view": c.ip6}
			for typ, want := range ipOf {
				if got := types[typ][0]["ip"]; got != want {
					t.Errorf("%s: %s event's ip = %v; want %s", c.mode, typ, got, want)
				}
			}
			for _, l := range types["click"] {
				if l["code"] == "promo" && l["referrer"] != c.ref {
					t.Errorf("%s: the redirect's referrer = %v; want %s", c.mode, l["referrer"], c.ref)
				}
			}
			uids := map[string]any{}
			for _, typ := range []string{"beacon", "batch", "impression", "view"} {
				uids[typ] = types[typ][0]["uid"]
			}
			switch {
			case !c.anyUID:
				for typ, u := range uids {
					if u != nil || types[typ][0]["limited"] != "nosignal" {
						t.Errorf("%s without a signal: %s event's uid = %v, limited = %v; want none, nosignal", c.mode, typ, u, types[typ][0]["limited"])
					}
				}
			case c.rawUID:
				if uids["beacon"] != visitorKey || uids["batch"] != visitorKey {
					t.Errorf("off: beacon and batch uids = %v, %v; want %s as sent", uids["beacon"], uids["batch"], visitorKey)
				}
			default:
				for typ, u := range uids {
					if u == nil || u != uids["impression"] {
						t.Errorf("%s: uids %v; want one pseudonym on every path (%s differs)", c.mode, uids, typ)
						break
					}
				}
			}
			streamed := kafka.received(t)
			if len(streamed) < len(lines) {
				var got []any
				for _, s := range streamed {
					got = append(got, s.line["type"])
				}
				t.Errorf("Kafka has %d events (%v); want the files' %d (%v)", len(streamed), got, len(lines), types)
			}
			var streamRaw strings.Builder
			for _, s := range streamed {
				b, _ := json.Marshal(s.line)
				streamRaw.Write(b)
			}
			p.mu.Lock()
			hooked := strings.Join(p.hooks, "\n")
			p.mu.Unlock()
			for where, bytes := range map[string]string{"files": raw, "webhook": hooked, "stream": streamRaw.String()} {
				for _, secret := range []string{visitorV4, strings.TrimSuffix(visitorV6, "::1"), visitorKey, "ana%40example.com"} {
					if c.mode != "off" && strings.Contains(bytes, secret) {
						t.Errorf("%s: the %s hold %q", c.mode, where, secret)
					}
				}
			}
			if c.mode == "off" && (!strings.Contains(raw, visitorV4) || !strings.Contains(raw, visitorKey)) {
				t.Errorf("off: the files lack the full address or the key as sent:\n%s", raw)
			}
		})
	}
}

// Consent: GPC and a refused TCF string keep the visitor from being
// followed — no user key used (the frequency cap does not apply), no uid
// stored, the address truncated even in off mode, and the event says
// why —; consent given, or GDPR not applying, lets the key work.
func TestPrivacyConsent(t *testing.T) {
	t.Parallel()
	given := privacytest.TCString([]int{1, 2, 7}, []int{1})
	refused := privacytest.TCString([]int{2, 7}, []int{1})
	p := newPrivacyServer(t, "off")

	// Refused: twice served (no cap by user), no user echoed.
	for i := range 2 {
		imp, _, _, answer := p.decide(`{"gdpr":1,"tcf":"` + refused + `"}`)
		if imp == "" || strings.Contains(answer, `"user"`) {
			t.Fatalf("decision %d with consent refused = %s; want an ad (the cap cannot count) and no user", i, answer)
		}
		if i == 0 {
			p.expect(p.from(visitorV4, "GET", imp, "", ""), 204, "")
		}
	}
	// The publisher's own refusal (the tag's data-consent="0").
	if imp, _, _, answer := p.decide(`{"given":false}`); imp == "" || strings.Contains(answer, `"user"`) {
		t.Fatalf("decision with consent.given false = %s; want an ad and no user", answer)
	} else {
		p.expect(p.from(visitorV4, "GET", imp, "", ""), 204, "")
	}
	// Given: the cap counts the key — the first is served, the second not.
	imp, _, _, answer := p.decide(`{"gdpr":1,"tcf":"` + given + `"}`)
	if imp == "" || !strings.Contains(answer, `"user":{"key":"`+visitorKey+`"}`) {
		t.Fatalf("decision with consent given = %s; want an ad for the user", answer)
	}
	p.expect(p.from(visitorV4, "GET", imp, "", ""), 204, "")
	if imp, _, _, answer := p.decide(`{"gdpr":0}`); imp != "" {
		t.Fatalf("a second decision for the key (GDPR not applying) = %s; want none: capped at 1 a day", answer)
	}
	// GPC opts out of sale and sharing, not of a user key
	// (docs/privacy.md#activities): the cap still holds.
	if imp, _, _, answer := p.decide(`{"gdpr":1,"tcf":"`+given+`"}`, "Sec-GPC", "1"); imp != "" {
		t.Fatalf("a decision for the key under GPC = %s; want none: its cap holds", answer)
	}
	// Beacons: GPC, refused, given, unsaid.
	p.expect(p.from(visitorV4, "GET", "/e?type=gpc&uid="+visitorKey, "", "", "Sec-GPC", "1"), 204, "")
	p.expect(p.from(visitorV4, "GET", "/e?type=refused&uid="+visitorKey+"&gdpr=1&gdpr_consent="+refused, "", ""), 204, "")
	p.expect(p.from(visitorV4, "GET", "/e?type=given&uid="+visitorKey+"&gdpr=1&gdpr_consent="+given, "", ""), 204, "")
	p.expect(p.from(visitorV4, "POST", "/e?gdpr=1", "application/json", `{"type":"nostring","uid":"`+visitorKey+`"}`), 202, "")
	p.expect(p.from(visitorV4, "GET", "/e?type=nogdpr&uid="+visitorKey+"&gdpr=0", "", ""), 204, "")
	p.stop()

	lines, raw := files(t, p.data)
	if strings.Contains(raw, given) || strings.Contains(raw, refused) {
		t.Error("a consent string was written into an event")
	}
	types := byType(lines)
	for typ, want := range map[string]string{"gpc": "", "refused": "tcf", "nostring": "tcf", "given": "", "nogdpr": ""} {
		if len(types[typ]) != 1 {
			t.Fatalf("%d %s events; want 1", len(types[typ]), typ)
		}
		l := types[typ][0]
		limited, _ := l["limited"].(string)
		followed := want == ""
		if limited != want || (l["uid"] == visitorKey) != followed || (l["ip"] == visitorV4) != followed {
			t.Errorf("off, %s: limited %q, uid %v, ip %v; want limited %q and the key and full address only when followed", typ, limited, l["uid"], l["ip"], want)
		}
	}
	imps := types["impression"]
	if len(imps) != 3 {
		t.Fatalf("%d impressions; want 3", len(imps))
	}
	limits := map[string]bool{}
	for _, l := range imps {
		limited, _ := l["limited"].(string)
		limits[limited] = true
		if (limited != "") == (l["uid"] != nil) || (limited != "") == (l["ip"] == visitorV4) {
			t.Errorf("impression %v: want a refused decision's without uid and with a truncated address, the consented one's with both", l)
		}
	}
	if !limits["tcf"] || !limits["consent"] || !limits[""] {
		t.Errorf("impressions' limits %v; want tcf, consent and none", limits)
	}
}

// An erasure reaches every instance: each forgets the subject's
// frequency-cap serves (memory counters, so only the changelog can tell
// them), the audit log records it once, by pseudonym, and the answer
// says what is kept. (Who may erase: TestRouteScopeMatrix.)
func TestErasureAcrossThreeInstances(t *testing.T) { t.Parallel(); eachShared(t, testErasure) }

func testErasure(t *testing.T, db sharedDB, dsn string) {
	flags := []string{"-tracking-key", strings.Repeat("k", 32), "-counters", "memory", "-poll", "50ms"}
	ins := []*instance{db.start(t, dsn, flags...), db.start(t, dsn, flags...), db.start(t, dsn, flags...)}
	a := ins[0]
	cappedAd(a)
	decide := func(in *instance, user string) response {
		return in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"a","placement":"side"}],"user":{"key":"`+user+`"}}`)
	}
	served := func(in *instance, user string) bool {
		r := decide(in, user)
		if r.status != 200 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		return strings.Contains(r.body, `"adId"`)
	}
	for i, in := range ins {
		eventually(t, 10*time.Second, func() string {
			if r := decide(in, fmt.Sprint("probe-", i, time.Now().UnixNano())); r.status != 200 || !strings.Contains(r.body, `"adId"`) {
				return fmt.Sprintf("instance %d serves nothing yet: %d %s", i, r.status, r.body)
			}
			return ""
		})
		if served(in, visitorKey); served(in, visitorKey) {
			t.Fatalf("instance %d: a second decision for the key was served; want capped", i)
		}
	}
	if r := a.admin("DELETE", "/api/v1/privacy/subjects/"+strings.Repeat("x", 300), ""); r.status != 400 || !strings.Contains(r.body, `"userKey"`) {
		t.Fatalf("erasure of a 300-byte key = %d %s; want 400 naming userKey", r.status, r.body)
	}
	r := ins[1].admin("DELETE", "/api/v1/privacy/subjects/"+visitorKey, "")
	var erased struct {
		Subject    string
		Pseudonyms int
		Removed    []struct {
			Data  string
			Count *int
		}
		Kept []struct{ Data, Reason string }
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &erased) != nil || erased.Pseudonyms != 1 || len(erased.Removed) != 1 ||
		erased.Removed[0].Count == nil || *erased.Removed[0].Count != 1 || len(erased.Kept) != 2 || strings.Contains(r.body, visitorKey) {
		t.Fatalf("erasure on instance 1 = %d %s; want its one serve there removed, two kinds of data kept, the key never echoed", r.status, r.body)
	}
	for i, in := range ins {
		eventually(t, 10*time.Second, func() string {
			if !served(in, visitorKey) {
				return fmt.Sprintf("instance %d still caps the erased subject", i)
			}
			return ""
		})
	}
	audit := a.admin("GET", "/api/v1/audit?entity=subject", "")
	if audit.status != 200 || !strings.Contains(audit.body, `"entityId":"`+erased.Subject+`"`) || strings.Count(audit.body, `"action":"erase"`) != 1 ||
		strings.Contains(audit.body, visitorKey) {
		t.Errorf("audit log = %d %s; want one erase entry naming the pseudonym %s, never the key", audit.status, audit.body, erased.Subject)
	}
}

// marquee privacy export finds a subject's events in the files by its
// pseudonym, which only the server's secret computes.
func TestPrivacyExport(t *testing.T) {
	t.Parallel()
	p := newPrivacyServer(t, "balanced")
	p.expect(p.from(visitorV4, "GET", "/e?type=mine&uid="+visitorKey, "", ""), 204, "")
	p.expect(p.from(visitorV4, "GET", "/e?type=theirs&uid=someone-else", "", ""), 204, "")
	p.stop()
	var out, errs bytes.Buffer
	if err := run(t.Context(), []string{"privacy", "export", "-data", p.data, "-user", visitorKey}, func(string) string { return "" }, nil, &out, &errs); err != nil {
		t.Fatalf("privacy export = %v: %s", err, errs.String())
	}
	var got struct {
		Mode       string
		Pseudonyms []string
		Events     []map[string]any
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("privacy export wrote %q: %v", out.String(), err)
	}
	if got.Mode != "balanced" || len(got.Pseudonyms) != 1 || len(got.Events) != 1 || got.Events[0]["type"] != "mine" || got.Events[0]["uid"] != got.Pseudonyms[0] {
		t.Errorf("privacy export = %s; want the one event of the key, by its pseudonym", out.String())
	}
	if err := run(t.Context(), []string{"privacy", "export", "-data", p.data}, func(string) string { return "" }, nil, &out, &errs); err == nil {
		t.Error("privacy export without -user: no error")
	}
}

// -events-retention deletes, at start and hourly, the event files under
// <data>/events last written before it (the clock is the files' times,
// set here as if written 40 and 10 days ago); newer ones stay.
func TestEventsRetention(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	old := filepath.Join(data, "events", "dt=2026-10-01", "hour=09", "a-1.ndjson")
	recent := filepath.Join(data, "events", "dt=2026-11-01", "hour=09", "a-2.ndjson")
	for p, age := range map[string]time.Duration{old: 40 * 24 * time.Hour, recent: 10 * 24 * time.Hour} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"receivedAt":"2026-10-01T09:00:00.000000000Z","id":"x","ip":"203.0.113.0","ua":"","type":"old"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	start(t, data, nil, "-insecure-admin", "-events-retention", "720h")
	eventually(t, 10*time.Second, func() string {
		if _, err := os.Stat(old); err == nil {
			return "the 40-day-old file is still there"
		}
		return ""
	})
	if _, err := os.Stat(filepath.Dir(old)); err == nil {
		t.Error("the emptied partition is still there")
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the 10-day-old file: %v; want it kept", err)
	}
	var errs bytes.Buffer
	if err := run(t.Context(), []string{"serve", "-data", t.TempDir(), "-events-retention", "-1h"}, func(string) string { return "" }, nil, io.Discard, &errs); err == nil || !strings.Contains(err.Error(), "-events-retention") {
		t.Errorf("serve -events-retention -1h = %v; want an error naming the flag", err)
	}
}

// A user key with "/", "." and "%" in it is erased when its path segment
// is percent-encoded (as url.PathEscape does): the route reads the key
// from the raw request, not from the path fasthttp normalises; a key
// that starts with ".." (which no path can carry) through ?userKey=.
func TestErasureOfAwkwardKeys(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-tracking-key", strings.Repeat("k", 32))
	cappedAd(in)
	for _, key := range []string{"a/b", "../x", "./y.z", "50%off", "a%2Fb", "//", "..", "."} {
		decide := func() bool {
			r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"a","placement":"side"}],"user":{"key":"`+key+`"}}`)
			return r.status == 200 && strings.Contains(r.body, `"adId"`)
		}
		if !decide() || decide() {
			t.Fatalf("key %q: want served once, then capped", key)
		}
		for i, path := range []string{"/api/v1/privacy/subjects/" + url.PathEscape(key), "/api/v1/privacy/subjects?userKey=" + url.QueryEscape(key)} {
			r := in.admin("DELETE", path, "")
			if want := []string{`"count":1`, `"count":0`}[i]; r.status != 200 || !strings.Contains(r.body, want) {
				t.Fatalf("erasure of %q at %s = %d %s; want %s (its one serve removed, then nothing left)", key, path, r.status, r.body, want)
			}
		}
		if !decide() {
			t.Fatalf("key %q still capped after its erasure", key)
		}
	}
}

// TestBeaconEmailsRedacted: what looks like an email address in a
// beacon's values — a GET's field, a POST's string or nested JSON — is
// written to the event files as [email]; with -events-keep-emails, as
// sent.
func TestBeaconEmailsRedacted(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		var flags []string
		if keep {
			flags = append(flags, "-events-keep-emails")
		}
		p := newPrivacyServer(t, "off", flags...)
		p.expect(p.from(visitorV4, "GET", "/e?type=signup&email=ana.lopez%40mail.example&plan=pro", "", ""), 204, "")
		p.expect(p.from(visitorV4, "POST", "/e", "application/json", `{"type":"checkout","user":{"email":"bo@example.org","n":2},"note":"mail bo@example.org"}`), 202, "")
		p.stop()
		_, raw := files(t, p.data)
		if got := strings.Contains(raw, "ana.lopez@mail.example") || strings.Contains(raw, "bo@example.org"); got != keep {
			t.Errorf("keep %v: the event files hold the addresses: %v; want %v:\n%s", keep, got, keep, raw)
		}
		if !keep && (!strings.Contains(raw, `"email":"[email]"`) || !strings.Contains(raw, `"note":"mail [email]"`) || !strings.Contains(raw, `"plan":"pro"`)) {
			t.Errorf("the event files =\n%s\nwant each address as [email], the other values as sent", raw)
		}
	}
}

// TestPrivacySignals: a decision's GPP, US Privacy and TCF purposes
// decide, over HTTP, what its events keep as docs/privacy.md's table
// says — each visitor a key of its own (the campaign is capped at one a
// day): a GPP usnat opt-out of sale keeps the key (its cap counts) and
// its impression's uid (measurement by user), the GET route's gpp and
// gpp_sid likewise; TCF purpose 1 without 7 keeps the key but no uid; a
// malformed GPP string keeps neither. The strings are the IAB encoders'
// (privacy/testdata/vectors.json).
func TestPrivacySignals(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../privacy/testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct{ Name, GPP, TCF string }
	json.Unmarshal(raw, &vs)
	str := map[string]string{}
	for _, v := range vs {
		str[v.Name] = v.GPP + v.TCF
	}
	saleOptOut, p1Only := str["gpp usnat: SaleOptOut"], str["tcf: purpose 1 only"]
	if saleOptOut == "" || p1Only == "" {
		t.Fatal("the vectors lack the usnat sale opt-out or the TCF string of purpose 1 only")
	}
	p := newPrivacyServer(t, "balanced")
	decide := func(key, consent string) (imp, answer string) {
		t.Helper()
		r := p.from(visitorV4, "POST", "/api/v1/decisions", "application/json",
			`{"placements":[{"div":"a","placement":"side"}],"user":{"key":"`+key+`"},"consent":`+consent+`}`)
		if r.status != 200 {
			t.Fatalf("decision of %s = %d %s", key, r.status, r.body)
		}
		if strings.Contains(r.body, `"impressionUrl":"`) {
			imp = strings.Split(strings.Split(r.body, `"impressionUrl":"`)[1], `"`)[0]
			imp = imp[strings.Index(imp, "/t/"):]
		}
		return imp, r.body
	}
	for _, c := range []struct{ key, consent string }{
		{"us-opted-out", `{"gpp":"` + saleOptOut + `","gppSid":[7]}`},
		{"p1-only", `{"gdpr":1,"tcf":"` + p1Only + `"}`},
		{"malformed", `{"gpp":"DBABLA~not!base64"}`},
	} {
		imp, answer := decide(c.key, c.consent)
		if imp == "" {
			t.Fatalf("%s: no ad: %s", c.key, answer)
		}
		p.expect(p.from(visitorV4, "GET", imp, "", ""), 204, "")
		again, _ := decide(c.key, c.consent)
		if capped := again == ""; capped != (c.key != "malformed") {
			t.Errorf("%s: a second decision served = %v; want the cap to hold exactly when a user key may be used", c.key, !capped)
		}
	}
	r := p.from(visitorV4, "GET", "/api/v1/decisions?placement=side&user=get-opted-out&gpp="+saleOptOut+"&gpp_sid=7", "", "")
	if r.status != 200 || !strings.Contains(r.body, `"impressionUrl":"`) {
		t.Fatalf("GET decision with gpp = %d %s", r.status, r.body)
	}
	imp := strings.Split(strings.Split(r.body, `"impressionUrl":"`)[1], `"`)[0]
	p.expect(p.from(visitorV4, "GET", imp[strings.Index(imp, "/t/"):], "", ""), 204, "")
	// The report counts the slots whose signals denied something, by
	// signal: the US opt-out's (POST twice — the second capped — and GET
	// once), purpose 1 only's (twice), the malformed string's (twice).
	eventually(t, 5*time.Second, func() string {
		want := `"limitedRequests":{"gpp":5,"tcf":2,"usnat":3}`
		if r := p.admin("GET", "/api/v1/reports?by=placement&granularity=total", ""); strings.Count(r.body, want) != 2 {
			return "want " + want + " in the row and the totals: " + r.body
		}
		return ""
	})
	// The same by the privacy dimension: a row per signal, its slots
	// beside all of the site's.
	var byPrivacy struct {
		Rows []struct {
			Dims              map[string]struct{ Value string }
			Limited, Requests int64
			LimitedRate       float64
		}
	}
	if r := p.admin("GET", "/api/v1/reports?by=privacy,placement&granularity=total", ""); r.status != 200 || json.Unmarshal([]byte(r.body), &byPrivacy) != nil {
		t.Fatalf("by privacy = %d %s", r.status, r.body)
	}
	got := map[string]int64{}
	var requests int64
	for _, r := range byPrivacy.Rows {
		got[r.Dims["privacy"].Value] = r.Limited
		requests = r.Requests
		if r.Requests == 0 || r.LimitedRate != float64(r.Limited)/float64(r.Requests) {
			t.Errorf("by privacy: row %v: limited %d of requests %d, rate %v", r.Dims, r.Limited, r.Requests, r.LimitedRate)
		}
	}
	if fmt.Sprint(got) != "map[gpp:5 tcf:2 usnat:3]" || requests < 7 {
		t.Errorf("by privacy: limited by signal %v of %d requests; want map[gpp:5 tcf:2 usnat:3] of at least 7", got, requests)
	}
	// COPPA: a child-directed site's placement, and a child-directed
	// placement, answer no user whatever the consent; their impressions
	// say "coppa".
	p.expect(p.admin("POST", "/api/v1/sites", `{"name":"kids","revenueShare":0.5,"childDirected":true}`), 201, "")
	p.expect(p.admin("POST", "/api/v1/placements", `{"name":"kids-side","site":"kids","sizes":["300x250"]}`), 201, "")
	if r := p.admin("POST", "/api/v1/placements", `{"name":"teen","sizes":["300x250"],"childDirected":true}`); r.status != 201 || !strings.Contains(r.body, `"childDirected":true`) {
		t.Fatalf("a child-directed placement = %d %s", r.status, r.body)
	}
	for _, pl := range []string{"kids-side", "teen"} {
		eventually(t, 5*time.Second, func() string {
			r := p.from(visitorV4, "POST", "/api/v1/decisions", "application/json",
				`{"placements":[{"div":"a","placement":"`+pl+`"}],"user":{"key":"child-`+pl+`"},"consent":{"given":true}}`)
			if strings.Contains(r.body, `"user"`) || !strings.Contains(r.body, `"impressionUrl":"`) {
				return pl + ": want an ad and no user: " + r.body
			}
			imp := strings.Split(strings.Split(r.body, `"impressionUrl":"`)[1], `"`)[0]
			p.expect(p.from(visitorV4, "GET", imp[strings.Index(imp, "/t/"):], "", ""), 204, "")
			return ""
		})
	}
	p.stop()
	lines, _ := files(t, p.data)
	limited := map[string]int{}
	signals := map[string]bool{}
	for _, l := range byType(lines)["impression"] {
		lim, _ := l["limited"].(string)
		sig, _ := l["signals"].(string)
		den, _ := l["denied"].(string)
		signals[sig+" / "+den] = true
		if _, uid := l["uid"]; uid != (lim == "") {
			t.Errorf("an impression limited %q with uid %v; want a uid exactly when nothing limited it", lim, l["uid"])
		}
		limited[lim]++
	}
	// The US opt-outs' (POST and GET): followed; purpose 1 without 7:
	// "measure"; the malformed string's: "malformed"; the children's:
	// "coppa".
	if want := map[string]int{"": 2, "measure": 1, "malformed": 1, "coppa": 2}; fmt.Sprint(limited) != fmt.Sprint(want) {
		t.Errorf("impressions by limit = %v; want %v", limited, want)
	}
	// What the events say of their signals and of what they denied.
	for _, want := range []string{
		"gpp,usnat / personalise,attribute,transmitUserId,transmitPreciseGeo,transmitIp,syncUser",
		"tcf / personalise,measure,attribute,transmitUserId,transmitPreciseGeo,transmitIp,syncUser",
		"coppa,given / userKey,personalise,measure,attribute,transmitUserId,transmitPreciseGeo,transmitIp,syncUser",
	} {
		if !signals[want] {
			t.Errorf("no impression says %q: %v", want, signals)
		}
	}
}

// TestPrivacyRules: with -privacy-rules, a rule that denies Marquee's
// user key to viewers of one site takes the key from that site's
// decisions only (no user answered, its impression limited "rule"); a
// bad file stops the server at start, naming the flag and the rule.
func TestPrivacyRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.json")
	os.WriteFile(file, []byte(`{"rules":[{"activity":"userKey","allow":false,"components":["marquee"],"when":{"site":["strict-site"]}}]}`), 0o600)
	p := newPrivacyServer(t, "balanced", "-privacy-rules", file)
	p.expect(p.admin("POST", "/api/v1/sites", `{"name":"strict-site","revenueShare":0.5}`), 201, "")
	p.expect(p.admin("POST", "/api/v1/placements", `{"name":"strict-side","site":"strict-site","sizes":["300x250"]}`), 201, "")
	r := p.from(visitorV4, "POST", "/api/v1/decisions", "application/json", `{"placements":[{"div":"a","placement":"strict-side"}],"user":{"key":"k1"},"consent":{"given":true}}`)
	if r.status != 200 || strings.Contains(r.body, `"user"`) || !strings.Contains(r.body, `"impressionUrl"`) {
		t.Fatalf("a decision on the ruled site = %d %s; want an ad and no user", r.status, r.body)
	}
	imp := strings.Split(strings.Split(r.body, `"impressionUrl":"`)[1], `"`)[0]
	p.expect(p.from(visitorV4, "GET", imp[strings.Index(imp, "/t/"):], "", ""), 204, "")
	if r := p.from(visitorV4, "POST", "/api/v1/decisions", "application/json", `{"placements":[{"div":"a","placement":"side"}],"user":{"key":"k2"},"consent":{"given":true}}`); !strings.Contains(r.body, `"user":{"key":"k2"}`) {
		t.Errorf("a decision elsewhere = %s; want its user", r.body)
	}
	p.stop()
	lines, _ := files(t, p.data)
	if imps := byType(lines)["impression"]; len(imps) != 1 || imps[0]["limited"] != "rule" || imps[0]["uid"] != nil {
		t.Errorf("impressions = %v; want one, limited by the rule, without a uid", imps)
	}
	os.WriteFile(file, []byte(`{"rules":[{"activity":"sell"}]}`), 0o600)
	err := run(t.Context(), []string{"serve", "-data", t.TempDir(), "-privacy-rules", file}, func(string) string { return "" }, nil, nil, new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "-privacy-rules") || !strings.Contains(err.Error(), "rules[0].activity") {
		t.Errorf("a bad rules file = %v; want an error naming the flag and the rule", err)
	}
}
