//go:build !noconsole

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds Chromium, or skips the test saying how to enable it.
func chromiumPath(t testing.TB) string {
	for _, p := range []string{os.Getenv("MARQUEE_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no Chromium here: install it (apt-get install -y chromium) or set MARQUEE_CHROMIUM to a Chrome binary to run the console's browser tests")
	return ""
}

// maxBrowsers is how many tests drive Chromium at once. The browser tests
// mostly wait on their instances, so more of them run at once than there
// are cores: on 2 cores the package used 44% of them with two at a time,
// the browser slots being the longest road through it. Under the race
// detector every test is busy, not waiting: one at a time.
var maxBrowsers = map[bool]int{false: 4, true: 1}[raceDetector]

var (
	browsers = make(chan struct{}, maxBrowsers)
	// browsing holds the top-level tests that have a browser slot: a test's
	// second tab, or its subtest's, shares it.
	browsing sync.Map
)

// holdBrowser takes a browser slot for t's top-level test until t ends
// (nothing when that test holds one already).
func holdBrowser(t testing.TB) {
	root, _, _ := strings.Cut(t.Name(), "/")
	if _, held := browsing.LoadOrStore(root, true); held {
		return
	}
	browsers <- struct{}{}
	t.Cleanup(func() { browsing.Delete(root); <-browsers })
}

// chromium is the one Chromium of the test binary, started by the first
// tab that needs it and stopped by TestMain after the tests: each tab is a
// target in a browser context of its own (cookies, storage, cache — what
// a Chromium of its own gave it) without the cost of starting a browser.
var chromium struct {
	once sync.Once
	ctx  context.Context // the browser's first target: tabs are made from it
	err  error
}

// sharedBrowser returns the context of the package's Chromium, starting it
// the first time.
func sharedBrowser(t testing.TB) context.Context {
	t.Helper()
	path := chromiumPath(t)
	chromium.once.Do(func() {
		dir, err := os.MkdirTemp("", "marquee-chromium-")
		if err != nil {
			chromium.err = err
			return
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
			// A person's Chrome: headless Chromium says HeadlessChrome, a bot's
			// mark, and a bot's events are never verified (docs/api.md#verified-counts).
			chromedp.UserAgent(desktopChromeUA),
			// Nor does it say navigator.webdriver, which the tag reports as a
			// browser under automation (docs/ivt.md).
			chromedp.Flag("enable-automation", false), chromedp.Flag("disable-blink-features", "AutomationControlled"),
			chromedp.UserDataDir(dir))
		ctx, cancelBrowser := chromedp.NewContext(alloc)
		chromium.ctx = ctx
		afterTests = func() { cancelBrowser(); cancelAlloc(); os.RemoveAll(dir) }
		if err := chromedp.Do(ctx); err != nil { // starts the browser
			chromium.err = fmt.Errorf("start Chromium: %w", err)
		}
	})
	if chromium.err != nil {
		t.Fatal(chromium.err)
	}
	return chromium.ctx
}

// tab is one headless Chromium tab on a Marquee instance. It records
// every console error, uncaught exception and log error of the pages, and
// every request to an origin other than the instance's.
type tab struct {
	t    testing.TB
	ctx  context.Context
	base string

	opened int // pages opened, for their URLs

	mu               sync.Mutex
	errors, requests []string
	forbidden        []string // the requests the server answered 403: a page that offers what its viewer may not do
}

// desktopChromeUA is the User-Agent the tests' browser sends.
const desktopChromeUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36"

func newTab(t testing.TB, base string, width, height int) *tab {
	t.Helper()
	holdBrowser(t)
	ctx, cancelTab := chromedp.NewContext(sharedBrowser(t), chromedp.WithNewBrowserContext())
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancel(); cancelTab() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	b := &tab{t: t, ctx: ctx, base: base}
	requests, consoles := chromedp.Events(ctx, network.RequestWillBeSent), chromedp.Events(ctx, runtime.ConsoleAPICalled)
	responses := chromedp.Events(ctx, network.ResponseReceived)
	exceptions, logs := chromedp.Events(ctx, runtime.ExceptionThrown), chromedp.Events(ctx, cdplog.EntryAdded)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatal(err)
		}
	}
	record := func(list *[]string, s string) { b.mu.Lock(); *list = append(*list, s); b.mu.Unlock() }
	origin, _ := url.Parse(base)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			u, perr := url.Parse(ev.Request.URL)
			if perr != nil || (u.Scheme != "data" && u.Scheme != "blob" && u.Host != origin.Host) {
				record(&b.requests, ev.Request.URL)
			}
		}
	}()
	go func() {
		for ev, err := range responses {
			if err != nil {
				return
			}
			if ev.Response.Status == 403 {
				record(&b.forbidden, ev.Response.URL)
			}
		}
	}()
	go func() {
		for ev, err := range consoles {
			if err != nil {
				return
			}
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				record(&b.errors, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
			}
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			record(&b.errors, "exception: "+msg)
		}
	}()
	go func() {
		for ev, err := range logs {
			if err != nil {
				return
			}
			if e := ev.Entry; e.Level == cdplog.EntryLevelError || e.Level == cdplog.EntryLevelWarning {
				if e.Source == cdplog.EntrySourceNetwork && strings.Contains(e.Text, "status of 4") {
					continue // a 4xx the page expects and handles (the tests cause them on purpose)
				}
				if e.Source == cdplog.EntrySourceNetwork && strings.Contains(e.Text, "status of 503") {
					// The store's deadline passed (a loaded machine under
					// -race): the console asks again after Retry-After
					// (TestConsoleWaitsForASlowStore), and a page that
					// still fails shows no content, which the steps'
					// waits catch. Chromium logs the 503 either way.
					continue
				}
				record(&b.errors, "log "+string(e.Source)+": "+e.Text+" "+e.URL)
			}
		}
	}()
	return b
}

// logged returns a copy of what the pages logged as errors, and of the
// requests they made to other origins, so far: the tab's listeners append
// to both while the test reads them.
func (b *tab) logged() (errors, requests []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.errors), slices.Clone(b.requests)
}

// refused returns the requests the server answered 403 so far.
func (b *tab) refused() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.forbidden)
}

// do runs steps, failing the test on the first error.
func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\n(page: %s)", what, err, b.text("main"))
	}
}

func (b *tab) text(sel string) string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return s
}

// eval runs JavaScript (a promise is awaited) and decodes its value.
func eval[T any](b *tab, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// click clicks the first element sel matches, once it is visible (the
// page reacts as to a person's click; it may replace that element).
func click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).click()`))
}

// open loads a console page (a hash route) as a new document — so that
// nothing of the previous page can answer for it — and waits for sel.
func (b *tab) open(hash, sel string) {
	b.t.Helper()
	b.opened++
	b.do("open "+hash, chromedp.Navigate(b.base+"/admin/?page="+strconv.Itoa(b.opened)+hash), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// labelled fails for every visible form control of the page without a
// label (a <label for>, an enclosing <label>, or aria-label).
func (b *tab) labelled(page string) {
	b.t.Helper()
	bad := eval[[]string](b, `[...document.querySelectorAll('input, select, textarea')]
		.filter(e => e.type !== 'hidden' && e.offsetParent !== null && !e.labels.length && !e.getAttribute('aria-label'))
		.map(e => e.outerHTML)`)
	if len(bad) > 0 {
		b.t.Errorf("%s: controls without a label: %v", page, bad)
	}
}

// absent fails when sel matches anything now.
func (b *tab) absent(sel, why string) {
	b.t.Helper()
	if n := eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)); n != 0 {
		b.t.Errorf("%s: %d elements match %s; want none", why, n, sel)
	}
}

func (b *tab) signIn(email, password string) {
	b.t.Helper()
	b.do("sign in as "+email,
		chromedp.WaitVisible(chromedp.CSS("#signin-password")),
		chromedp.SendKeys(chromedp.CSS("#signin-password input[type=email]"), email),
		chromedp.SendKeys(chromedp.CSS("#signin-password input[type=password]"), password),
		click("#signin-password button[type=submit]"),
		chromedp.WaitVisible(chromedp.CSS("#nav a")))
}

func (b *tab) hash() string { return eval[string](b, `location.hash`) }

// waitHash waits until the page's hash matches re, and returns it.
func (b *tab) waitHash(re string) string {
	b.t.Helper()
	rx := regexp.MustCompile(re)
	for range 100 {
		if h := b.hash(); rx.MatchString(h) {
			return h
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("location.hash = %q; want it to match %s (page: %s)", b.hash(), re, b.text("main"))
	return ""
}

// screenshot writes a PNG of the page to the test's directory, to
// MARQUEE_SCREENSHOTS (docs/, to update the README's pictures) and to
// MARQUEE_ARTIFACTS/<test> (CI's artifacts: .ci/run sets it) when set.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	time.Sleep(300 * time.Millisecond)                            // charts draw on the next frame
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // 100: PNG (less is JPEG)
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	artifacts := os.Getenv("MARQUEE_ARTIFACTS")
	if artifacts != "" {
		artifacts = filepath.Join(artifacts, b.t.Name())
		if err := os.MkdirAll(artifacts, 0o755); err != nil {
			b.t.Fatal(err)
		}
	}
	for _, dir := range []string{b.t.TempDir(), os.Getenv("MARQUEE_SCREENSHOTS"), artifacts} {
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
				b.t.Fatal(err)
			}
		}
	}
}

// fetch runs fetch(path, init) in the page (with its cookie) and returns
// the status and body; init may await.
func (b *tab) fetch(path, init string) (int, string) {
	b.t.Helper()
	var r struct {
		Status int
		Body   string
	}
	raw := eval[[]byte](b, `(async () => { const r = await fetch(`+jsString(path)+`, `+init+`); return {status: r.status, body: await r.text()}; })()`)
	if err := json.Unmarshal(raw, &r); err != nil {
		b.t.Fatalf("fetch %s: %s: %v", path, raw, err)
	}
	return r.Status, r.Body
}

func jsString(s string) string { j, _ := json.Marshal(s); return string(j) }

// ownerConsole starts an instance with an owner (owner@example.com) and
// a tab of width × height signed in to its console as the owner; it skips
// without Chromium.
func ownerConsole(t *testing.T, width, height int) (*instance, *tab) {
	t.Helper()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil)
	return in, signedInTab(t, in, width, height, "owner@example.com", "owner-password-1")
}

// signedInTab is a tab of width × height signed in to in's console as
// email.
func signedInTab(t *testing.T, in *instance, width, height int, email, password string) *tab {
	t.Helper()
	b := newTab(t, in.url, width, height)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn(email, password)
	return b
}

// clean fails the test for every request of the tab's pages the server
// refused (403: a page offered what its viewer may not do) and every
// error they logged.
func (b *tab) clean(who string) {
	b.t.Helper()
	if refused := b.refused(); len(refused) > 0 {
		b.t.Errorf("%s's console asked for what it may not have (403): %v", who, refused)
	}
	if errs, _ := b.logged(); len(errs) > 0 {
		b.t.Errorf("%s's console logged errors: %v", who, errs)
	}
}

// TestConsoleInBrowser drives the console in headless Chromium the way a
// person would: sign in, the overview's chart over seeded reports, an ad
// created through a validation error, edited, duplicated and deleted, a
// link with its QR code, an ad's report and its CSV against the API's, a
// CSRF-less request refused, sign-out, a session that ends mid-visit
// coming back to its page, and a viewer who is offered no write and is
// refused a forged one. No page logs an error or asks another origin for
// anything.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	var out, errb strings.Builder
	if err := run(t.Context(), []string{"seed", "-data", dir, "-ads", "30", "-scheduled", "0", "-expired", "0", "-reports", "14"},
		func(string) string { return "" }, nil, &out, &errb); err != nil {
		t.Fatalf("seed: %v %s", err, errb.String())
	}
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	addUser(t, dir, "viewer@example.com", "viewer", "viewer-password-1")
	in := start(t, dir, nil, "-webhooks-allow-http", "-webhooks-allow-private") // the test's receiver is http on loopback
	b := newTab(t, in.url, 1280, 900)

	// Sign in; the overview draws the seeded reports.
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.waitHash(`^#/signin$`)
	b.signIn("owner@example.com", "owner-password-1")
	b.do("overview", chromedp.WaitVisible(chromedp.CSS(`.chart canvas`)))
	if h1 := b.text("h1"); h1 != "Overview" {
		t.Fatalf("after sign-in: h1 %q; want Overview", h1)
	}
	if v := b.text(`[data-kpi=impressions] .v`); v == "0" || v == "—" || strings.HasPrefix(v, "(") {
		t.Errorf("overview: impressions tile %q; want the seeded count", v)
	}
	if n := eval[int](b, `+document.querySelector('.chart').dataset.points`); n < 7 {
		t.Errorf("overview chart has %d points; want a point a day of the week", n)
	}
	// An honest chart: both axes from 0 and labelled, today apart (dashed,
	// "so far"), ticks labelled as days.
	b.waitFor("the plots", `document.querySelector('.chart').plots?.length > 0`, 5*time.Second)
	chartState := eval[map[string]any](b, `(() => { const c = document.querySelector('.chart');
		return {mins: c.plots.map(u => u.scales.y.min), partial: c.dataset.partial, labels: c.plots.map(u => u.axes[1].label),
			series: c.plots.flatMap(u => u.series.map(s => s.label || ''))}; })()`)
	if mins := fmt.Sprint(chartState["mins"]); mins != "[0 0 0]" {
		t.Errorf("overview chart y axes start at %v; want three plots (impressions, clicks, conversions) from 0", mins)
	}
	if chartState["partial"] != "1" || !strings.Contains(fmt.Sprint(chartState["series"]), "so far") {
		t.Errorf("overview chart: partial %v, series %v; want today drawn apart as so far", chartState["partial"], chartState["series"])
	}
	if labels := fmt.Sprint(chartState["labels"]); labels != "[Impressions Clicks Conversions]" {
		t.Errorf("overview chart axis labels %s; want each plot's axis labelled with its unit", labels)
	}
	topNames := eval[[]string](b, `[...document.querySelector('main section table').querySelectorAll('tbody a')].map(a => a.textContent)`)
	for _, name := range topNames {
		if regexp.MustCompile(`^Ad \d+`).MatchString(name) {
			t.Errorf("top ads %q; want them named by their titles", topNames)
			break
		}
	}
	if len(topNames) == 0 {
		t.Errorf("overview: no top ads")
	}
	b.labelled("overview")
	if m := b.text("main"); regexp.MustCompile(`\b(null|undefined|NaN)\b`).MatchString(m) {
		t.Errorf("overview shows a JavaScript non-value:\n%s", m)
	}
	timing := eval[float64](b, `performance.getEntriesByType('navigation')[0].domInteractive`)
	t.Logf("overview: DOM interactive after %.0f ms", timing)
	b.screenshot("console-overview.png")

	// An ad: a validation error beside its fields, then fixed.
	b.open("#/ads/new", "#ad-form")
	b.do("a condition with an unknown country", click("#add-condition"),
		chromedp.SendKeys(chromedp.CSS(`#conditions input[list]`), "Narnia"), click(`#conditions .add-country`))
	if p := b.text(`#conditions .problem`); !strings.Contains(p, `"Narnia" is not a country`) {
		t.Errorf("country picker after Narnia: %q; want it refused", p)
	}
	b.absent(`#conditions .chip`, "the country picker took Narnia")
	b.do("ages the wrong way round, no title",
		chromedp.SendKeys(chromedp.CSS(`[data-field="conditions[0].ageStart"] input`), "50"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="conditions[0].ageEnd"] input`), "20"),
		click(`#ad-form button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="title"] .problem`)))
	b.labelled("ad editor")
	if p := b.text(`[data-field="title"] .problem`); !strings.Contains(p, "empty") {
		t.Errorf("title problem %q; want it to say the title is empty", p)
	}
	if p := b.text(`[data-field="conditions[0].ageStart"] .problem`); !strings.Contains(p, "greater than ageEnd") {
		t.Errorf("age problem %q beside the age; want the API's words", p)
	}
	b.screenshot("console-ad-editor.png")
	b.do("give the ad a title", chromedp.SendKeys(chromedp.CSS(`[data-field="title"] input`), "Browser ad"))
	b.absent(`[data-field="title"] .problem`, "the title's problem after it was fixed")
	b.do("fix the ages", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-field="conditions[0].ageEnd"] input').value = ''`),
		chromedp.SendKeys(chromedp.CSS(`[data-field="conditions[0].ageEnd"] input`), "60"))
	b.do("add a country", chromedp.Evaluate[chromedp.Void](`document.querySelector('#conditions input[list]').value = ''`),
		chromedp.SendKeys(chromedp.CSS(`#conditions input[list]`), "TW"), click(`#conditions .add-country`))
	b.do("save the ad", click(`#ad-form button[type=submit]`))
	id := strings.TrimPrefix(b.waitHash(`^#/ads/\d+$`), "#/ads/")
	if r := in.get("/api/v1/ad/" + id); !strings.Contains(r.body, `"title":"Browser ad"`) || !strings.Contains(r.body, `"country":["TW"]`) {
		t.Fatalf("the API has ad %s as %s; want the console's title and country", id, r.body)
	}

	// Edit, duplicate, delete.
	b.do("edit", chromedp.WaitVisible(chromedp.ID("edit")), click("#edit"), chromedp.WaitVisible(chromedp.CSS("#ad-form")),
		chromedp.SetValue(chromedp.CSS(`[data-field="title"] input`), "Browser ad 2"), click(`#ad-form button[type=submit]`))
	b.waitHash(`^#/ads/` + id + `$`)
	if r := in.get("/api/v1/ad/" + id); !strings.Contains(r.body, `"title":"Browser ad 2"`) {
		t.Fatalf("after the edit the API has %s", r.body)
	}
	b.do("duplicate", chromedp.WaitVisible(chromedp.ID("duplicate")), click("#duplicate"), chromedp.WaitVisible(chromedp.CSS("#ad-form")),
		click(`#ad-form button[type=submit]`))
	copyID := strings.TrimPrefix(b.waitHash(`^#/ads/\d+$`), "#/ads/")
	if copyID == id {
		t.Fatalf("duplicate stayed on ad %s", id)
	}
	if r := in.get("/api/v1/ad/" + copyID); !strings.Contains(r.body, `"title":"Browser ad 2 (copy)"`) || !strings.Contains(r.body, `"country":["TW"]`) {
		t.Fatalf("the duplicate is %s; want the title with (copy) and the same targeting", r.body)
	}
	b.do("delete", chromedp.WaitVisible(chromedp.CSS(`button.danger`)), click(`button.danger`),
		click(`button.danger + span ~ button.danger, span[role=alert] + button.danger`))
	b.waitHash(`^#/ads(\?.*)?$`)
	if r := in.get("/api/v1/ad/" + copyID); r.status != 404 {
		t.Fatalf("after the delete GET /api/v1/ad/%s = %d; want 404", copyID, r.status)
	}

	// A link and its QR code.
	b.open("#/links/new", "#link-form")
	b.labelled("link editor")
	b.do("create a link",
		chromedp.SendKeys(chromedp.CSS(`[data-field="code"] input`), "brow"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="url"] input`), "https://example.com/landing"),
		click(`#link-form button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`#qr svg`)))
	if v := eval[string](b, `document.getElementById('short-url').value`); v != in.url+"/r/brow" {
		t.Errorf("short URL %q; want %s/r/brow", v, in.url)
	}
	if n := eval[int](b, `(document.querySelector('#qr svg path').getAttribute('d').match(/M/g) || []).length`); n < 100 {
		t.Errorf("the QR code has %d dark modules; want a real code", n)
	}
	if href := eval[string](b, `document.getElementById('qr-svg').href`); !strings.HasPrefix(href, "blob:") {
		t.Errorf("SVG download %q; want a blob: URL", href)
	}

	// An ad's report: the chart draws its rows, and the CSV is the API's.
	b.open("#/ads/1", `section[aria-label=Report] .chart canvas`)
	b.screenshot("console-ad-report.png")
	csvHref := eval[string](b, `document.getElementById('csv').getAttribute('href')`)
	status, csv := b.fetch(csvHref, `{}`)
	api := in.get(csvHref)
	if status != 200 || csv != api.body || !strings.HasPrefix(csv, "t,impressions,clicks,conversions,measured,views,starts,first_quartiles,midpoints,third_quartiles,completes,unverified_impressions,unverified_clicks,unverified_conversions,unverified_views,video_measured,video_views,post_view_conversions,conversion_value_micros,spend_nanos,unbilled,unbilled_nanos,errors,uniques,ctr\n") || strings.Count(csv, "\n") < 8 {
		t.Fatalf("the console's CSV (%d):\n%s\nthe API's (%d):\n%s", status, csv, api.status, api.body)
	}

	// A cookie change without the CSRF token is refused.
	status, body := b.fetch("/api/v1/ad", `{method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({title: 'x', startAt: '2030-01-01T00:00:00Z', endAt: '2030-02-01T00:00:00Z'})}`)
	if status != 403 || !strings.Contains(body, "X-CSRF-Token") {
		t.Errorf("POST without X-CSRF-Token = %d %s; want 403 naming the header", status, body)
	}

	// A session that ends mid-visit: back to sign-in, then to the page.
	b.open("#/links", "table")
	if s, _ := b.fetch("/api/v1/session", `{method: 'DELETE', headers: {'X-CSRF-Token': `+
		`await fetch('/api/v1/session').then(r => r.json()).then(s => s.csrfToken)}}`); s != 204 {
		t.Fatalf("ending the session from outside the console: %d", s)
	}
	b.do("go on after the session ended", chromedp.Evaluate[chromedp.Void](`location.hash = '#/ads'`))
	b.waitHash(`^#/signin$`)
	b.signIn("owner@example.com", "owner-password-1")
	b.waitHash(`^#/ads`)

	// Live: this instance's figures, refreshed.
	b.open("#/live", "#store-state")
	if st := b.text("#store-state"); st != "up" {
		t.Errorf("live: store %q; want up", st)
	}
	time.Sleep(3500 * time.Millisecond) // one refresh: rates need two readings
	if n := eval[int](b, `document.querySelectorAll('[data-spark]').length`); n < 6 {
		t.Errorf("live: %d figures after a refresh; want requests, errors, p99, caches, events, spool, feed", n)
	}

	// Keys: the secret is shown once.
	b.open("#/keys", "#key-form")
	b.labelled("keys")
	b.do("create a key", chromedp.SendKeys(chromedp.CSS(`[data-field="name"] input`), "console key"),
		click(`#key-form input[value="ads:read"]`), click(`#key-form button[type=submit]`), chromedp.WaitVisible(chromedp.CSS("#key-secret")))
	if k := b.text("#key-secret"); !strings.HasPrefix(k, "mq_") {
		t.Errorf("new key's secret %q; want mq_…", k)
	}
	// Webhooks: the secret shown once; a test event from its page, and
	// the attempt in its delivery log.
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer receiver.Close()
	b.open("#/webhooks", "#webhook-form")
	b.labelled("webhooks")
	b.do("create a webhook", chromedp.SendKeys(chromedp.CSS(`[data-field="url"] input`), receiver.URL+"/in"),
		click(`#webhook-form button[type=submit]`), chromedp.WaitVisible(chromedp.CSS("#webhook-secret")))
	if k := b.text("#webhook-secret"); !strings.HasPrefix(k, "whsec_") {
		t.Errorf("new webhook's secret %q; want whsec_…", k)
	}
	var hooks struct{ Webhooks []struct{ ID int64 } }
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/webhooks", "").body), &hooks)
	if len(hooks.Webhooks) != 1 {
		t.Fatalf("webhooks after the console created one: %+v", hooks)
	}
	b.open(fmt.Sprintf("#/webhooks/%d", hooks.Webhooks[0].ID), "#send-webhook")
	b.labelled("webhook")
	b.do("send a test event", click("#send-webhook"), chromedp.WaitVisible(chromedp.CSS("#test-result")))
	if r := b.text("#test-result"); !strings.Contains(r, "Delivered: status 200") {
		t.Errorf("test event: %q; want delivered", r)
	}
	eventually(t, 5*time.Second, func() string { // the page draws the log again after the test
		if n := eval[int](b, `[...document.querySelectorAll('main td')].filter(td => td.textContent === '200').length`); n == 0 {
			return "the test event's attempt is not in the delivery log on its page"
		}
		return ""
	})
	b.open("#/audit", "table")
	b.labelled("audit")
	b.open("#/users", "#user-form")
	b.labelled("users")
	if mine := b.text(`main table`); !strings.Contains(mine, "owner@example.com (you)") {
		t.Errorf("users: %q; want your own row marked", mine)
	}
	b.absent(`select[aria-label="Role of owner@example.com"]`, "a role picker for yourself")
	if n := eval[int](b, `[...document.querySelectorAll('main tr')].filter(r => r.textContent.includes('(you)') && r.querySelector('button.danger')).length`); n != 0 {
		t.Errorf("users: a Remove button beside your own account")
	}
	b.do("change the viewer's role", chromedp.SetValue(chromedp.CSS(`select[aria-label="Role of viewer@example.com"]`), "editor"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('select[aria-label="Role of viewer@example.com"]').dispatchEvent(new Event('change'))`),
		chromedp.WaitVisible(chromedp.CSS(`.confirm button.primary`)))
	if r := in.admin("GET", "/api/v1/users", ""); !strings.Contains(r.body, `"email":"viewer@example.com","role":"viewer"`) {
		t.Errorf("the role changed before it was confirmed: %s", r.body)
	}
	b.do("cancel the change", click(`.confirm button:not(.primary)`))
	if v := eval[string](b, `document.querySelector('select[aria-label="Role of viewer@example.com"]').value`); v != "viewer" {
		t.Errorf("after cancelling, the picker shows %q; want viewer", v)
	}
	b.open("#/audit", "table")
	if a := b.text("main table"); !strings.Contains(a, "create key") || !strings.Contains(a, "delete ad "+copyID) {
		t.Errorf("audit log lacks the key's creation or the ad's deletion:\n%s", a)
	}

	// A phone-width screen: nothing wider than the screen.
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	for _, page := range []string{"#/", "#/ads", "#/ads/1"} {
		b.open(page, "h1")
		if w := eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("%s at 390 px: %d px wider than the screen", page, w)
		}
	}
	b.do("back to a desktop width", chromedp.EmulateViewport(1280, 900))

	// Sign out: the session is over.
	b.do("sign out", click("#signout"), chromedp.WaitVisible(chromedp.CSS("#signin-password")))
	if s, _ := b.fetch("/api/v1/session", `{}`); s != 401 {
		t.Errorf("after sign-out GET /api/v1/session = %d; want 401", s)
	}

	// A viewer sees no write control, and the server refuses a forged write.
	b.signIn("viewer@example.com", "viewer-password-1")
	b.open("#/ads", "table")
	b.absent("#new-ad", "viewer, ads list")
	b.open("#/ads/1", "h1")
	b.absent("#edit, #duplicate, button.danger", "viewer, an ad")
	b.open("#/links/brow", "#qr")
	b.absent("#edit, button.danger", "viewer, a link")
	if nav := b.text("#nav"); strings.Contains(nav, "Users") || strings.Contains(nav, "Keys") {
		t.Errorf("viewer's navigation %q offers users or keys", nav)
	}
	status, body = b.fetch("/api/v1/ad", `{method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': `+
		`await fetch('/api/v1/session').then(r => r.json()).then(s => s.csrfToken)}, body: JSON.stringify({title: 'forged', startAt: '2030-01-01T00:00:00Z', endAt: '2030-02-01T00:00:00Z'})}`)
	if status != 403 || !strings.Contains(body, "ads:write") {
		t.Errorf("viewer's forged POST /api/v1/ad = %d %s; want 403 naming ads:write", status, body)
	}

	errs, reqs := b.logged()
	if len(errs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(errs, "\n"))
	}
	if len(reqs) > 0 {
		t.Errorf("the pages asked other origins: %v", reqs)
	}
}

// BenchmarkConsolePages times the console's pages in headless Chromium
// over a seeded data directory (MARQUEE_CONSOLE_DATA; see
// docs/benchmarks.md "Console"): for each page, from navigation to the
// page showing its data, and the title search's API answer as typed.
//
//	MARQUEE_CONSOLE_DATA=/tmp/cperf go test ./cmd/marquee -run XXX -bench ConsolePages -benchtime 3x
func BenchmarkConsolePages(b *testing.B) {
	dir := os.Getenv("MARQUEE_CONSOLE_DATA")
	if dir == "" {
		b.Skip("set MARQUEE_CONSOLE_DATA to a data dir seeded as docs/benchmarks.md \"Console\" says")
	}
	email, password := fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), "bench-password-1"
	var errb strings.Builder
	if err := run(b.Context(), []string{"users", "add", "-data", dir, "-email", email, "-role", "owner"}, func(string) string { return "" },
		strings.NewReader(password+"\n"), io.Discard, &errb); err != nil {
		b.Fatalf("users add: %v %s", err, errb.String())
	}
	in := start(b, dir, nil)
	tb := newTab(b, in.url, 1280, 900)
	tb.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	tb.signIn(email, password)
	pages := []struct{ name, hash, ready string }{
		{"overview, 7 days", "#/", ".chart canvas"},
		{"overview, 30 days", "#/?range=30d", ".chart canvas"},
		{"ads, every state", "#/ads", "main table"},
		{"ads, active", "#/ads?state=active", "main table"},
		{"ad 1 with its report", "#/ads/1", "section[aria-label=Report] .chart canvas"},
		{"links", "#/links", "main p, main table"},
		{"live", "#/live", "#store-state"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				start := time.Now()
				tb.do(p.name, chromedp.Navigate(in.url+"/admin/?"+strconv.Itoa(rand.IntN(1e9))+p.hash), chromedp.WaitVisible(chromedp.CSS(p.ready)))
				b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/page")
			}
		})
	}
	b.Run("title search as typed", func(b *testing.B) {
		tb.do("ads", chromedp.Navigate(in.url+"/admin/?search#/ads"), chromedp.WaitVisible(chromedp.CSS("input[type=search]")))
		for b.Loop() {
			eval[chromedp.Void](tb, `document.querySelector('input[type=search]').value = ''`)
			eval[chromedp.Void](tb, `performance.clearResourceTimings()`)
			tb.do("type", chromedp.SendKeys(chromedp.CSS(`input[type=search]`), "ad 12"))
			time.Sleep(700 * time.Millisecond)
			ms := eval[[]float64](tb, `performance.getEntriesByType('resource').filter(e => e.name.includes('/api/v1/ads?')).map(e => e.duration)`)
			worst := 0.0
			for _, m := range ms {
				worst = max(worst, m)
			}
			b.ReportMetric(worst, "worst-ms/search")
		}
	})
}

// TestFirstRunInBrowser follows a new install from its setup link to the
// overview: the sign-in page says what to do while no user exists, the
// setup page makes the owner and signs them in, and the console then
// fits a phone and follows a dark system theme.
func TestFirstRunInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	data := t.TempDir()
	in := start(t, data, nil)
	b := newTab(t, in.url, 1280, 900)

	b.do("open the server's root", chromedp.Navigate(in.url+"/"))
	b.waitHash(`^#/signin$`)
	b.do("the sign-in page says no user exists", chromedp.WaitVisible(chromedp.ID("no-user")))
	if note := b.text("#no-user"); !strings.Contains(note, "setup link") || !strings.Contains(note, "users add") {
		t.Errorf("no-user note %q; want the setup link and marquee users add", note)
	}

	link := setupLink(data)
	if !strings.HasPrefix(link, in.url+"/admin/#/setup?token=") {
		t.Fatalf("setup link %q; want %s/admin/#/setup?token=…", link, in.url)
	}
	b.do("open the setup link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("setup")))
	b.labelled("setup")
	b.do("passwords that differ",
		chromedp.SendKeys(chromedp.CSS(`[data-field="email"] input`), "first@example.com"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="password"] input`), "first owner password"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="again"] input`), "first owner passwort"),
		click(`#setup button[type=submit]`), chromedp.WaitVisible(chromedp.CSS(`[data-field="again"] .problem`)))
	b.do("the same password", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-field="again"] input').value = ''`),
		chromedp.SendKeys(chromedp.CSS(`[data-field="again"] input`), "first owner password"),
		click(`#setup button[type=submit]`))
	b.waitHash(`^#/$`)
	b.do("the overview", chromedp.WaitVisible(chromedp.CSS(`#nav a`)), chromedp.WaitVisible(chromedp.CSS(`[data-kpi=impressions]`)))
	if h1, who := b.text("h1"), b.text("#who"); h1 != "Overview" || !strings.Contains(who, "first@example.com (owner)") {
		t.Errorf("after setup: h1 %q, who %q; want the overview, signed in as the owner", h1, who)
	}
	if e := b.text(".chart .empty"); !strings.Contains(e, "No data yet") {
		t.Errorf("a new install's chart: %q; want it to say there is no data yet", e)
	}
	if s, body := b.fetch("/api/v1/setup", `{}`); s != 200 || body != `{"needed":false}` {
		t.Errorf("after setup GET /api/v1/setup = %d %s", s, body)
	}

	// A phone: the navigation stays one line (it scrolls sideways), and no
	// page is wider than the screen.
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	for _, page := range []string{"#/", "#/ads", "#/links", "#/users", "#/keys", "#/audit", "#/account"} {
		b.open(page, "h1")
		if w := eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("%s at 390 px: %d px wider than the screen", page, w)
		}
		if h := eval[float64](b, `document.getElementById('top').getBoundingClientRect().height`); h > 56 {
			t.Errorf("%s at 390 px: the top bar is %.0f px high; want one line", page, h)
		}
	}

	// Dark: the page follows the system's colour scheme.
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	b.open("#/", "h1")
	bg := eval[string](b, `getComputedStyle(document.documentElement).backgroundColor`)
	var r, g, bl int
	if _, err := fmt.Sscanf(bg, "rgb(%d, %d, %d)", &r, &g, &bl); err != nil || r+g+bl > 150 {
		t.Errorf("dark scheme: background %s; want a dark one", bg)
	}
	if errs, _ := b.logged(); len(errs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestCampaignsInBrowser manages the model in the console: an
// advertiser, a campaign (a bad goal refused beside its field first), a
// placement, and an ad in the campaign with an image creative uploaded
// from a file, previewed at its size; an HTML creative previews in a
// sandboxed frame of its size; the campaign list shows its goal's
// progress.
func TestCampaignsInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil)
	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")

	b.open("#/advertisers/new", "#advertiser-form")
	b.labelled("advertiser editor")
	b.do("create an advertiser", chromedp.SendKeys(chromedp.CSS(`[data-field="name"] input`), "Acme"), click(`#advertiser-form button[type=submit]`))
	adv := strings.TrimPrefix(b.waitHash(`^#/advertisers/\d+$`), "#/advertisers/")
	b.do("new campaign", click("#new-campaign"), chromedp.WaitVisible(chromedp.CSS("#campaign-form")))
	b.labelled("campaign editor")
	if v := eval[string](b, `document.querySelector('[data-field="advertiserId"] select').value`); v != adv {
		t.Errorf("the campaign form's advertiser = %q; want %s (from the advertiser's page)", v, adv)
	}
	b.do("a goal of 0", chromedp.SendKeys(chromedp.CSS(`[data-field="name"] input`), "Spring"),
		chromedp.SetValue(chromedp.CSS(`[data-field="goal.metric"] select`), "clicks"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="goal.total"] input`), "0"),
		click(`#campaign-form button[type=submit]`), chromedp.WaitVisible(chromedp.CSS(`[data-field="goal.total"] .problem`)))
	b.do("a goal of 100 and a price", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-field="goal.total"] input').value = '100'`),
		chromedp.SetValue(chromedp.CSS(`[data-field="price.model"] select`), "cpc"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="price.amount"] input`), "0.25"),
		click(`#campaign-form button[type=submit]`))
	camp := strings.TrimPrefix(b.waitHash(`^#/campaigns/\d+$`), "#/campaigns/")
	if r := in.admin("GET", "/api/v1/campaigns/"+camp, ""); !strings.Contains(r.body, `"goal":{"metric":"clicks","total":100}`) || !strings.Contains(r.body, `"price":{"model":"cpc","amount":0.25}`) {
		t.Fatalf("the API has campaign %s as %s", camp, r.body)
	}
	// A new campaign is a draft: the owner may submit or approve it at once.
	b.do("approve the draft", chromedp.WaitVisible(chromedp.ID("submit")), click("#approve"), chromedp.WaitVisible(chromedp.ID("pause")))
	if r := in.admin("GET", "/api/v1/campaigns/"+camp, ""); !strings.Contains(r.body, `"state":"active","review":{"action":"approve","by":"user:`) {
		t.Fatalf("the API has campaign %s as %s; want it approved by the owner", camp, r.body)
	}

	b.open("#/placements/new", "#placement-form")
	b.labelled("placement editor")
	b.do("create a placement", chromedp.SendKeys(chromedp.CSS(`[data-field="name"] input`), "home-top"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="sizes"] input`), "300x250"), click(`#placement-form button[type=submit]`))
	b.waitHash(`^#/placements/home-top$`)
	b.do("the placement's page", chromedp.WaitVisible(chromedp.ID("tag-snippet")))
	if got := eval[string](b, `document.getElementById('tag-snippet').value`); got != `<script async src="`+in.url+`/t.js"></script>`+"\n"+`<div data-marquee-placement="home-top" data-marquee-size="300x250" style="min-height:250px"></div>` {
		t.Errorf("the placement's tag snippet = %q", got)
	}
	if got := eval[string](b, `document.getElementById('vast-url').value`); got != in.url+"/vast?placement=home-top" {
		t.Errorf("the placement's VAST URL = %q (it takes every type, video too)", got)
	}

	// An ad in the campaign, with an image uploaded from a file.
	img := filepath.Join(t.TempDir(), "banner.png")
	var buf bytes.Buffer
	png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 300, 250)))
	os.WriteFile(img, buf.Bytes(), 0o644)
	b.open("#/campaigns/"+camp, "#new-ad")
	b.do("new ad in the campaign", click("#new-ad"), chromedp.WaitVisible(chromedp.CSS("#ad-form")))
	b.labelled("ad editor with a creative")
	if v := eval[string](b, `document.querySelector('[data-field="campaignId"] select').value`); v != camp {
		t.Errorf("the ad form's campaign = %q; want %s", v, camp)
	}
	b.do("an image creative", chromedp.SendKeys(chromedp.CSS(`[data-field="title"] input`), "Spring banner"),
		chromedp.SetValue(chromedp.CSS(`#creative select[aria-label="Creative type"]`), "image"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#creative select').dispatchEvent(new Event('change'))`),
		chromedp.SetUploadFiles(chromedp.CSS("#creative-file"), []string{img}),
		chromedp.WaitVisible(chromedp.CSS(`#creative-preview img[src^="/assets/"]`)))
	// Once loaded: the img is visible before its bytes arrive (naturalWidth 0).
	size := eval[[]int](b, `(async () => { const i = document.querySelector('#creative-preview img'); await i.decode().catch(() => {}); return [i.width, i.height, i.naturalWidth]; })()`)
	if len(size) != 3 || size[0] != 300 || size[1] != 250 || size[2] != 300 {
		t.Errorf("the preview image is %v; want 300x250 at its natural width 300", size)
	}
	b.do("limit it to home-top, save", click(`[data-field="placements"] input[value="home-top"]`), click(`#ad-form button[type=submit]`))
	// Saved without a click URL: the API's warning is shown beside the
	// creative's field, on the new ad's editor.
	ad := strings.TrimSuffix(strings.TrimPrefix(b.waitHash(`^#/ads/\d+/edit$`), "#/ads/"), "/edit")
	b.do("the warning", chromedp.WaitVisible(chromedp.CSS(`#saved-with-warnings`)))
	if w := eval[string](b, `[...document.querySelectorAll('#ad-form .warning')].map(w => w.closest('[data-field]').dataset.field + ': ' + w.textContent).join('; ')`); !strings.Contains(w, "creative") || !strings.Contains(w, "goes nowhere") {
		t.Errorf("warnings beside the fields: %q; want the creative's empty click URL", w)
	}
	if r := in.get("/api/v1/ad/" + ad); !strings.Contains(r.body, `"campaignId":"`+camp+`"`) || !strings.Contains(r.body, `"image":"/assets/`) ||
		!strings.Contains(r.body, `"placements":["home-top"]`) || !strings.Contains(r.body, `"width":300,"height":250`) {
		t.Fatalf("the API has ad %s as %s", ad, r.body)
	}

	// An HTML creative previews in a sandboxed frame of its size.
	b.open("#/ads/new", "#ad-form")
	// Its own style and script run there (a frame holding the console's
	// policy blocked both): the script reports its style's color to the
	// console's window, which the test listens to.
	eval[bool](b, `(() => { window.fromPreview = []; addEventListener('message', e => fromPreview.push(String(e.data))); return true; })()`)
	b.do("an html creative", chromedp.SetValue(chromedp.CSS(`#creative select[aria-label="Creative type"]`), "html"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#creative select').dispatchEvent(new Event('change'))`),
		chromedp.SendKeys(chromedp.CSS(`[data-field="creative.width"] input`), "728"),
		chromedp.SendKeys(chromedp.CSS(`[data-field="creative.height"] input`), "90"),
		chromedp.SetValue(chromedp.CSS(`[data-field="creative.html"] textarea`), `<style>b{color:rgb(1, 2, 3)}</style><b id="x">Hello</b><script>var c; try { c = 'cookies ' + document.cookie.length } catch (e) { c = 'sandboxed' } parent.postMessage('ran ' + getComputedStyle(document.getElementById('x')).color + ' ' + c, '*')</script>`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-field="creative.html"] textarea').dispatchEvent(new Event('input', {bubbles: true}))`),
		chromedp.WaitVisible(chromedp.CSS(`#creative-preview iframe`)))
	b.waitFor("the preview frame's URL", `!!document.querySelector('#creative-preview iframe').src`, 5*time.Second)
	frame := eval[[]string](b, `(() => { const f = document.querySelector('#creative-preview iframe'); return [f.getAttribute('sandbox'), f.width, f.height, new URL(f.src).pathname]; })()`)
	if len(frame) != 4 || frame[0] != "allow-scripts" || frame[1] != "728" || frame[2] != "90" || !regexp.MustCompile(`^/f/[A-Za-z0-9_-]{40,}$`).MatchString(frame[3]) {
		t.Errorf("the HTML preview frame is %q; want sandbox allow-scripts (no same origin), 728x90, a serving frame's URL (/f/<token>)", frame)
	}
	b.waitFor("the creative's own script", `fromPreview.some(m => m.startsWith('ran '))`, 5*time.Second)
	if got := eval[[]string](b, `fromPreview.filter(m => m.startsWith('ran '))`); len(got) == 0 || got[len(got)-1] != "ran rgb(1, 2, 3) sandboxed" {
		t.Errorf("the creative's script said %q; want its own style applied (rgb(1, 2, 3)) and no access to cookies (an opaque origin)", got)
	}
	// A creative that calls home from its preview (to cloak: show the
	// reviewer one thing, the audience another) is stopped: its fetch and
	// its beacon image from elsewhere are blocked by the frame's policy.
	b.do("a creative that calls home", chromedp.SetValue(chromedp.CSS(`[data-field="creative.html"] textarea`),
		`<script>document.addEventListener('securitypolicyviolation', e => parent.postMessage('blocked ' + e.effectiveDirective, '*'));
fetch('`+in.url+`/api/v1/session').then(() => parent.postMessage('home fetched', '*'), () => parent.postMessage('home refused', '*'));
new Image().src = 'http://127.0.0.1:9/beacon.gif';</script>`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-field="creative.html"] textarea').dispatchEvent(new Event('input', {bubbles: true}))`))
	b.waitFor("the preview's policy", `fromPreview.includes('home refused') && fromPreview.includes('blocked connect-src') && fromPreview.includes('blocked img-src')`, 5*time.Second)
	if got := eval[[]string](b, `fromPreview`); slices.Contains(got, "home fetched") {
		t.Errorf("the preview's creative reached home: %q", got)
	}

	// Preview: who wins the placement, and why the others do not.
	b.open("#/decisions", "#preview-form")
	b.labelled("preview")
	b.do("preview home-top", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('#preview-placements input').forEach(i => i.checked = i.value === 'home-top')`),
		click(`#preview-form button[type=submit]`), chromedp.WaitVisible(chromedp.CSS(`#preview-result table`)))
	if txt := b.text("#preview-result"); !strings.Contains(txt, "home-top: ad "+ad+" of Spring") || !strings.Contains(txt, "chosen") || strings.Contains(txt, "campaign "+camp) {
		t.Errorf("the preview says %q; want ad %s of Spring (the campaign by its name) chosen", txt, ad)
	}
	// The ad's page names its campaign and says what the campaign targets.
	b.open("#/ads/"+ad, "#campaign-targeting")
	if txt := b.text("main"); !strings.Contains(txt, "Campaign: Spring") || !strings.Contains(b.text("#campaign-targeting"), "Its campaign serves") {
		t.Errorf("the ad's page says %q; want its campaign by name and the campaign's targeting", txt)
	}
	b.open("#/ads", "main table")
	if txt := b.text("main table"); !strings.Contains(txt, "Spring") {
		t.Errorf("the ad list %q; want the campaign's name beside its ad", txt)
	}
	// A campaign's delivery: this instance's decisions.
	in.expect(in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"placement":"home-top"}]}`), 200, "")
	b.open("#/campaigns/"+camp, "#delivery")
	if txt := b.text("#delivery"); strings.Contains(txt, "no —") || !strings.Contains(txt, "1 decision chose it since") {
		t.Errorf("the campaign's delivery says %q; want it serving, 1 decision", txt)
	}
	if n := eval[int](b, `document.querySelectorAll('#cap-needs-user').length`); n != 0 {
		t.Errorf("an uncapped campaign's page explains caps (%d notes); want none", n)
	}
	// Capped: the page says what a decision must send for the cap to apply.
	var c map[string]any
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/campaigns/"+camp, "").body), &c)
	for _, k := range []string{"id", "state", "review", "createdAt", "updatedAt"} {
		delete(c, k)
	}
	c["frequencyCap"] = map[string]any{"count": 3, "window": "24h"}
	body, _ := json.Marshal(c)
	in.expect(in.admin("PUT", "/api/v1/campaigns/"+camp, string(body)), 200, "")
	b.open("#/campaigns/"+camp, "#cap-needs-user")
	if txt := b.text("#cap-needs-user"); !strings.Contains(txt, "data-user") || !strings.Contains(txt, "uncapped") {
		t.Errorf("a capped campaign's page says %q; want how a decision carries a user key, and that without one it serves uncapped", txt)
	}
	b.open("#/campaigns", "table")
	if txt := b.text("main table"); !strings.Contains(txt, "Spring") || !strings.Contains(txt, "%") {
		t.Errorf("the campaign list %q; want Spring with its goal's progress", txt)
	}
	b.labelled("campaign list")
	if errs, _ := b.logged(); len(errs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestTargetingEditorInBrowser: a campaign's targeting rules made in the
// console's editor — a key-value offered from the values reports counted,
// a device rule, a day-part, a time zone — reach the API as a tree; a bad
// rule is named beside its row; a deeper tree is edited as JSON; and the
// decision preview takes key-values, a URL and a time, naming the rule
// that leaves the campaign out.
func TestTargetingEditorInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-report-keys", "section", "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Seed",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"seed",`+flight+`,"campaignId":"1","creative":{"type":"html","width":300,"height":250,"html":"x"}}`), 201, "")
	// Traffic of section=travel, which the editor then offers.
	r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"s","placement":"side"}],"kv":{"section":"travel"}}`)
	var got struct {
		Decisions map[string][]struct{ ImpressionURL string }
	}
	if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["s"]) != 1 {
		t.Fatalf("seed decision = %s", r.body)
	}
	fire(t, got.Decisions["s"][0].ImpressionURL)
	eventually(t, 10*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/stats?by=kv.section", ""); !strings.Contains(r.body, `"value":"travel"`) {
			return "the stats by section: " + r.body
		}
		return ""
	})

	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")
	b.open("#/campaigns/1/edit", "#targeting")
	b.do("a rule on section", click("#add-rule"),
		chromedp.SendKeys(chromedp.CSS(`#targeting-rules .rule input[aria-label=Key]`), "section"))
	if offered := eval[string](b, `[...document.querySelectorAll('#targeting-rules datalist option')].map(o => o.value).join(',')`); offered != "travel" {
		t.Errorf("values offered for section = %q; want travel (counted last week)", offered)
	}
	b.do("values travel, sports; a bad device", chromedp.SendKeys(chromedp.CSS(`#targeting-rules .rule input[aria-label^=Values]`), "travel, sports"),
		click("#add-rule"),
		chromedp.SendKeys(chromedp.CSS(`#targeting-rules .rule:nth-child(2) input[aria-label=Key]`), "$device"),
		chromedp.SendKeys(chromedp.CSS(`#targeting-rules .rule:nth-child(2) input[aria-label^=Values]`), "watch"),
		click(`#campaign-form button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="targeting.all[1]"] .problem`)))
	if p := b.text(`[data-field="targeting.all[1]"] .problem`); !strings.Contains(p, "desktop, phone, tablet, tv, bot") {
		t.Errorf("the device rule's problem = %q", p)
	}
	b.do("phone, a day-part, a time zone", chromedp.Evaluate[chromedp.Void](`document.querySelector('#targeting-rules .rule:nth-child(2) input[aria-label^=Values]').value = 'phone'`),
		click("#add-daypart"),
		click(`#targeting-rules .rule:nth-child(3) input[value=mon]`),
		chromedp.SetValue(chromedp.CSS(`#targeting-rules .rule:nth-child(3) input[aria-label=From]`), "09:00"),
		chromedp.SetValue(chromedp.CSS(`#targeting-rules .rule:nth-child(3) input[aria-label=To]`), "17:30"),
		chromedp.SendKeys(chromedp.ID("time-zone"), "Europe/Berlin"),
		click(`#campaign-form button[type=submit]`))
	b.waitHash(`^#/campaigns/1$`)
	want := `"targeting":{"all":[{"key":"section","in":["travel","sports"]},{"key":"$device","in":["phone"]},{"dayPart":{"days":["mon"],"from":"09:00","to":"17:30"}}]},"timeZone":"Europe/Berlin"`
	if r := in.admin("GET", "/api/v1/campaigns/1", ""); !strings.Contains(r.body, want) {
		t.Fatalf("the API has campaign 1 as %s; want …%s…", r.body, want)
	}
	if facts := b.text(".facts"); !strings.Contains(facts, "section is one of travel, sports and $device is one of phone and mon 09:00–17:30 (Europe/Berlin)") {
		t.Errorf("the campaign's facts = %q; want its rules in words", facts)
	}
	// A deeper tree is edited as JSON.
	in.expect(in.admin("PUT", "/api/v1/campaigns/1", `{"advertiserId":"1","name":"Seed",`+flight+`,"targeting":{"all":[{"key":"section","in":["travel"]},{"not":{"key":"pos","in":["btf"]}}]}}`), 200, "")
	b.open("#/campaigns/1/edit", "#targeting")
	if shown := eval[bool](b, `!document.getElementById('targeting-as-json').hidden && document.getElementById('targeting-simple').hidden`); !shown {
		t.Errorf("a tree with a not is not shown as JSON")
	}
	b.do("save it as it is", click(`#campaign-form button[type=submit]`))
	b.waitHash(`^#/campaigns/1$`)
	if r := in.admin("GET", "/api/v1/campaigns/1", ""); !strings.Contains(r.body, `"targeting":{"all":[{"key":"section","in":["travel"]},{"not":{"key":"pos","in":["btf"]}}]}`) {
		t.Errorf("after a save of the JSON: %s", r.body)
	}

	// The preview: key-values, a URL and a time.
	b.open("#/decisions", "#preview-form")
	b.do("preview pos=btf", chromedp.SendKeys(chromedp.ID("preview-kv"), "section=travel, pos=btf"),
		chromedp.SendKeys(chromedp.ID("preview-url"), "https://news.example/travel/"),
		click(`#preview-form button[type=submit]`), chromedp.WaitVisible(chromedp.CSS("#preview-result table")))
	if res := b.text("#preview-result"); !strings.Contains(res, "campaign targeting: not (kv pos in [btf]) matched") {
		t.Errorf("the preview = %q; want the rule that left the campaign out", res)
	}
}
