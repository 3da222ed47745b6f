//go:build !noconsole

package console_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/console"
)

func get(t *testing.T, path string, headers ...string) *fasthttp.Response {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(path)
	for i := 0; i+1 < len(headers); i += 2 {
		ctx.Request.Header.Set(headers[i], headers[i+1])
	}
	console.Handler("")(&ctx)
	resp := &fasthttp.Response{}
	ctx.Response.CopyTo(resp)
	return resp
}

// TestAssets: the page is never cached and names every asset by a
// fingerprinted path, each served with a year's immutable caching and the
// right type; every answer carries the CSP and the security headers;
// anything else under /admin/ is a 404; /admin redirects.
func TestAssets(t *testing.T) {
	page := get(t, "/admin/")
	if page.StatusCode() != 200 || string(page.Header.Peek("Cache-Control")) != "no-cache" ||
		!strings.HasPrefix(string(page.Header.ContentType()), "text/html") {
		t.Fatalf("GET /admin/ = %d, Cache-Control %q, type %q; want 200, no-cache, text/html",
			page.StatusCode(), page.Header.Peek("Cache-Control"), page.Header.ContentType())
	}
	refs := regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"`).FindAllStringSubmatch(string(page.Body()), -1)
	if len(refs) < 6 {
		t.Fatalf("the page names %d assets; want its scripts and styles (%s)", len(refs), page.Body())
	}
	fingerprinted := regexp.MustCompile(`\.[0-9a-f]{8}\.(js|css)$`)
	for _, r := range refs {
		if !fingerprinted.MatchString(r[1]) {
			t.Errorf("the page names %s; want a fingerprinted name", r[1])
			continue
		}
		a := get(t, "/admin/"+r[1])
		if a.StatusCode() != 200 || string(a.Header.Peek("Cache-Control")) != "public, max-age=31536000, immutable" {
			t.Errorf("GET /admin/%s = %d, Cache-Control %q; want 200 and a year, immutable", r[1], a.StatusCode(), a.Header.Peek("Cache-Control"))
		}
		want := map[string]string{"js": "text/javascript", "css": "text/css"}[fingerprinted.FindStringSubmatch(r[1])[1]]
		if !strings.HasPrefix(string(a.Header.ContentType()), want) {
			t.Errorf("GET /admin/%s: type %q; want %s", r[1], a.Header.ContentType(), want)
		}
	}
	for _, p := range []string{"/admin/", "/admin/" + refs[0][1], "/admin/nope", "/admin/assets/app.js", "/admin/assets/index.html"} {
		r := get(t, p)
		if got := string(r.Header.Peek("Content-Security-Policy")); got != console.CSP("") || !strings.Contains(got, "script-src 'self'") {
			t.Errorf("GET %s: CSP %q; want %q", p, got, console.CSP(""))
		}
		for _, h := range []string{"X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
			if len(r.Header.Peek(h)) == 0 {
				t.Errorf("GET %s: no %s header", p, h)
			}
		}
	}
	for _, p := range []string{"/admin/nope", "/admin/assets/app.js", "/admin/assets/index.html", "/admin/assets/"} {
		if r := get(t, p); r.StatusCode() != 404 || !bytes.Contains(r.Body(), []byte(`"error"`)) {
			t.Errorf("GET %s = %d %s; want a 404 with an error", p, r.StatusCode(), r.Body())
		}
	}
	if r := get(t, "/admin"); r.StatusCode() != 301 || string(r.Header.Peek("Location")) != "/admin/" {
		t.Errorf("GET /admin = %d to %q; want 301 to /admin/", r.StatusCode(), r.Header.Peek("Location"))
	}
}

// TestCompressedAndRevalidated: gzip when asked, the same bytes once
// inflated; an unchanged page is a 304.
func TestCompressedAndRevalidated(t *testing.T) {
	plain := get(t, "/admin/")
	gz := get(t, "/admin/", "Accept-Encoding", "gzip, br")
	if string(gz.Header.Peek("Content-Encoding")) != "gzip" {
		t.Fatalf("GET /admin/ with Accept-Encoding gzip: Content-Encoding %q", gz.Header.Peek("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body()))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); !bytes.Equal(b, plain.Body()) {
		t.Fatal("the gzipped page inflates to other bytes than the plain one")
	}
	if r := get(t, "/admin/", "If-None-Match", string(plain.Header.Peek("ETag"))); r.StatusCode() != 304 || len(r.Body()) != 0 {
		t.Fatalf("GET /admin/ with its ETag = %d (%d bytes); want 304", r.StatusCode(), len(r.Body()))
	}
}

// TestFirstLoadSize: everything the page loads, compressed as served,
// stays within the 300 KB the console promises for a first visit.
func TestFirstLoadSize(t *testing.T) {
	page := get(t, "/admin/", "Accept-Encoding", "gzip")
	total := len(page.Body())
	plain := get(t, "/admin/")
	for _, r := range regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"`).FindAllStringSubmatch(string(plain.Body()), -1) {
		total += len(get(t, "/admin/"+r[1], "Accept-Encoding", "gzip").Body())
	}
	if total > 300_000 {
		t.Fatalf("first load transfers %d bytes compressed; want ≤ 300,000", total)
	}
	t.Logf("first load: %d bytes compressed", total)
}

// TestAuditKindsAreTheVocabulary: the audit page's kinds are the audit
// log's, marquee.AuditEntities, in its order.
func TestAuditKindsAreTheVocabulary(t *testing.T) {
	js, err := os.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const kinds = \[([^\]]*)\];`).FindSubmatch(js)
	if m == nil {
		t.Fatal("app.js: no `const kinds = [...]` on the audit page")
	}
	var got []string
	for _, k := range regexp.MustCompile(`'([^']*)'`).FindAllSubmatch(m[1], -1) {
		got = append(got, string(k[1]))
	}
	if !slices.Equal(got, marquee.AuditEntities) {
		t.Errorf("the audit page's kinds = %q; want marquee.AuditEntities, %q", got, marquee.AuditEntities)
	}
}

// TestVocabulariesAreTheGoOnes: the console's lists of scopes (and what
// a key bound to advertisers or to sites may hold), roles, tiers and
// price models are the root package's, in its order — one list per
// vocabulary, the console's a copy held equal here.
func TestVocabulariesAreTheGoOnes(t *testing.T) {
	js, err := os.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	quoted := func(src string) []string {
		var out []string
		for _, k := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(src, -1) {
			out = append(out, k[1])
		}
		return out
	}
	find := func(what, pattern string) string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindSubmatch(js)
		if m == nil {
			t.Fatalf("app.js: no %s (%s)", what, pattern)
		}
		return string(m[1])
	}
	scopes := func(s marquee.ScopeSet) []string { return strings.Fields(s.String()) }
	var all []string
	for _, s := range marquee.Scopes {
		all = append(all, string(s))
	}
	var models []string
	for _, pair := range regexp.MustCompile(`\['([a-z]*)', '[^']*'\]`).FindAllStringSubmatch(find("price models", `(?s)const model = sel\(\[(.*?)\], pr\.model`), -1) {
		if pair[1] != "" {
			models = append(models, pair[1])
		}
	}
	roleText := find("roles", `const roleText = \{([^}]*)\}`)
	var roles []string
	for _, m := range regexp.MustCompile(`(\w+): '`).FindAllStringSubmatch(roleText, -1) {
		roles = append(roles, m[1])
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"allScopes", quoted(find("allScopes", `(?s)const allScopes = \[(.*?)\];`)), all},
		{"boundScopes.advertisers", quoted(find("boundScopes", `advertisers: \[(.*?)\]`)), scopes(marquee.BoundKeyScopes(marquee.Bounds{Advertisers: []int64{1}}))},
		{"boundScopes.sites", quoted(find("boundScopes", `sites: \[(.*?)\]`)), scopes(marquee.BoundKeyScopes(marquee.Bounds{Sites: []string{"a"}}))},
		{"roles", roles, marquee.Roles},
		{"tiers", quoted(find("tiers", `const tiers = \[(.*?)\];`)), marquee.Priorities},
		{"price models", models, marquee.PriceModels},
		{"webhookEvents", quoted(find("webhookEvents", `const webhookEvents = \[(.*?)\];`)), marquee.WebhookEvents},
		{"demandFormats", quoted(find("demandFormats", `const demandFormats = \[(.*?)\];`)), marquee.DemandFormats},
		{"sellerTypes", quoted(find("sellerTypes", `const sellerTypes = \[(.*?)\];`)), func() (ts []string) {
			for _, s := range marquee.SellerTypes {
				ts = append(ts, string(s))
			}
			return ts
		}()},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("app.js's %s = %q; want %q", c.what, c.got, c.want)
		}
	}
}
