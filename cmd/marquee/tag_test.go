//go:build !noconsole

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"marquee/tag"
)

// The ad tag's tests (docs/tag.md) run in Debian's Chromium, as the
// console's do: a publisher's page on an origin of its own (an httptest
// server) loads /t.js from a Marquee instance.

// publisher is a publisher's site: pages by path, each with its CSP (""
// none), and the files every page may load.
type publisher struct {
	*httptest.Server
	mu    sync.Mutex
	pages map[string]pubPage
	hits  map[string]int // pages served, by path
	video []byte         // a recorded video, POSTed by the page that records it
}

type pubPage struct{ html, csp string }

// pageJS runs before the tag on every publisher page: it keeps the bodies
// of the decision requests the tag sends (window.sent), the messages ads'
// frames post (window.fromAds), and shows that the page's own script ran.
const pageJS = `window.sent = []; window.fromAds = [];
const realFetch = window.fetch;
window.fetch = function (u, init) {
  if (String(u).indexOf('/api/v1/decisions') >= 0) window.sent.push(init && init.body);
  return realFetch.apply(this, arguments);
};
window.addEventListener('message', function (e) { window.fromAds.push(e.data); });
document.addEventListener('DOMContentLoaded', function () { document.getElementById('title').textContent = 'News: the page works'; });
`

func newPublisher(t *testing.T) *publisher {
	p := &publisher{pages: map[string]pubPage{}, hits: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch r.URL.Path {
		case "/page.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, pageJS)
		case "/prebid.js": // the page's Prebid.js, bundled by .ci/run (prebidBundle)
			w.Header().Set("Content-Type", "text/javascript")
			http.ServeFile(w, r, os.Getenv("MARQUEE_TEST_PREBID"))
		case "/self-hosted/t.js": // a publisher's own copy of the tag
			w.Header().Set("Content-Type", "text/javascript")
			w.Write(tag.Tag.Source)
		case "/video.webm":
			if r.Method == "POST" {
				p.video, _ = io.ReadAll(r.Body)
				return
			}
			http.ServeContent(w, r, "video.webm", time.Time{}, bytes.NewReader(p.video))
		default:
			if file, ok := strings.CutPrefix(r.URL.Path, "/node_modules/"); ok && os.Getenv("MARQUEE_TEST_PLAYERS") != "" {
				// The players' libraries (video.js, vast-client), as a page loads them.
				http.ServeFile(w, r, filepath.Join(os.Getenv("MARQUEE_TEST_PLAYERS"), "node_modules", filepath.FromSlash(path.Clean("/"+file))))
				return
			}
			pg, ok := p.pages[r.URL.Path]
			p.hits[r.URL.Path]++
			if !ok {
				http.NotFound(w, r)
				return
			}
			if pg.csp != "" {
				w.Header().Set("Content-Security-Policy", pg.csp)
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, pg.html)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *publisher) page(path, csp, html string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages[path] = pubPage{html, csp}
	return p.URL + path
}

// pubHTML is a publisher's page: the page's script, the tag (its script
// element's attributes given), a title, and the body.
func pubHTML(tagSrc, tagAttrs, body string) string {
	return `<!doctype html><html><head><meta charset="utf-8"><title>Publisher</title>
<script src="/page.js"></script>
<script async src="` + tagSrc + `" ` + tagAttrs + `></script></head>
<body><h1 id="title">News</h1>` + body + `</body></html>`
}

// adServer is a Marquee instance with one campaign and the ads the tests
// show, and reports flushed every 100 ms (and the flags given).
type adServer struct {
	*instance
	flight string
	ads    map[string]string // name → id
}

func newAdServer(t *testing.T, flags ...string) *adServer {
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, append([]string{"-reports-flush", "100ms"}, flags...)...)
	a := &adServer{instance: in, ads: map[string]string{},
		flight: `"startAt":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `","endAt":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"`}
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	return a
}

// placement makes a placement, and a campaign with an ad in it showing
// creative (JSON): a campaign each, as a page shows a campaign once.
func (a *adServer) placement(name, creative string) {
	a.t.Helper()
	a.expect(a.admin("POST", "/api/v1/placements", `{"name":"`+name+`"}`), 201, "")
	camp := a.campaign(`{"advertiserId":"1","name":"` + name + `",` + a.flight + `}`)
	r := a.admin("POST", "/api/v1/ad", `{"title":"`+name+` ad",`+a.flight+`,"campaignId":"`+camp+`","placements":["`+name+`"],"creative":`+creative+`}`)
	var got struct{ ID string }
	if json.Unmarshal([]byte(r.body), &got); r.status != 201 {
		a.t.Fatalf("create the ad of %s = %d %s", name, r.status, r.body)
	}
	a.ads[name] = got.ID
}

// uploadPNG uploads a w×h image and returns its URL (/assets/…).
func (a *adServer) uploadPNG(w, h int) string {
	a.t.Helper()
	var body bytes.Buffer
	png.Encode(&body, image.NewGray(image.Rect(0, 0, w, h)))
	r := a.do("POST", "/api/v1/assets", a.token, "image/png", body.String())
	var got struct{ URL string }
	if json.Unmarshal([]byte(r.body), &got); r.status != 201 {
		a.t.Fatalf("upload = %d %s", r.status, r.body)
	}
	return got.URL
}

// totals are an ad's (or, with "all", the advertiser's) report totals,
// bots included (headless Chromium says it is one).
func (a *adServer) totals(name string) map[string]float64 {
	a.t.Helper()
	path := "/api/v1/advertisers/1/stats?bots=include"
	if name != "all" {
		path = "/api/v1/ad/" + a.ads[name] + "/stats?bots=include"
	}
	r := a.admin("GET", path, "")
	var got struct{ Totals map[string]float64 }
	if json.Unmarshal([]byte(r.body), &got); r.status != 200 {
		a.t.Fatalf("GET %s = %d %s", path, r.status, r.body)
	}
	return got.Totals
}

// asPerson makes the tab send a person's browser's User-Agent, not a
// headless one's (a bot, which reports and the console leave out).
func (b *tab) asPerson() {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"}); err != nil {
		b.t.Fatal(err)
	}
}

// recordVideo records a video of ms milliseconds in the tab (recordPage)
// and leaves it at the publisher's /video.webm.
func (p *publisher) recordVideo(b *tab, ms int) {
	b.t.Helper()
	b.do("open the recorder", chromedp.Navigate(p.page("/record", "", recordPage)))
	if !eval[bool](b, fmt.Sprintf(`window.record(%d)`, ms)) {
		b.t.Fatal("the video was not recorded")
	}
}

// waitFor polls the page until js is true.
func (b *tab) waitFor(what, js string, within time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(within)
	for !eval[bool](b, js) {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: not true within %s: %s\n(page: %s)", what, within, js, eval[string](b, `document.body.outerHTML`))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sandboxProbe is an HTML creative that tries what a creative must never
// do to the page that shows it, and posts what happened to its parent.
const sandboxProbe = `<div id=ad style="width:300px;height:250px;background:#fc0">ad</div><script>
var r = {};
function probe(name, f) { try { r[name] = f(); } catch (e) { r[name] = 'blocked'; } }
probe('parentDocument', function () { return parent.document.title; });
probe('changePage', function () { parent.document.body.textContent = 'owned'; return 'changed'; });
probe('topLocation', function () { return String(top.location.href); });
probe('cookie', function () { return document.cookie; });
probe('storage', function () { return String(localStorage.length); });
parent.postMessage(r, '*');
try { top.location = 'https://example.invalid/'; } catch (e) {}
</script>`

// TestTagInBrowser: a page with three placements — an image, an HTML
// creative and a native ad — under a strict CSP that allows the ad
// server's origin: each filled once by one decision request, the HTML ad
// unable to reach the page, the impressions counted (and measured); a
// slot added later filled through marquee.fill.
func TestTagInBrowser(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	img := ads.uploadPNG(728, 90)
	ads.placement("top", `{"type":"image","width":728,"height":90,"image":"`+img+`","clickUrl":"https://acme.test/spring"}`)
	ads.placement("side", `{"type":"html","width":300,"height":250,"html":`+jsString(sandboxProbe)+`}`)
	ads.placement("feed", `{"type":"native","title":"Spring sale","body":"<b>not markup</b>","cta":"Shop now","sponsoredBy":"Acme","clickUrl":"https://acme.test/native"}`)
	if r := ads.admin("PUT", "/api/v1/placements/feed", `{"name":"feed","renderProof":true}`); r.status != 200 || !strings.Contains(r.body, `"renderProof":true`) {
		t.Fatalf("ask feed for render proofs = %d %s", r.status, r.body) // docs/ivt.md#render-proofs
	}
	pub := newPublisher(t)
	csp := "default-src 'none'; script-src 'self' " + ads.url + "; connect-src " + ads.url + "; img-src " + ads.url + "; frame-src " + ads.url
	url := pub.page("/article", csp, pubHTML(ads.url+"/t.js", `data-consent="1" data-user="reader-7"`,
		`<div data-marquee-placement="top"></div><div data-marquee-placement="side"></div><div id="native-slot" data-marquee-placement="feed"></div>`))

	b := newTab(t, pub.URL, 1200, 900)
	b.do("open the publisher's page", chromedp.Navigate(url+"?session=s3cret#token"))
	b.waitFor("every slot filled", `[...document.querySelectorAll('[data-marquee-placement]')].every(s => s.dataset.marqueeState === 'filled')`, 10*time.Second)
	b.waitFor("the HTML ad's probe reported", `window.fromAds.length > 0`, 10*time.Second)

	if n := eval[int](b, `window.sent.length`); n != 1 {
		t.Errorf("decision requests = %d; want 1 for the page's three slots", n)
	}
	sent := eval[string](b, `window.sent[0].text()`)
	if !strings.Contains(sent, `"placement":"top"`) || !strings.Contains(sent, `"placement":"feed"`) || !strings.Contains(sent, `"user":{"key":"reader-7"}`) {
		t.Errorf("decision request = %s; want the three slots and the user key (consent given, no GPC)", sent)
	}
	if !strings.Contains(sent, `"url":"`+url+`"`) || strings.Contains(sent, "s3cret") {
		t.Errorf("decision request = %s; want the page's url without its query or fragment", sent)
	}
	for _, c := range []struct{ sel, what string }{
		{`[data-marquee-placement=top] .mq-ad a[href^="` + ads.url + `/t/c/"][target=_blank] img[src^="` + ads.url + `/assets/"][width="728"]`, "the image, linked through the signed click URL"},
		{`[data-marquee-placement=side] .mq-ad iframe[src^="` + ads.url + `/f/"][sandbox="allow-scripts allow-popups"][width="300"][height="250"]`, "the HTML ad in a sandboxed frame of the ad server"},
		{`#native-slot .mq-ad.mq-native a[href^="` + ads.url + `/t/c/"] strong.mq-title`, "the native ad, built of elements"},
	} {
		if n := eval[int](b, `document.querySelectorAll(`+jsString(c.sel)+`).length`); n != 1 {
			t.Errorf("%s: %d elements match %s; want 1", c.what, n, c.sel)
		}
	}
	// The feed's placement asks for render proofs: the tag asked its proof
	// and sent it with the feed's impression, and only with it.
	b.waitFor("the feed's impression sent", `performance.getEntriesByType('resource').filter(e => e.name.includes('/t/i/')).length >= 3`, 10*time.Second)
	hits := eval[[]string](b, `performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/t/i/') || n.includes('/p/'))`)
	proofs, withProof := 0, 0
	for _, h := range hits {
		if strings.Contains(h, "/p/") {
			proofs++
		} else if regexp.MustCompile(`[?&]rp=[A-Za-z0-9_-]{16}$`).MatchString(h) { // the proof's 96 bits

			withProof++
		}
	}
	if proofs != 1 || withProof != 1 {
		t.Errorf("proofs asked %d, impressions with one %d; want 1 and 1 (the feed's): %q", proofs, withProof, hits)
	}
	if got := eval[string](b, `document.querySelector('#native-slot .mq-body').innerHTML`); got != "&lt;b&gt;not markup&lt;/b&gt;" {
		t.Errorf("native body = %q; want its text, never markup", got)
	}
	var probe map[string]string
	if err := json.Unmarshal(eval[[]byte](b, `window.fromAds[0]`), &probe); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"parentDocument", "changePage", "topLocation", "cookie", "storage"} {
		if probe[k] != "blocked" {
			t.Errorf("the HTML creative's %s = %q; want blocked (all: %v)", k, probe[k], probe)
		}
	}
	if title := b.text("#title"); title != "News: the page works" {
		t.Errorf("the page's title = %q; want the page's own script's text, untouched by any ad", title)
	}
	time.Sleep(300 * time.Millisecond) // a navigation of the page would have begun
	if loc := eval[string](b, `location.href`); loc != url+"?session=s3cret#token" {
		t.Errorf("the page is at %s; want %s (the creative tried to navigate it)", loc, url)
	}

	// A slot a single-page app adds later: marquee.fill.
	eval[bool](b, `(() => { const e = document.createElement('div'); e.id = 'late'; e.dataset.marqueePlacement = 'top'; document.body.append(e); marquee.fill(e); return true; })()`)
	b.waitFor("the late slot filled", `document.getElementById('late').dataset.marqueeState === 'filled'`, 10*time.Second)
	if n := eval[int](b, `window.sent.length`); n != 2 {
		t.Errorf("decision requests after marquee.fill = %d; want 2", n)
	}
	if n := eval[int](b, `document.querySelector('[data-marquee-placement=top]').querySelectorAll('.mq-ad').length`); n != 1 {
		t.Errorf("the first top slot has %d ads after the late fill; want still 1", n)
	}

	eventually(t, 10*time.Second, func() string {
		c := ads.totals("all")
		if c["impressions"] != 4 || c["measured"] != 4 {
			return fmt.Sprintf("advertiser totals %v; want 4 impressions (3 slots and the late one), all measured", c)
		}
		return ""
	})
	errs, _ := b.logged()
	for _, e := range errs {
		if strings.Contains(e, "exception") {
			t.Errorf("the page threw: %s", e)
		}
	}
}

// TestTagPopupCannotNavigatePage: an HTML creative that opens a window
// on a click (as ads do) cannot use that window to navigate the
// publisher's tab (reverse tabnabbing through opener.top): the window
// opens, runs its script, and the page stays where it is.
func TestTagPopupCannotNavigatePage(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	pub := newPublisher(t)
	evil := pub.page("/evil", "", `<!doctype html><script>
try { opener.top.location = '`+pub.URL+`/pwned'; } catch (e) {}
try { opener.parent.location = '`+pub.URL+`/pwned'; } catch (e) {}
fetch('/evil-ran').catch(function () {});
</script>`)
	pub.page("/evil-ran", "", "ran")
	pub.page("/pwned", "", "<title>pwned</title>taken")
	opener := `<div id=ad style="width:300px;height:250px;background:#fc0">click me</div><script>
document.addEventListener('click', function () { window.open('` + evil + `', '_blank'); });
</script>`
	ads.placement("side", `{"type":"html","width":300,"height":250,"html":`+jsString(opener)+`}`)
	url := pub.page("/article", "", pubHTML(ads.url+"/t.js", ``, `<div id="slot" data-marquee-placement="side"></div>`))
	b := newTab(t, pub.URL, 1200, 900)
	b.do("open the publisher's page", chromedp.Navigate(url))
	b.waitFor("the slot filled", `document.getElementById('slot').dataset.marqueeState === 'filled'`, 10*time.Second)
	// The frame's document has loaded (its script listens for the click)
	// once the tag sent its impression, which it does on the frame's load
	// — not after a fixed pause, which a loaded machine outruns.
	b.waitFor("the frame loaded", `performance.getEntriesByType('resource').some(e => e.name.includes('/t/i/'))`, 10*time.Second)
	x := eval[float64](b, `(() => { const r = document.querySelector('#slot iframe').getBoundingClientRect(); return r.left + r.width / 2; })()`)
	y := eval[float64](b, `(() => { const r = document.querySelector('#slot iframe').getBoundingClientRect(); return r.top + r.height / 2; })()`)
	b.do("click the ad", chromedp.MouseClickXY(x, y))
	eventually(t, 10*time.Second, func() string {
		pub.mu.Lock()
		defer pub.mu.Unlock()
		if pub.hits["/evil-ran"] == 0 {
			return fmt.Sprintf("the ad's window never ran its script (hits %v)", pub.hits)
		}
		return ""
	})
	time.Sleep(500 * time.Millisecond) // a navigation of the page would have begun
	pub.mu.Lock()
	pwned := pub.hits["/pwned"]
	pub.mu.Unlock()
	if loc := eval[string](b, `location.href`); loc != url || pwned != 0 {
		t.Fatalf("the publisher's tab is at %s (/pwned served %d times); want it still at %s", loc, pwned, url)
	}
}

// viewPage is a publisher's page whose ads start below the fold: a
// 300×250 ad and a 970×250 one (242,500 pixels: MRC's large ad) side by
// side, 2,000 pixels down.
const viewPage = `<div style="height:2000px">above the fold</div>
<div style="display:flex;gap:10px;align-items:flex-start"><div id="small" data-marquee-placement="small"></div><div id="large" data-marquee-placement="large"></div></div>
<div style="height:3000px">below</div>`

// TestTagViewabilityInBrowser checks MRC's rule as the tag applies it: an
// ad below the fold is not viewable; in view for 0.5 s then scrolled away
// it is not; at 35% in view a large ad is and a small one is not; in a
// hidden (minimised) window time does not count; 1 s at 100% is.
func TestTagViewabilityInBrowser(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	box := func(color string, w int) string {
		return `{"type":"html","width":` + fmt.Sprint(w) + `,"height":250,"html":"<div style=\"height:250px;background:` + color + `\"></div>"}`
	}
	ads.placement("small", box("#0a0", 300))
	ads.placement("large", box("#00a", 970))
	pub := newPublisher(t)
	url := pub.page("/long", "", pubHTML(ads.url+"/t.js", "", viewPage))
	b := newTab(t, pub.URL, 1400, 800)
	b.asPerson()
	b.do("open the page", chromedp.Navigate(url))
	b.waitFor("both slots filled", `['small','large'].every(id => document.getElementById(id).dataset.marqueeState === 'filled')`, 10*time.Second)
	views := func() (small, large float64) {
		return ads.totals("small")["views"], ads.totals("large")["views"]
	}
	settle := func() { time.Sleep(1500 * time.Millisecond) } // past the 1 s rule, and a report flush
	scrollTo := func(shown float64) {                        // so that this share of the ads' 250 pixels is on screen
		eval[bool](b, fmt.Sprintf(`window.scrollTo(0, document.getElementById('small').getBoundingClientRect().top + scrollY - innerHeight + 250 * %g); true`, shown))
	}
	eventually(t, 10*time.Second, func() string {
		if ads.totals("small")["impressions"] != 1 || ads.totals("large")["impressions"] != 1 {
			return "the two impressions are not counted yet"
		}
		return ""
	})

	settle()
	if s, l := views(); s != 0 || l != 0 {
		t.Fatalf("below the fold: views %v and %v; want none", s, l)
	}

	// Fully in view for 0.5 s, then away: timed in the page, so that a
	// slow round trip to the browser cannot stretch it.
	eval[bool](b, `(async () => {
		const top = document.getElementById('small').getBoundingClientRect().top + scrollY;
		scrollTo(0, top - innerHeight + 250);
		await new Promise(r => setTimeout(r, 500));
		scrollTo(0, 0);
		return true;
	})()`)
	settle()
	if s, l := views(); s != 0 || l != 0 {
		t.Fatalf("in view 0.5 s then away: views %v and %v; want none", s, l)
	}

	scrollTo(0.35) // 35%: enough for the large ad, not the small one
	eventually(t, 5*time.Second, func() string {
		if _, l := views(); l != 1 {
			return fmt.Sprintf("large ad at 35%% for over 1 s: %v views; want 1", l)
		}
		return ""
	})
	if s, _ := views(); s != 0 {
		t.Fatalf("small ad at 35%%: %v views; want none (it needs 50%%)", s)
	}

	// Fully in view for 0.3 s, then the window is minimised (the page
	// hidden) for longer than the rule: its time does not count.
	win, err := chromedp.Call(b.ctx, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{})
	if err != nil {
		t.Fatal(err)
	}
	setWindow := func(state cdpbrowser.WindowState) {
		if _, err := chromedp.Call(b.ctx, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: win.WindowID, Bounds: &cdpbrowser.Bounds{WindowState: state}}); err != nil {
			t.Fatal(err)
		}
	}
	eval[bool](b, `document.addEventListener('visibilitychange', () => { if (document.hidden) window.hiddenAt = performance.now(); }); true`)
	scrollTo(1)
	eval[bool](b, `(window.shownAt = performance.now(), true)`)
	time.Sleep(300 * time.Millisecond)
	setWindow(cdpbrowser.WindowStateMinimized)
	b.waitFor("the page hidden", `document.visibilityState === 'hidden'`, 5*time.Second)
	settle()
	// The check holds only if the page was hidden before the ad's second
	// in view was up; a machine too slow for that is said, not failed.
	if gap := eval[float64](b, `window.hiddenAt - window.shownAt`); gap > 900 {
		t.Logf("the window took %.0f ms to hide after the scroll (over the rule's second): the hidden page's check is not made this run", gap)
	} else if s, _ := views(); s != 0 {
		t.Fatalf("small ad in view %.0f ms, then the page hidden for 1.5 s: %v views; want none", gap, s)
	}
	setWindow(cdpbrowser.WindowStateNormal)
	b.waitFor("the page visible", `document.visibilityState === 'visible'`, 5*time.Second)
	eventually(t, 5*time.Second, func() string {
		if s, _ := views(); s != 1 {
			return fmt.Sprintf("small ad fully in view, the page visible again for over 1 s: %v views; want 1", s)
		}
		return ""
	})
	if c := ads.totals("all"); c["measured"] != 2 || c["views"] != 2 || c["viewability"] != 1 {
		t.Errorf("advertiser totals %v; want 2 measured, 2 views, viewability 1", c)
	}

	// The console shows the figures.
	con := newTab(t, ads.url, 1280, 900)
	con.do("open the console", chromedp.Navigate(ads.url+"/admin/"))
	con.signIn("owner@example.com", "owner-password-1")
	con.open("#/ads/"+ads.ads["large"], `[data-kpi=viewability]`)
	if v, n := con.text(`[data-kpi=viewability] .v`), con.text(`[data-kpi=views] .v`); v != "100.00%" || n != "1" {
		t.Errorf("the ad's console tiles: viewability %q, viewable impressions %q; want 100.00%% and 1", v, n)
	}
}

// TestTagFailsQuietlyInBrowser: a self-hosted copy of the tag whose ad
// server is down leaves the page working and collapses the slot that asks
// for it; and the tag's privacy rules: no user key without consent or with
// GPC, no cookie unless the publisher opts in.
func TestTagFailsQuietlyInBrowser(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	ads.placement("top", `{"type":"native","title":"Spring sale"}`)
	pub := newPublisher(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	url := pub.page("/down", "", pubHTML("/self-hosted/t.js", `data-server="`+down+`"`,
		`<div id="a" data-marquee-placement="top" data-marquee-collapse></div><div id="b" data-marquee-placement="top">kept</div><p id="after">the rest of the page</p>`))
	b := newTab(t, pub.URL, 1000, 800)
	b.do("open the page", chromedp.Navigate(url))
	b.waitFor("both slots given up", `['a','b'].every(id => document.getElementById(id).dataset.marqueeState === 'empty')`, 10*time.Second)
	if got := eval[string](b, `getComputedStyle(document.getElementById('a')).display + ' ' + getComputedStyle(document.getElementById('b')).display`); got != "none block" {
		t.Errorf("displays of the slots = %q; want the one that asks collapsed, the other kept", got)
	}
	if title := b.text("#title"); title != "News: the page works" {
		t.Errorf("title = %q; want the page's script to have run", title)
	}
	errs, _ := b.logged()
	for _, e := range errs {
		if strings.Contains(e, "exception") {
			t.Errorf("the page threw: %s", e)
		}
	}

	// Privacy: what the decision request carries, and the tag's cookie.
	const cmp = `window.__tcfapi = function (cmd, v, cb) { if (cmd === 'getTCData' && v === 2) cb({gdprApplies: true, tcString: 'CMP-STRING'}, true); };`
	// Stub GPP CMPs (the GPP CMP API 1.1's ping and addEventListener): one
	// ready at once, one whose signal is ready 100 ms later, one for which
	// no section applies ([-1]).
	const gppPing = `{gppVersion: '1.1', cmpStatus: 'loaded', signalStatus: %s, gppString: 'DBABLA~BVQqAAAAAgA.QA', applicableSections: %s}`
	gppReady := `window.__gpp = function (cmd, cb) { if (cmd === 'ping') cb(` + fmt.Sprintf(gppPing, `'ready'`, `[7]`) + `, true); };`
	gppLater := `window.__gpp = function (cmd, cb) { if (cmd === 'ping') cb(` + fmt.Sprintf(gppPing, `'not ready'`, `[7]`) + `, true);
		if (cmd === 'addEventListener') setTimeout(() => cb({eventName: 'signalStatus', data: 'ready', pingData: ` + fmt.Sprintf(gppPing, `'ready'`, `[7]`) + `}, true), 100); };`
	gppNone := `window.__gpp = function (cmd, cb) { if (cmd === 'ping') cb(` + fmt.Sprintf(gppPing, `'ready'`, `[-1]`) + `, true); };`
	for _, c := range []struct {
		name, attrs string
		gpc         bool
		key         string // "" none; "cookie" the tag's cookie's id
		cookie      bool
		script      string // run before the page's (a CMP)
		consent     string // the consent the decision carries, as JSON
	}{
		{"consent and a key", `data-consent="1" data-user="u-1"`, false, "u-1", false, "", `{"given":true}`},
		{"a key without consent", `data-user="u-1"`, false, "", false, "", ""},
		{"consent refused", `data-consent="0" data-user="u-1"`, false, "", false, "", ""},
		// GPC opts out of sale and sharing, not of a key
		// (docs/privacy.md#activities): the publisher's key goes; the
		// tag mints no cookie under it.
		{"GPC", `data-consent="1" data-user="u-1"`, true, "u-1", false, "", `{"given":true}`},
		{"the tag's cookie, opted in", `data-consent="1" data-cookie="1"`, false, "cookie", true, "", `{"given":true}`},
		{"the tag's cookie under GPC", `data-consent="1" data-cookie="1"`, true, "", false, "", `{"given":true}`},
		{"no cookie without the opt-in", `data-consent="1"`, false, "", false, "", `{"given":true}`},
		{"a CMP's TCF string", `data-user="u-1"`, false, "u-1", false, cmp, `{"gdpr":1,"tcf":"CMP-STRING"}`},
		{"a CMP under GPC", `data-user="u-1"`, true, "u-1", false, cmp, `{"gdpr":1,"tcf":"CMP-STRING"}`},
		{"a GPP CMP", `data-user="u-1"`, false, "u-1", false, gppReady, `{"gpp":"DBABLA~BVQqAAAAAgA.QA","gppSid":[7]}`},
		{"a GPP CMP ready later", `data-user="u-1"`, false, "u-1", false, gppLater, `{"gpp":"DBABLA~BVQqAAAAAgA.QA","gppSid":[7]}`},
		{"a GPP CMP that applies no section", `data-user="u-1"`, false, "", false, gppNone, ""},
		{"TCF and GPP CMPs", `data-user="u-1"`, false, "u-1", false, cmp + gppReady, `{"gdpr":1,"tcf":"CMP-STRING","gpp":"DBABLA~BVQqAAAAAgA.QA","gppSid":[7]}`},
		{"data-gdpr-consent", `data-user="u-1" data-gdpr="1" data-gdpr-consent="ATTR-STRING"`, false, "u-1", false, "", `{"gdpr":1,"tcf":"ATTR-STRING"}`},
		{"GDPR said not to apply", `data-user="u-1" data-gdpr="0"`, false, "u-1", false, "", `{"gdpr":0}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newTab(t, pub.URL, 1000, 800)
			before := c.script
			if c.gpc {
				before += `Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', {get: () => true});`
			}
			if before != "" {
				if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: before}); err != nil {
					t.Fatal(err)
				}
			}
			url := pub.page("/privacy", "", pubHTML(ads.url+"/t.js", c.attrs, `<div id="a" data-marquee-placement="top"></div>`))
			b.do("open the page", chromedp.Navigate(url))
			b.waitFor("the slot filled", `document.getElementById('a').dataset.marqueeState === 'filled'`, 10*time.Second)
			var sent struct {
				User    *struct{ Key string }
				Consent json.RawMessage
			}
			json.Unmarshal([]byte(eval[string](b, `window.sent[0].text()`)), &sent)
			if string(sent.Consent) != c.consent {
				t.Errorf("consent sent %s; want %s", sent.Consent, c.consent)
			}
			cookie := eval[string](b, `document.cookie`)
			got := ""
			if sent.User != nil {
				got = sent.User.Key
			}
			want := c.key
			if want == "cookie" {
				want = strings.TrimPrefix(cookie, "mq_uid=")
				if len(want) != 32 {
					t.Fatalf("document.cookie = %q; want the tag's mq_uid of 32 hex digits", cookie)
				}
			}
			if got != want || (cookie != "") != c.cookie {
				t.Errorf("user key sent %q, cookie %q; want key %q, a cookie: %v", got, cookie, want, c.cookie)
			}
		})
	}
}

// recordPage records a video of ms milliseconds (a canvas drawn frame by frame,
// through MediaRecorder) and POSTs it to the publisher's /video.webm:
// Chromium makes the video ad the player plays, with nothing downloaded.
const recordPage = `<!doctype html><html><head><meta charset="utf-8"></head><body><canvas id="c" width="320" height="180"></canvas><script>
window.record = function (ms) {
  return new Promise(function (done) {
    var c = document.getElementById('c'), g = c.getContext('2d'), start = performance.now();
    var rec = new MediaRecorder(c.captureStream(30), { mimeType: 'video/webm;codecs=vp8' }), parts = [];
    rec.ondataavailable = function (e) { parts.push(e.data); };
    rec.onstop = function () { fetch('/video.webm', { method: 'POST', body: new Blob(parts, { type: 'video/webm' }) }).then(function () { done(true); }); };
    (function frame() {
      var t = performance.now() - start;
      g.fillStyle = 'hsl(' + (t / 10 % 360) + ',80%,50%)'; g.fillRect(0, 0, 320, 180);
      g.fillStyle = '#fff'; g.font = '40px sans-serif'; g.fillText((t / 1000).toFixed(1) + ' s', 90, 100);
      if (t < ms) requestAnimationFrame(frame); else rec.stop();
    })();
    rec.start(100);
  });
};
</script></body></html>`

// playerPage is a minimal VAST player, written for this test from the
// VAST 4 specification: it reads the document with DOMParser, plays the
// MediaFile in a plain <video>, and fires the Impression when the video
// plays, the Linear's tracking events (start, the quartiles by the VAST
// Duration, complete, pause, mute, skip) and the Viewable URL after 2
// continuous seconds of play in full view. It fires start twice, as
// careless players do.
const playerPage = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<video id="v" width="640" height="360" muted playsinline></video>
<button id="unmute">unmute</button><button id="mute">mute</button>
<script>
var v = document.getElementById('v');
document.getElementById('unmute').onclick = function () { v.muted = false; };
document.getElementById('mute').onclick = function () { v.muted = true; };
window.play = async function (vastUrl, skipAt) {
  var text = await (await fetch(vastUrl)).text();
  var doc = new DOMParser().parseFromString(text, 'application/xml');
  var ad = doc.querySelector('VAST > Ad > InLine');
  if (!ad) return 'empty';
  var fire = function (u) { return fetch(u.trim().replace('[TIMESTAMP]', encodeURIComponent(new Date().toISOString())), { mode: 'no-cors' }); };
  var track = {}, fired = {};
  ad.querySelectorAll('Linear > TrackingEvents > Tracking').forEach(function (t) { (track[t.getAttribute('event')] = track[t.getAttribute('event')] || []).push(t.textContent); });
  var once = function (e) { if (fired[e]) return; fired[e] = 1; (track[e] || []).forEach(fire); };
  var hms = ad.querySelector('Linear > Duration').textContent.split(':');
  var dur = +hms[0] * 3600 + +hms[1] * 60 + +hms[2];
  return new Promise(function (done) {
    var playedFor = 0, last = 0;
    v.onplaying = function () {
      if (!fired.impression) { fired.impression = 1; ad.querySelectorAll('Impression').forEach(function (e) { fire(e.textContent); }); }
      if (!fired.start) { (track.start || []).forEach(fire); }
      once('start');
      last = performance.now();
    };
    v.ontimeupdate = function () {
      var p = v.currentTime / dur, now = performance.now();
      if (!v.paused && last) { playedFor += now - last; last = now; }
      if (playedFor >= 2000 && !fired.viewable) { fired.viewable = 1; ad.querySelectorAll('ViewableImpression > Viewable').forEach(function (e) { fire(e.textContent); }); }
      if (p >= 0.25) once('firstQuartile');
      if (p >= 0.5) once('midpoint');
      if (p >= 0.75) once('thirdQuartile');
      if (skipAt && v.currentTime >= skipAt) { once('skip'); v.pause(); v.onpause = null; done('skipped'); }
    };
    v.onpause = function () { if (!v.ended) { once('pause'); playedFor = 0; last = 0; } };
    v.onvolumechange = function () { if (v.muted) once('mute'); };
    v.onended = function () { once('complete'); done('complete'); };
    v.src = ad.querySelector('MediaFiles > MediaFile').textContent.trim();
    v.play();
  });
};
</script></body></html>`

// TestVASTPlayerInBrowser plays a video ad in Chromium through a minimal
// VAST player: every tracking event of a full play counted once (start
// fired twice), a second play skipped, and the reports' quartiles,
// completion rate and viewable impression.
func TestVASTPlayerInBrowser(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	pub := newPublisher(t)
	b := newTab(t, pub.URL, 1000, 800)
	// 4.5 s of video, paused by the page itself half a second in: what
	// is left plays for more than the 2 s the viewable impression needs
	// however late a loaded machine runs the test's own steps (a pause
	// sent from the test at "past a second" of a 3.3 s video left too
	// little under load: a speed assertion in disguise).
	pub.recordVideo(b, 4500)
	ads.placement("preroll", `{"type":"video","width":320,"height":180,"mediaUrl":"`+pub.URL+`/video.webm","mimeType":"video/webm","durationMs":4500,"clickUrl":"https://acme.test/video"}`)
	b.do("open the player", chromedp.Navigate(pub.page("/player", "", playerPage)))
	vast := jsString(ads.url + "/vast?placement=preroll")
	eval[bool](b, `(() => {
		const v = document.getElementById('v');
		v.addEventListener('timeupdate', function pause() {
			if (v.currentTime < 0.5) return;
			v.removeEventListener('timeupdate', pause);
			v.pause();
			setTimeout(() => v.play(), 200);
		});
		window.full = window.play(`+vast+`);
		return true;
	})()`)
	b.waitFor("the video playing", `!document.getElementById('v').paused && document.getElementById('v').currentTime > 0.2`, 10*time.Second)
	b.do("unmute and mute, as a person would", chromedp.Click(chromedp.ID("unmute")), chromedp.Click(chromedp.ID("mute")))
	if got := eval[string](b, `window.full`); got != "complete" {
		t.Fatalf("the first play ended %q; want complete", got)
	}
	if got := eval[string](b, `window.play(`+vast+`, 0.5)`); got != "skipped" {
		t.Fatalf("the second play ended %q; want skipped", got)
	}
	if got := eval[string](b, `window.play(`+jsString(ads.url+"/vast?placement=preroll&country=ZZZ")+`).catch(e => String(e))`); got == "complete" {
		t.Fatalf("a VAST request with a bad country played %q", got)
	}
	want := map[string]float64{"impressions": 2, "starts": 2, "firstQuartiles": 1, "midpoints": 1, "thirdQuartiles": 1, "completes": 1,
		"completionRate": 0.5, "videoMeasured": 1, "videoViews": 1, "videoViewability": 1, "views": 0}
	eventually(t, 10*time.Second, func() string {
		got := ads.totals("preroll")
		for k, v := range want {
			if got[k] != v {
				return fmt.Sprintf("the video ad's totals %v; want %v", got, want)
			}
		}
		return ""
	})
	ads.stop()
	types := map[string]int{}
	for _, e := range eventLines(t, ads.data) {
		types[fmt.Sprint(e["type"])]++
	}
	for k, n := range map[string]int{"impression": 2, "start": 2, "pause": 1, "mute": 1, "skip": 1, "complete": 1, "videoViewable": 1} {
		if types[k] != n {
			t.Errorf("event files hold %d %s events; want %d (all: %v)", types[k], k, n, types)
		}
	}
}

// TestTagVideoInBrowser: a video ad the tag plays in a display slot is
// viewable by MRC's video rule — in view while it plays for 2 continuous
// seconds — and not before: a second of play, a pause, and the clock
// starts again.
func TestTagVideoInBrowser(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	pub := newPublisher(t)
	b := newTab(t, pub.URL, 1000, 800)
	b.asPerson()
	pub.recordVideo(b, 6000)
	ads.placement("clip", `{"type":"video","width":320,"height":180,"mediaUrl":"`+pub.URL+`/video.webm","mimeType":"video/webm","durationMs":6000}`)
	b.do("open the page", chromedp.Navigate(pub.page("/clip", "", pubHTML(ads.url+"/t.js", "", `<div id="a" data-marquee-placement="clip"></div>`))))
	b.waitFor("the video playing", `(v => !!v && !v.paused && v.currentTime > 0)(document.querySelector('#a video'))`, 10*time.Second)
	// In the page's own time: a second of play, then a pause of 2.5 s.
	eval[bool](b, `(async () => {
		const v = document.querySelector('#a video'), sleep = ms => new Promise(r => setTimeout(r, ms));
		while (v.currentTime < 1) await sleep(20);
		v.pause();
		await sleep(2500);
		return true;
	})()`)
	time.Sleep(300 * time.Millisecond) // a report flush
	if v := ads.totals("clip")["views"]; v != 0 {
		t.Fatalf("a video played 1 s then paused: %v views; want none", v)
	}
	eval[bool](b, `(document.querySelector('#a video').play(), true)`)
	eventually(t, 6*time.Second, func() string {
		if v := ads.totals("clip")["views"]; v != 1 {
			return fmt.Sprintf("the video played again for over 2 s: %v views; want 1", v)
		}
		return ""
	})
	if c := ads.totals("clip"); c["impressions"] != 1 || c["measured"] != 1 {
		t.Errorf("the video ad's totals %v; want 1 impression, measured", c)
	}
}

// TestTagKeyValuesInBrowser: the page's key-values (data-marquee-kv on
// the tag's script) and a slot's (on the slot) reach the decision, the
// slot's replacing the page's of a key; marquee.set changes the page's,
// and a refresh decides again with them.
func TestTagKeyValuesInBrowser(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	for _, pl := range []string{"side", "box"} {
		ads.expect(ads.admin("POST", "/api/v1/placements", `{"name":"`+pl+`"}`), 201, "")
	}
	for i, c := range []struct{ name, priority, targeting, placement string }{
		{"Sports", "sponsorship", `{"key":"section","in":["sports"]}`, "side"},
		{"News", "standard", `{"key":"section","in":["news"]}`, "side"},
		{"Above the fold", "sponsorship", `{"all":[{"key":"pos","in":["atf"]},{"key":"section","notIn":["news"]}]}`, "box"},
		{"House", "house", `{"key":"pos","exists":true}`, "box"},
	} {
		ads.campaign(`{"advertiserId":"1","name":"` + c.name + `",` + ads.flight + `,"priority":"` + c.priority + `","targeting":` + c.targeting + `}`)
		ads.expect(ads.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"%s",%s,"campaignId":"%d","placements":["%s"],"creative":{"type":"native","title":"%s","clickUrl":"https://acme.test/"}}`,
			c.name, ads.flight, i+1, c.placement, c.name)), 201, "")
	}
	pub := newPublisher(t)
	url := pub.page("/kv", "", pubHTML(ads.url+"/t.js", `data-marquee-kv='{"section":"sports","tags":["a","b"]}'`,
		`<div id="side" data-marquee-placement="side"></div><div id="box" data-marquee-placement="box" data-marquee-kv='{"pos":"atf"}'></div>`))
	b := newTab(t, pub.URL, 1200, 900)
	b.do("open the page", chromedp.Navigate(url))
	b.waitFor("both slots filled", `['side','box'].every(id => document.getElementById(id).dataset.marqueeState === 'filled')`, 10*time.Second)
	if side, box := b.text("#side .mq-title"), b.text("#box .mq-title"); side != "Sports" || box != "Above the fold" {
		t.Errorf("with section=sports, pos=atf on the box: side %q, box %q; want Sports, Above the fold", side, box)
	}
	sent := eval[string](b, `window.sent[0].text()`)
	if !strings.Contains(sent, `"kv":{"section":"sports","tags":["a","b"]}`) || !strings.Contains(sent, `"placement":"box","kv":{"pos":"atf"}`) {
		t.Errorf("decision request = %s; want the page's and the box's key-values", sent)
	}
	eval[bool](b, `(() => { marquee.set({section: 'news', tags: null}); marquee.refresh(true); return true; })()`)
	b.waitFor("decided again", `window.sent.length === 2 && ['side','box'].every(id => document.getElementById(id).dataset.marqueeState === 'filled')`, 10*time.Second)
	b.waitFor("the news ad", `document.querySelector('#side .mq-title') && document.querySelector('#side .mq-title').textContent === 'News'`, 10*time.Second)
	if box := b.text("#box .mq-title"); box != "House" {
		t.Errorf("with section=news: box %q; want House (the sponsorship excludes news)", box)
	}
	if sent := eval[string](b, `window.sent[1].text()`); !strings.Contains(sent, `"kv":{"section":"news"}`) {
		t.Errorf("the second decision request = %s; want the key-values marquee.set left", sent)
	}
}
