package marquee_test

import (
	"strings"
	"testing"
	"time"

	"marquee"
)

func TestParseLinkInput(t *testing.T) {
	in, err := marquee.ParseLinkInput([]byte(`{"url":"https://example.com/a","code":"x_Y-9","expiresAt":"2030-01-02T03:04:05.678+01:00","maxClicks":5,"redirect":308,"adId":"12"}`))
	want := marquee.LinkInput{Code: "x_Y-9", URL: "https://example.com/a", ExpiresAt: time.Date(2030, 1, 2, 2, 4, 5, 678e6, time.UTC),
		MaxClicks: 5, Redirect: 308, AdID: 12}
	if err != nil || in != want {
		t.Fatalf("ParseLinkInput = %+v, %v; want %+v", in, err, want)
	}
	if in, _ := marquee.ParseLinkInput([]byte(`{"url":"http://a.b","adId":7}`)); in.Redirect != 302 || in.AdID != 7 || in.Code != "" {
		t.Fatalf("defaults: %+v; want redirect 302, adId 7, no code", in)
	}
	for _, c := range []struct{ body, field, msg string }{
		{`{"url":"https://x.test","code":"r"}`, "code", "reserved"},
		{`{"url":"https://x.test","code":"HEALTHZ"}`, "code", "reserved"},
		{`{"url":"https://x.test","code":"a/b"}`, "code", "A-Z"},
		{`{"url":"https://x.test","code":"` + strings.Repeat("a", 65) + `"}`, "code", "1-64"},
		{`{"url":"https://x.test","code":7}`, "code", "string"},
		{`{"url":"data:text/html,hi"}`, "url", "http or https"},
		{`{"url":"//example.com"}`, "url", "http or https"},
		{`{"url":"not a url"}`, "url", "must be an absolute http or https URL, such as https://example.com/page"},
		{`{"url":"https://x.test/a b"}`, "url", "spaces"},
		{`{"url":"http:///path"}`, "url", "host"},
		{`{"url":"https://x.test/` + strings.Repeat("a", 2048) + `"}`, "url", "2048"},
		{`{"url":"https://x.test/\u0000"}`, "url", "control"},
		{`{"url":"https://x.test","redirect":200}`, "redirect", "301"},
		{`{"url":"https://x.test","maxClicks":-1}`, "maxClicks", "positive"},
		{`{"url":"https://x.test","maxClicks":1.5}`, "maxClicks", "positive"},
		{`{"url":"https://x.test","adId":"0"}`, "adId", "ad id"},
		{`{"url":"https://x.test","expiresAt":"2030-01-02"}`, "expiresAt", "RFC 3339"},
		{`[]`, "body", "object"},
		{``, "body", "empty"},
	} {
		_, err := marquee.ParseLinkInput([]byte(c.body))
		if inv := marquee.AsError(err); inv == nil || inv.Kind != marquee.KindInvalid || !strings.Contains(inv.Problems[c.field], c.msg) {
			t.Errorf("ParseLinkInput(%s) = %v; want %s: …%s…", c.body, err, c.field, c.msg)
		}
	}
}

func TestCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 10_000 {
		c := marquee.NewCode()
		if len(c) != marquee.GeneratedCodeLen || marquee.CheckCode(c) != "" || strings.ContainsAny(c, "0O1lIio") || seen[c] {
			t.Fatalf("NewCode() = %q: want %d unambiguous, valid, new characters", c, marquee.GeneratedCodeLen)
		}
		seen[c] = true
	}
}
