//go:build !noconsole

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// layoutShiftJS sums the page's layout shifts (Cumulative Layout Shift,
// as Core Web Vitals count it: shifts without recent input) into
// window.cls, from the page's first paint.
const layoutShiftJS = `<script>window.cls = 0;
new PerformanceObserver(function (l) { l.getEntries().forEach(function (e) { if (!e.hadRecentInput) window.cls += e.value; }); })
  .observe({type: 'layout-shift', buffered: true});</script>`

// TestTagCausesNoLayoutShift: three slots of known sizes (as the
// console's snippet writes them), each with text below it, are filled
// without moving anything (a CLS of 0 from the tag); the same page
// without the sizes shifts (the measure can fail).
func TestTagCausesNoLayoutShift(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	for _, p := range []struct{ name, size string }{{"top", "728x90"}, {"side", "300x250"}, {"tall", "300x600"}} {
		w, h, _ := strings.Cut(p.size, "x")
		ads.placement(p.name, `{"type":"html","html":"<b>`+p.name+`</b>","width":`+w+`,"height":`+h+`}`)
	}
	pub := newPublisher(t)
	page := func(path string, sized bool) string {
		body := layoutShiftJS
		for _, p := range []struct{ name, size string }{{"top", "728x90"}, {"side", "300x250"}, {"tall", "300x600"}} {
			attr := ""
			if sized { // as the console's snippet writes it: the page reserves the size as it is parsed
				_, h, _ := strings.Cut(p.size, "x")
				attr = ` data-marquee-size="` + p.size + `" style="min-height:` + h + `px"`
			}
			body += `<div id="` + p.name + `" data-marquee-placement="` + p.name + `"` + attr + `></div><p>The story goes on below the ` + p.name + ` slot.</p>`
		}
		return pub.page(path, "", pubHTML(ads.url+"/t.js", "", body))
	}
	for _, sized := range []bool{true, false} {
		b := newTab(t, pub.URL, 1200, 2000)
		b.do("open the page", chromedp.Navigate(page(map[bool]string{true: "/sized", false: "/unsized"}[sized], sized)))
		b.waitFor("the three slots filled and drawn", `['top','side','tall'].every(id => document.getElementById(id).dataset.marqueeState === 'filled') &&
			[...document.querySelectorAll('iframe')].length === 3`, 10*time.Second)
		time.Sleep(500 * time.Millisecond) // shifts are reported after the frame
		cls := eval[float64](b, `window.cls`)
		if sized && cls != 0 {
			t.Errorf("with the slots' sizes: CLS %v; want 0", cls)
		}
		if !sized && cls == 0 {
			t.Errorf("without the slots' sizes: CLS 0; want a shift (else the measure cannot fail)")
		}
	}
}

// TestTagLazyLoading: with data-lazy="200", a slot three screens down is
// not decided when the page loads, and is once scrolled near; the slot at
// the top is decided at once.
func TestTagLazyLoading(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	ads.placement("top", `{"type":"native","title":"Top"}`)
	ads.placement("low", `{"type":"native","title":"Low"}`)
	pub := newPublisher(t)
	url := pub.page("/lazy", "", pubHTML(ads.url+"/t.js", `data-lazy="200"`,
		`<div id="top" data-marquee-placement="top"></div><div style="height:2700px">a long story</div><div id="low" data-marquee-placement="low"></div>`))
	b := newTab(t, pub.URL, 1200, 900)
	b.do("open the page", chromedp.Navigate(url))
	b.waitFor("the top slot filled", `document.getElementById('top').dataset.marqueeState === 'filled'`, 10*time.Second)
	time.Sleep(500 * time.Millisecond)
	if n, state := eval[int](b, `window.sent.length`), eval[string](b, `document.getElementById('low').dataset.marqueeState`); n != 1 || state != "waiting" {
		t.Fatalf("after the page loaded: %d decision requests, the low slot %q; want 1 and waiting", n, state)
	}
	if sent := eval[string](b, `window.sent[0].text()`); strings.Contains(sent, `"low"`) {
		t.Errorf("the first decision asked for the low slot too: %s", sent)
	}
	eval[bool](b, `(() => { window.scrollTo(0, 2000); return true; })()`)
	b.waitFor("the low slot decided once near", `window.sent.length === 2 && document.getElementById('low').dataset.marqueeState === 'filled'`, 10*time.Second)
}

// TestTagViewableRefresh: a slot with data-marquee-refresh="1" and
// data-marquee-refresh-max="2" is decided again only while in view — not
// while scrolled away — and at most twice.
func TestTagViewableRefresh(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	ads.placement("box", `{"type":"native","title":"Box"}`)
	pub := newPublisher(t)
	url := pub.page("/refresh", "", pubHTML(ads.url+"/t.js", "",
		`<div style="height:1800px">a long story</div><div id="box" data-marquee-placement="box" data-marquee-refresh="1" data-marquee-refresh-max="2"></div><div style="height:1800px"></div>`))
	b := newTab(t, pub.URL, 1200, 900)
	b.do("open the page", chromedp.Navigate(url))
	b.waitFor("the slot filled", `document.getElementById('box').dataset.marqueeState === 'filled'`, 10*time.Second)
	time.Sleep(2500 * time.Millisecond) // out of view: no refresh
	if n := eval[int](b, `window.sent.length`); n != 1 {
		t.Fatalf("out of view for 2.5 s: %d decision requests; want 1 (no refresh)", n)
	}
	eval[bool](b, `(() => { document.getElementById('box').scrollIntoView(); return true; })()`)
	b.waitFor("refreshed twice in view", `window.sent.length === 3`, 10*time.Second)
	time.Sleep(2500 * time.Millisecond)
	if n := eval[int](b, `window.sent.length`); n != 3 {
		t.Errorf("after the most refreshes: %d decision requests; want 3 (one and two refreshes)", n)
	}
}

// TestTagSinglePageApp: with data-spa="1", a new page (pushState) decides
// the slot again, and a slot the app adds later is filled.
func TestTagSinglePageApp(t *testing.T) {
	t.Parallel()
	ads := newAdServer(t)
	ads.placement("box", `{"type":"native","title":"Box"}`)
	pub := newPublisher(t)
	url := pub.page("/app", "", pubHTML(ads.url+"/t.js", `data-spa="1"`, `<div id="box" data-marquee-placement="box"></div><main id="view"></main>`))
	b := newTab(t, pub.URL, 1200, 900)
	b.do("open the app", chromedp.Navigate(url))
	b.waitFor("the slot filled", `document.getElementById('box').dataset.marqueeState === 'filled'`, 10*time.Second)
	eval[bool](b, `(() => { history.pushState({}, '', '/app/next'); return true; })()`)
	b.waitFor("decided again on the new page", `window.sent.length === 2 && document.getElementById('box').dataset.marqueeState === 'filled'`, 10*time.Second)
	if sent := eval[string](b, `window.sent[1].text()`); !strings.Contains(sent, `/app/next`) {
		t.Errorf("the second decision = %s; want the new page's URL", sent)
	}
	eval[bool](b, `(() => { const s = document.createElement('div'); s.id = 'later'; s.dataset.marqueePlacement = 'box';
		document.getElementById('view').append(s); return true; })()`)
	b.waitFor("the slot added later filled", `document.getElementById('later').dataset.marqueeState === 'filled'`, 10*time.Second)
}
