package macro_test

import (
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/macro"
)

// TestExpand: every macro filled, in a URL and in HTML.
func TestExpand(t *testing.T) {
	v := macro.Values{Random: 42, Timestamp: time.UnixMilli(1700000000123), PageURL: "https://pub.test/a?b=1&c=2", ClickURL: "https://ads.test/t/c/TOKEN",
		GDPR: "1", GDPRConsent: "CP-x_y", Placement: "home top", Campaign: 7, Ad: 9}
	tmpl := "r={random}&t={timestamp}&u={pageUrl}&c={clickUrl}&e={clickUrlEnc}&g={gdpr}&s={gdprConsent}&p={placement}&cp={campaign}&a={ad}&x={unknown}&{"
	got := string(macro.Expand(nil, tmpl, &v, macro.URL))
	want := "r=42&t=1700000000123&u=https%3A%2F%2Fpub.test%2Fa%3Fb%3D1%26c%3D2&c=https://ads.test/t/c/TOKEN&e=https%3A%2F%2Fads.test%2Ft%2Fc%2FTOKEN" +
		"&g=1&s=CP-x_y&p=home+top&cp=7&a=9&x={unknown}&{"
	if got != want {
		t.Errorf("URL:\n got %s\nwant %s", got, want)
	}
	got = string(macro.Expand(nil, `<a href="{clickUrl}" data-p="{pageUrl}">{placement}</a><img src="https://3p.test/?u={clickUrlEnc}">`, &v, macro.HTML))
	want = `<a href="https://ads.test/t/c/TOKEN" data-p="https://pub.test/a?b=1&amp;c=2">home top</a><img src="https://3p.test/?u=https%3A%2F%2Fads.test%2Ft%2Fc%2FTOKEN">`
	if got != want {
		t.Errorf("HTML:\n got %s\nwant %s", got, want)
	}
}

// TestHostileValues: a value built to break out — of an attribute, an
// element, a script string, a query part — stays inside it, and reads back
// as itself.
func TestHostileValues(t *testing.T) {
	for _, hostile := range []string{`"><script>alert(1)</script>`, `'; alert(1); '`, `</script><script>x()</script>`, "a&b=c#d e\n\r", "{pageUrl}", `javascript:alert(1)`} {
		v := macro.Values{PageURL: hostile, GDPRConsent: hostile, Placement: hostile}
		h := string(macro.Expand(nil, `<div title="{pageUrl}" data-x='{gdprConsent}'><script>var p = "{placement}";</script></div>`, &v, macro.HTML))
		for _, bad := range []string{`"><script>alert`, `</script><script>`, `'; alert`} {
			if strings.Contains(h, bad) {
				t.Errorf("HTML with %q = %s; holds %q", hostile, h, bad)
			}
		}
		if !strings.Contains(h, html.EscapeString(hostile)) {
			t.Errorf("HTML with %q = %s; want the value escaped", hostile, h)
		}
		u := string(macro.Expand(nil, "https://3p.test/i?u={pageUrl}&s={gdprConsent}&p={placement}", &v, macro.URL))
		parsed, err := url.Parse(u)
		if err != nil || parsed.Host != "3p.test" || parsed.Query().Get("u") != hostile || parsed.Query().Get("s") != hostile || parsed.Fragment != "" {
			t.Errorf("URL with %q = %s (%v); want the value whole in its query part", hostile, u, err)
		}
	}
}

func BenchmarkExpand(b *testing.B) {
	v := macro.Values{Random: 42, Timestamp: time.Now(), PageURL: "https://pub.test/a", Placement: "home", Campaign: 7, Ad: 9}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = macro.Expand(buf[:0], "https://3p.test/i?r={random}&t={timestamp}&p={placement}&c={campaign}&a={ad}&u={pageUrl}", &v, macro.URL)
	}
}
