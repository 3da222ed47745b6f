package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

const iphoneUA = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15"

// get sends a GET as an iPhone would.
func get(client *http.Client, url string) (int, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("User-Agent", iphoneUA)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// follow requests a short link the way a browser would, without following
// it.
func (in *instance) follow(method, code string, header ...string) response {
	in.t.Helper()
	req, _ := http.NewRequest(method, in.url+"/r/"+code, nil)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		in.t.Fatalf("%s /r/%s: %v", method, code, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, string(b)}
}

// link is the admin view of a link, read the way a client would
// (encoding/json matches the fields' names case-insensitively).
type link struct {
	Code, URL, Path string
	Domain          *string
	Title           string
	Tags            []string
	Redirect        int
	ExpiresAt, AdID *string // null when not set
	MaxClicks       *int64
	Clicks          int64
}

func decodeLink(t *testing.T, r response) link {
	t.Helper()
	var l link
	if err := json.Unmarshal([]byte(r.body), &l); err != nil {
		t.Fatalf("link body %q: %v", r.body, err)
	}
	return l
}

func TestLinkRedirects(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	// Create: custom code, each status, generated code.
	r := in.admin("POST", "/api/v1/links", `{"url":"https://example.com/landing?x=1","code":"spring-sale","redirect":301}`)
	in.expect(r, 201, "")
	if loc := r.header.Get("Location"); loc != "/api/v1/links/spring-sale" {
		t.Errorf("Location = %q", loc)
	}
	if l := decodeLink(t, r); l.Code != "spring-sale" || l.Path != "/r/spring-sale" || l.Redirect != 301 || l.MaxClicks != nil || l.ExpiresAt != nil {
		t.Errorf("created link = %+v", l)
	}
	for _, status := range []int{301, 302, 307, 308} {
		code := fmt.Sprintf("s%d", status)
		in.expect(in.admin("POST", "/api/v1/links", fmt.Sprintf(`{"url":"http://example.org/%d","code":%q,"redirect":%d}`, status, code, status)), 201, "")
		for _, method := range []string{"GET", "HEAD"} {
			r := in.follow(method, code)
			if r.status != status || r.header.Get("Location") != fmt.Sprintf("http://example.org/%d", status) {
				t.Errorf("%s /r/%s = %d Location %q; want %d to http://example.org/%d", method, code, r.status, r.header.Get("Location"), status, status)
			}
		}
	}
	gen := decodeLink(t, in.admin("POST", "/api/v1/links", `{"url":"https://example.com/"}`))
	if len(gen.Code) != 7 || gen.Redirect != 302 {
		t.Errorf("generated link = %+v; want a 7-character code and 302", gen)
	}
	if r := in.follow("GET", gen.Code); r.status != 302 || r.header.Get("Location") != "https://example.com/" {
		t.Errorf("GET /r/%s = %d %q", gen.Code, r.status, r.header.Get("Location"))
	}

	// Unknown, badly shaped, taken and reserved codes.
	for _, code := range []string{"nope", "Spring-Sale", "a.b", strings.Repeat("x", 65), "%00"} {
		if r := in.follow("GET", code); r.status != 404 || !strings.Contains(r.body, "no link") {
			t.Errorf("GET /r/%s = %d %s; want 404 no link", code, r.status, r.body)
		}
	}
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/","code":"spring-sale"}`), 409, "")
	for _, c := range []struct{ body, field string }{
		{`{"url":"https://x.test","code":"api"}`, "code"},
		{`{"url":"https://x.test","code":"Metrics"}`, "code"},
		{`{"url":"https://x.test","code":"with space"}`, "code"},
		{`{"url":"https://x.test","code":""}`, "code"},
		{`{"url":"javascript:alert(1)"}`, "url"},
		{`{"url":"ftp://example.com/file"}`, "url"},
		{`{"url":"/relative"}`, "url"},
		{`{"url":"https://"}`, "url"},
		{`{"url":"https://exa mple.com"}`, "url"},
		{`{}`, "url"},
		{`{"url":"https://x.test","redirect":303}`, "redirect"},
		{`{"url":"https://x.test","maxClicks":0}`, "maxClicks"},
		{`{"url":"https://x.test","expiresAt":"tomorrow"}`, "expiresAt"},
		{`{"url":"https://x.test","adId":"999"}`, "adId"},
		{`{"url":"https://x.test","bogus":1}`, "bogus"},
	} {
		r := in.admin("POST", "/api/v1/links", c.body)
		var e struct {
			Problems map[string]string `json:"problems"`
		}
		json.Unmarshal([]byte(r.body), &e)
		if r.status != 400 || e.Problems[c.field] == "" {
			t.Errorf("POST %s = %d %s; want 400 naming %s", c.body, r.status, r.body, c.field)
		}
	}
	in.expect(in.do("POST", "/api/v1/links", in.token, "text/html", `{"url":"https://x.test"}`), 415, "")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.test/`+strings.Repeat("a", 65<<10)+`"}`), 413, "")

	// Auth: every admin route needs the token; the redirect does not.
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/links"}, {"GET", "/api/v1/links"}, {"GET", "/api/v1/links/spring-sale"},
		{"PUT", "/api/v1/links/spring-sale"}, {"DELETE", "/api/v1/links/spring-sale"},
	} {
		for _, token := range []string{"", "wrong"} {
			if r := in.do(c.method, c.path, token, "application/json", `{"url":"https://x.test"}`); r.status != 401 {
				t.Errorf("%s %s with token %q = %d; want 401", c.method, c.path, token, r.status)
			}
		}
	}

	// Replace and delete are seen by the very next redirect.
	in.expect(in.admin("PUT", "/api/v1/links/spring-sale", `{"url":"https://example.com/summer","redirect":307}`), 200, "")
	if r := in.follow("GET", "spring-sale"); r.status != 307 || r.header.Get("Location") != "https://example.com/summer" {
		t.Errorf("after PUT: %d %q; want 307 to the new url", r.status, r.header.Get("Location"))
	}
	in.expect(in.admin("PUT", "/api/v1/links/spring-sale", `{"url":"https://x.test","code":"other"}`), 400, "")
	in.expect(in.admin("PUT", "/api/v1/links/nope", `{"url":"https://x.test"}`), 404, "")
	in.expect(in.admin("DELETE", "/api/v1/links/spring-sale", ""), 204, "")
	in.expect(in.follow("GET", "spring-sale"), 404, "")
	in.expect(in.admin("DELETE", "/api/v1/links/spring-sale", ""), 404, "")

	// A code first asked for while unknown (a cached miss) works once created.
	in.expect(in.follow("GET", "later"), 404, "")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/later","code":"later"}`), 201, "")
	if r := in.follow("GET", "later"); r.status != 302 {
		t.Errorf("GET /r/later after create = %d; want 302 (the cached miss invalidated)", r.status)
	}

	// List, newest first.
	var page struct {
		Items []link `json:"items"`
		Total int    `json:"total"`
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/links?limit=2", "").body), &page)
	if page.Total != 6 || len(page.Items) != 2 || page.Items[0].Code != "later" {
		t.Errorf("GET /api/v1/links?limit=2 = %+v; want 2 of 6, later first", page)
	}
	in.expect(in.admin("GET", "/api/v1/links?limit=0", ""), 400, "")
}

func TestLinkExpiryAndClickLimit(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-click-flush", "100ms")
	expires := time.Now().Add(time.Second).UTC().Truncate(time.Millisecond)
	in.expect(in.admin("POST", "/api/v1/links", fmt.Sprintf(`{"url":"https://x.test","code":"soon","expiresAt":%q}`, expires.Format(time.RFC3339Nano))), 201, "")
	past := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.test","code":"past"}`), 201, "")
	in.expect(in.admin("PUT", "/api/v1/links/past", fmt.Sprintf(`{"url":"https://x.test","code":"past","expiresAt":%q}`, past)), 200, "") // ends it
	if r := in.follow("GET", "soon"); time.Now().Before(expires) && r.status != 302 {
		t.Errorf("GET /r/soon before expiresAt = %d; want 302", r.status)
	}
	in.expect(in.follow("GET", "past"), 410, "")
	time.Sleep(time.Until(expires) + 20*time.Millisecond)
	if r := in.follow("GET", "soon"); r.status != 410 || !strings.Contains(r.body, "expired") {
		t.Errorf("GET /r/soon after expiresAt = %d %s; want 410 expired", r.status, r.body)
	}

	// maxClicks 3: three redirects, then 410 — HEAD counts none.
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.test","code":"three","maxClicks":3}`), 201, "")
	in.expect(in.follow("HEAD", "three"), 302, "")
	for i := range 3 {
		if r := in.follow("GET", "three"); r.status != 302 {
			t.Fatalf("redirect %d of 3 = %d; want 302", i+1, r.status)
		}
	}
	for _, method := range []string{"GET", "HEAD", "GET"} {
		if r := in.follow(method, "three"); r.status != 410 {
			t.Fatalf("%s after 3 clicks = %d; want 410", method, r.status)
		}
	}
	// Still 410 after the counts reach the store and the link is reloaded.
	eventually(t, 5*time.Second, func() string {
		if l := decodeLink(t, in.admin("GET", "/api/v1/links/three", "")); l.Clicks != 3 {
			return fmt.Sprintf("clicks = %d; want 3", l.Clicks)
		}
		return ""
	})
	if r := in.follow("GET", "three"); r.status != 410 {
		t.Fatalf("GET after the flush = %d; want 410", r.status)
	}
	// Raising the limit lets it redirect again.
	in.expect(in.admin("PUT", "/api/v1/links/three", `{"url":"https://x.test","maxClicks":4}`), 200, "")
	in.expect(in.follow("GET", "three"), 302, "")
	in.expect(in.follow("GET", "three"), 410, "")
}

// N redirects from concurrent clients: exactly N clicks in the store after
// a flush, and N click events in the files.
func TestClickCounting(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil, "-click-flush", "100ms", "-events-flush", "20ms")
	ad := in.admin("POST", "/api/v1/ad", `{"title":"with landing","startAt":"2020-01-01T00:00:00Z","endAt":"2999-01-01T00:00:00Z","url":"https://shop.example/landing"}`)
	in.expect(ad, 201, "")
	var created struct{ ID string }
	json.Unmarshal([]byte(ad.body), &created)
	var whole struct {
		URL  string `json:"url"`
		Link struct{ Code, Path string }
	}
	json.Unmarshal([]byte(in.do("GET", "/api/v1/ad/"+created.ID, "", "", "").body), &whole)
	if whole.URL != "https://shop.example/landing" || whole.Link.Path != "/r/"+whole.Link.Code || whole.Link.Code == "" {
		t.Fatalf("GET /api/v1/ad/%s = %+v; want its url and tracking link", created.ID, whole)
	}
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.test/b","code":"b"}`), 201, "")

	const clients, each = 8, 50
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				code := whole.Link.Code
				if i%2 == 1 {
					code = "b"
				}
				req, _ := http.NewRequest("GET", in.url+"/r/"+code, nil)
				req.Header.Set("Referer", fmt.Sprintf("https://ref.example/%d", c))
				resp, err := noFollow.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 302 {
					t.Errorf("GET /r/%s = %d", code, resp.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	want := int64(clients * each / 2)
	deadline := time.Now().Add(5 * time.Second)
	for {
		a := decodeLink(t, in.admin("GET", "/api/v1/links/"+whole.Link.Code, ""))
		b := decodeLink(t, in.admin("GET", "/api/v1/links/b", ""))
		if a.Clicks == want && b.Clicks == want {
			if a.AdID == nil || *a.AdID != created.ID {
				t.Errorf("tracking link adId = %v; want %s", a.AdID, created.ID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("clicks = %d and %d; want %d each", a.Clicks, b.Clicks, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, l := range eventLines(t, data) {
		if l["type"] != "click" {
			continue
		}
		got[l["code"].(string)]++
		if l["code"] == whole.Link.Code && l["adId"] != created.ID {
			t.Errorf("click event %v; want adId %s", l, created.ID)
		}
		if ref, _ := l["referrer"].(string); !strings.HasPrefix(ref, "https://ref.example/") || l["ip"] == "" || l["receivedAt"] == "" {
			t.Errorf("click event %v; want referrer, ip, receivedAt", l)
		}
	}
	if got[whole.Link.Code] != int(want) || got["b"] != int(want) {
		t.Fatalf("click events by code = %v; want %d each", got, want)
	}
}

// Clicks counted since the last flush reach the store at shutdown.
func TestClicksFlushedAtShutdown(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil, "-click-flush", "1h")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.test","code":"bye"}`), 201, "")
	for range 7 {
		in.expect(in.follow("GET", "bye"), 302, "")
	}
	if l := decodeLink(t, in.admin("GET", "/api/v1/links/bye", "")); l.Clicks != 0 {
		t.Fatalf("clicks before any flush = %d; want 0 (counted in memory)", l.Clicks)
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	again := start(t, data, nil)
	if l := decodeLink(t, again.admin("GET", "/api/v1/links/bye", "")); l.Clicks != 7 {
		t.Fatalf("clicks after a restart = %d; want 7 (flushed at shutdown)", l.Clicks)
	}
}

// Domains: the Host header picks the namespace, the same code on two
// domains is two links, the admin routes name one with ?domain=, and an
// unknown host is the default domain's (or a 404 with -unknown-hosts 404).
func TestLinkDomains(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil, "-link-domains", "go.brand.example,Links.Other.example", "-default-domain", "lnk.example",
		"-unknown-hosts", "404", "-events-flush", "20ms")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://default.example/","code":"sale"}`), 201, "")
	r := in.admin("POST", "/api/v1/links", `{"url":"https://brand.example/","code":"sale","domain":"GO.brand.example","title":"Brand sale","tags":["Spring"]}`)
	in.expect(r, 201, "")
	if loc := r.header.Get("Location"); loc != "/api/v1/links/sale?domain=go.brand.example" {
		t.Errorf("Location = %q; want the link on its domain", loc)
	}
	if l := decodeLink(t, r); l.Domain == nil || *l.Domain != "go.brand.example" || l.Title != "Brand sale" || len(l.Tags) != 1 || l.Tags[0] != "spring" {
		t.Errorf("created link = %+v; want its domain, title and tags", l)
	}
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.example/","code":"sale","domain":"go.brand.example"}`), 409, "")
	// The default domain's own name is the default domain.
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.example/","code":"sale","domain":"lnk.example"}`), 409, "")
	for _, c := range []struct{ body, field, msg string }{
		{`{"url":"https://x.example/","domain":"unknown.example"}`, "domain", "not one of this server's link domains: go.brand.example, links.other.example"},
		{`{"url":"https://x.example/","domain":"https://go.brand.example"}`, "domain", "not a hostname"},
	} {
		r := in.admin("POST", "/api/v1/links", c.body)
		if r.status != 400 || !strings.Contains(r.body, c.msg) {
			t.Errorf("POST %s = %d %s; want 400 naming %s: %s", c.body, r.status, r.body, c.field, c.msg)
		}
	}
	for _, c := range []struct{ host, location string }{
		{"go.brand.example", "https://brand.example/"},
		{"GO.BRAND.EXAMPLE:8080", "https://brand.example/"},
		{"lnk.example", "https://default.example/"},
	} {
		if r := in.follow("GET", "sale", "Host", c.host); r.status != 302 || r.header.Get("Location") != c.location {
			t.Errorf("GET /r/sale on %s = %d %q; want 302 to %s", c.host, r.status, r.header.Get("Location"), c.location)
		}
	}
	if r := in.follow("GET", "sale", "Host", "links.other.example"); r.status != 404 {
		t.Errorf("GET /r/sale on links.other.example = %d; want 404 (no such code there)", r.status)
	}
	if r := in.follow("GET", "sale", "Host", "stranger.example"); r.status != 404 || !strings.Contains(r.body, "stranger.example") {
		t.Errorf("GET /r/sale on an unknown host = %d %s; want 404 naming the host", r.status, r.body)
	}
	if l := decodeLink(t, in.admin("GET", "/api/v1/links/sale?domain=go.brand.example", "")); l.URL != "https://brand.example/" {
		t.Errorf("GET ?domain=go.brand.example = %+v; want the brand's link", l)
	}
	in.expect(in.admin("GET", "/api/v1/links/sale?domain=nowhere.example", ""), 400, "")
	in.expect(in.admin("PUT", "/api/v1/links/sale?domain=go.brand.example", `{"url":"https://brand.example/v2"}`), 200, "")
	if r := in.follow("GET", "sale", "Host", "go.brand.example"); r.header.Get("Location") != "https://brand.example/v2" {
		t.Errorf("after the PUT, GET /r/sale on go.brand.example = %q; want the new url", r.header.Get("Location"))
	}
	if r := in.follow("GET", "sale", "Host", "lnk.example"); r.header.Get("Location") != "https://default.example/" {
		t.Errorf("after the PUT on the brand's link, the default one = %q; want it unchanged", r.header.Get("Location"))
	}
	// By tag and by title.
	var page struct {
		Items []link `json:"items"`
		Total int    `json:"total"`
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/links?tag=SPRING", "").body), &page)
	if page.Total != 0 { // the PUT replaced every field, tags too
		t.Errorf("GET ?tag=spring after the PUT without tags = %+v; want none", page)
	}
	in.expect(in.admin("PUT", "/api/v1/links/sale?domain=go.brand.example", `{"url":"https://brand.example/v2","tags":["spring","q3"],"title":"Brand sale"}`), 200, "")
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/links?tag=q3", "").body), &page)
	if page.Total != 1 || *page.Items[0].Domain != "go.brand.example" {
		t.Errorf("GET ?tag=q3 = %+v; want the brand's link", page)
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/links?q=brand%20SALE", "").body), &page)
	if page.Total != 1 {
		t.Errorf("GET ?q=brand SALE = %+v; want the link titled Brand sale", page)
	}
	in.expect(in.admin("GET", "/api/v1/links?tag=a,b", ""), 400, "")
	in.expect(in.admin("DELETE", "/api/v1/links/sale?domain=go.brand.example", ""), 204, "")
	if r := in.follow("GET", "sale", "Host", "go.brand.example"); r.status != 404 {
		t.Errorf("after the DELETE, GET /r/sale on go.brand.example = %d; want 404", r.status)
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	domains := map[any]int{}
	for _, l := range eventLines(t, data) {
		if l["type"] == "click" {
			domains[l["domain"]]++
		}
	}
	if domains["go.brand.example"] != 3 || domains[nil] != 2 {
		t.Errorf("click events by domain = %v; want 3 on go.brand.example, 2 on the default domain", domains)
	}
}

// Rules send different people to different places, first match first;
// a split keeps each visitor on one destination and shares visitors by
// weight; the click event says which rule or destination it was.
func TestLinkRulesAndSplits(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil, "-events-flush", "20ms", "-reports-flush", "50ms")
	in.expect(in.admin("POST", "/api/v1/links", `{"code":"app","url":"https://example.com/",
		"rules":[
			{"when":{"platform":"ios"},"url":"https://apps.apple.example/"},
			{"when":{"platform":["android"],"language":"de"},"url":"https://play.example/de"},
			{"when":{"language":["de","fr-CH"]},"url":"https://example.de/"},
			{"when":{"query":{"utm_source":"mail"}},"url":"https://example.com/mail"},
			{"when":{"from":"2000-01-01T00:00:00Z","to":"2001-01-01T00:00:00Z"},"url":"https://example.com/y2k"}],
		"destinations":[{"url":"https://a.example/","weight":75},{"url":"https://b.example/","weight":25}]}`), 201, "")
	const android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) Chrome/120.0 Mobile Safari/537.36"
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
	for _, c := range []struct {
		name, code string
		header     []string
		want       string
	}{
		{"an iPhone", "app", []string{"User-Agent", iphoneUA, "Accept-Language", ""}, "https://apps.apple.example/"},
		{"Android in German", "app", []string{"User-Agent", android, "Accept-Language", "de-DE,de;q=0.9"}, "https://play.example/de"},
		{"Android in English", "app?utm_source=mail", []string{"User-Agent", android, "Accept-Language", "en-US"}, "https://example.com/mail"},
		{"desktop in Swiss French", "app", []string{"User-Agent", firefox, "Accept-Language", "fr-CH, en;q=0.5"}, "https://example.de/"},
		{"desktop, French refused", "app", []string{"User-Agent", firefox, "Accept-Language", "fr-CH;q=0, en"}, ""},
	} {
		r := in.follow("GET", c.code, c.header...)
		loc := r.header.Get("Location")
		if c.want == "" {
			if loc != "https://a.example/" && loc != "https://b.example/" {
				t.Errorf("%s: GET /r/%s = %d %q; want a destination", c.name, c.code, r.status, loc)
			}
		} else if r.status != 302 || loc != c.want {
			t.Errorf("%s: GET /r/%s = %d %q; want 302 to %s", c.name, c.code, r.status, loc, c.want)
		}
	}
	// The split: 400 visitors (User-Agents), each asking twice.
	got := map[string]int{}
	for i := range 400 {
		ua := fmt.Sprintf("%s visitor/%d", firefox, i)
		first := in.follow("GET", "app", "User-Agent", ua).header.Get("Location")
		if again := in.follow("GET", "app", "User-Agent", ua).header.Get("Location"); again != first {
			t.Fatalf("visitor %d went to %s, then %s; want the same destination each time", i, first, again)
		}
		got[first]++
	}
	if got["https://a.example/"] < 260 || got["https://a.example/"] > 340 || got["https://a.example/"]+got["https://b.example/"] != 400 {
		t.Errorf("400 visitors split 75/25 went %v; want about 300/100", got)
	}
	// The report by destination: each destination's clicks, with its URL.
	type part struct {
		Destination *int
		URL         string
		Clicks      int
	}
	var rep struct{ Breakdown []part }
	deadline := time.Now().Add(10 * time.Second)
	for {
		json.Unmarshal([]byte(in.admin("GET", "/api/v1/links/app/stats?by=destination", "").body), &rep)
		byURL := map[string]int{}
		for _, p := range rep.Breakdown {
			byURL[p.URL] += p.Clicks
		}
		if byURL["https://a.example/"] == 2*got["https://a.example/"]+1 && byURL["https://b.example/"] == 2*got["https://b.example/"] ||
			byURL["https://a.example/"] == 2*got["https://a.example/"] && byURL["https://b.example/"] == 2*got["https://b.example/"]+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET stats?by=destination = %+v; want each destination's clicks (%v, twice each, and the one of the refused-French visitor)", rep, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	rules, dests := map[any]int{}, map[any]int{}
	for _, l := range eventLines(t, data) {
		if l["type"] == "click" {
			rules[l["rule"]]++
			dests[l["dest"]]++
		}
	}
	if rules["0"] != 1 || rules["1"] != 1 || rules["2"] != 1 || rules["3"] != 1 || dests["0"]+dests["1"] != 801 {
		t.Errorf("click events by rule %v and by destination %v; want one each of rules 0-3 and 801 split clicks", rules, dests)
	}
}
