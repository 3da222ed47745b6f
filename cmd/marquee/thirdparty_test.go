//go:build !noconsole

package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// thirdParty is an ad network's server: it counts the tracker requests it
// gets, by path, and keeps their queries.
type thirdParty struct {
	*httptest.Server
	mu      sync.Mutex
	hits    map[string]int
	queries map[string][]string
}

func newThirdParty(t *testing.T) *thirdParty {
	tp := &thirdParty{hits: map[string]int{}, queries: map[string][]string{}}
	tp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp.mu.Lock()
		defer tp.mu.Unlock()
		tp.hits[r.URL.Path]++
		tp.queries[r.URL.Path] = append(tp.queries[r.URL.Path], r.URL.RawQuery)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(tp.Close)
	return tp
}

func (tp *thirdParty) count(path string) (int, []string) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.hits[path], append([]string(nil), tp.queries[path]...)
}

// TestThirdPartyTagsInBrowser: on a publisher's page in Chromium, a
// trusted third-party tag renders in a friendly frame (its script reaches
// the page, its macros filled), an untrusted one stays sandboxed (its
// script cannot); each creative's impression trackers are fired once per
// impression, with their macros filled, and a native ad's click tracker
// once per click; a slot nothing fills shows its placement's passback.
func TestThirdPartyTagsInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	a := newAdServer(t)
	pub := newPublisher(t)
	tp := newThirdParty(t)
	a.placement("trusted", `{"type":"tag","width":300,"height":250,"trusted":true,`+
		`"html":"<div id=\"t\">{placement}</div><script>parent.window.trustedRan = document.getElementById('t').textContent + ' ' + parent.document.title</script>",`+
		`"impressionTrackers":["`+tp.URL+`/imp?p={placement}&a={ad}&r={random}&u={pageUrl}&g={gdpr}"]}`)
	a.placement("untrusted", `{"type":"tag","width":300,"height":250,`+
		`"html":"<script>var r; try { r = parent.document.title } catch (e) { r = 'sandboxed' } parent.postMessage('untrusted ' + r + ' {placement} {pageUrl}', '*')</script>",`+
		`"impressionTrackers":["`+tp.URL+`/imp-untrusted?c={campaign}"]}`)
	a.placement("native", `{"type":"native","title":"Fly","clickUrl":"https://acme.test/fly","impressionTrackers":["`+tp.URL+`/imp-native"],`+
		`"clickTrackers":["`+tp.URL+`/clk?a={ad}&t={timestamp}"]}`)
	a.expect(a.admin("POST", "/api/v1/placements", `{"name":"empty","sizes":["300x250"],"passback":"<script>parent.window.passbackRan = 'yes'</script>"}`), 201, "")

	page := pub.page("/news", "", pubHTML(a.url+"/t.js", `data-gdpr="0"`,
		`<div data-marquee-placement="trusted"></div><div data-marquee-placement="untrusted"></div>`+
			`<div data-marquee-placement="native"></div><div data-marquee-placement="empty"></div>`))
	b := newTab(t, pub.URL, 1280, 2000)
	b.do("open the page", chromedp.Navigate(page))
	b.waitFor("the trusted tag's script", `window.trustedRan !== undefined`, 10*time.Second)
	if got := eval[string](b, `window.trustedRan`); got != "trusted Publisher" {
		t.Errorf("the trusted tag's script says %q; want its placement macro filled and the page's title (a friendly frame)", got)
	}
	if got := eval[[]string](b, `[...document.querySelectorAll('[data-marquee-placement=trusted] iframe')].map(f => String(f.hasAttribute('sandbox')))`); len(got) != 1 || got[0] != "false" {
		t.Errorf("the trusted tag's frame: sandboxed %v; want one frame without a sandbox", got)
	}
	b.waitFor("the untrusted tag's message", `window.fromAds.some(m => String(m).startsWith('untrusted'))`, 10*time.Second)
	if got := eval[string](b, `window.fromAds.find(m => String(m).startsWith('untrusted'))`); got != "untrusted sandboxed untrusted "+pub.URL+"/news" {
		t.Errorf("the untrusted tag said %q; want it sandboxed (no access to the page), its macros filled", got)
	}
	if got := eval[string](b, `document.querySelector('[data-marquee-placement=untrusted] iframe').getAttribute('sandbox')`); got != "allow-scripts allow-popups" {
		t.Errorf("the untrusted tag's frame sandbox = %q", got)
	}
	b.waitFor("the passback", `window.passbackRan === 'yes'`, 10*time.Second)
	if got := eval[string](b, `document.querySelector('[data-marquee-placement=empty]').dataset.marqueeState`); got != "passback" {
		t.Errorf("the empty slot's state = %q; want passback", got)
	}

	// Trackers: each once per impression, macros filled.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n1, _ := tp.count("/imp")
		n2, _ := tp.count("/imp-untrusted")
		n3, _ := tp.count("/imp-native")
		if n1 == 1 && n2 == 1 && n3 == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("impression trackers fired %d, %d, %d times; want once each", n1, n2, n3)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, q := tp.count("/imp")
	if want := "p=trusted&a=" + a.ads["trusted"]; !strings.HasPrefix(q[0], want) || !strings.Contains(q[0], "&u="+strings.ReplaceAll(strings.ReplaceAll(pub.URL, ":", "%3A"), "/", "%2F")+"%2Fnews&g=0") ||
		strings.Contains(q[0], "{") {
		t.Errorf("the trusted tag's tracker got ?%s; want placement, ad, a random number, the page's URL and gdpr filled", q[0])
	}
	if _, q := tp.count("/imp-untrusted"); !strings.HasPrefix(q[0], "c=") || q[0] == "c={campaign}" {
		t.Errorf("the untrusted tag's tracker got ?%s; want its campaign", q[0])
	}
	b.do("click the native ad", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-marquee-placement=native] a').click()`))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if n, _ := tp.count("/clk"); n == 1 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the click tracker fired %d times; want once", n)
		}
	}
	time.Sleep(300 * time.Millisecond) // nothing fires twice
	for _, path := range []string{"/imp", "/imp-untrusted", "/imp-native", "/clk"} {
		if n, _ := tp.count(path); n != 1 {
			t.Errorf("%s fired %d times; want once", path, n)
		}
	}
}

// TestThirdPartyInConsole: the ad editor writes a trusted tag creative with
// trackers, the placement editor a passback and a header-bidding floor;
// the API keeps them, and the placement's page shows the floor.
func TestThirdPartyInConsole(t *testing.T) {
	t.Parallel()
	in, b := ownerConsole(t, 1280, 1400)
	b.open("#/placements/new", "#placement-form")
	b.labelled("placement editor with a passback")
	b.do("a placement with a passback", chromedp.SendKeys(chromedp.CSS(`[data-field="name"] input`), "side"),
		chromedp.SetValue(chromedp.ID("passback"), `<script src="https://pub.test/fallback.js"></script>`),
		chromedp.SendKeys(chromedp.ID("floor"), "1.25"), click(`#placement-form button[type=submit]`))
	b.waitHash(`^#/placements/side$`)
	if r := in.admin("GET", "/api/v1/placements/side", ""); !strings.Contains(r.body, `"passback":"\u003cscript src=\"https://pub.test/fallback.js\"\u003e\u003c/script\u003e"`) ||
		!strings.Contains(r.body, `"floor":1.25`) {
		t.Errorf("the placement = %s; want its passback and a floor of 1.25", r.body)
	}
	b.open("#/placements/side", "#floor")
	if got := b.text("#floor"); !strings.Contains(got, "1.25") {
		t.Errorf("the placement's page says %q; want its floor", got)
	}
	b.open("#/ads/new", "#ad-form")
	b.do("a trusted tag", chromedp.SendKeys(chromedp.CSS(`[data-field="title"] input`), "Network tag"),
		chromedp.SetValue(chromedp.CSS(`#creative select[aria-label="Creative type"]`), "tag"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#creative select').dispatchEvent(new Event('change'))`),
		chromedp.SendKeys(chromedp.CSS(`[data-field="creative.width"] input`), "300"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="creative.height"] input`), "250"),
		chromedp.SetValue(chromedp.CSS(`[data-field="creative.html"] textarea`), `<script src="https://net.test/t.js?c={clickUrlEnc}"></script>`),
		click("#creative-trusted"),
		chromedp.SetValue(chromedp.ID("creative-impressionTrackers"), "https://net.test/i?r={random}\nhttps://other.test/i"))
	b.labelled("ad editor with a tag creative")
	b.do("save", click(`#ad-form button[type=submit]`))
	id := strings.TrimSuffix(strings.TrimPrefix(b.waitHash(`^#/ads/\d+(/edit)?$`), "#/ads/"), "/edit")
	if r := in.get("/api/v1/ad/" + id); !strings.Contains(r.body, `"type":"tag","width":300,"height":250`) || !strings.Contains(r.body, `"trusted":true`) ||
		!strings.Contains(r.body, `"impressionTrackers":["https://net.test/i?r={random}","https://other.test/i"]`) {
		t.Errorf("the ad = %s; want a trusted tag with its trackers", r.body)
	}
}
