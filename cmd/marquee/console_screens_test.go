//go:build !noconsole

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestChartsMoneyAndSmallScreensInBrowser: a campaign with 7 impressions
// and 3 clicks charts both, each on its own labelled axis from 0, with a
// legend that is empty until the cursor is on a day and then shows that
// day's values in every plot; spend and prices carry the configured
// currency; the campaign list has the columns an ad team sorts by, and
// sorts; and the console's pages at 390 px, light and dark, fit the
// screen — fields full width, the last date label inside its chart, the
// sections' bar saying it scrolls. Screenshots of each go to the test's
// directory and to MARQUEE_ARTIFACTS (CI keeps them).
func TestChartsMoneyAndSmallScreensInBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-reports-flush", "100ms", "-currency", "EUR")
	flight := flightJSON(-24*time.Hour, 24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Spring",` + flight + `,"price":{"model":"cpm","amount":4.5},"goal":{"metric":"impressions","total":1000}}`)
	in.campaign(`{"advertiserId":"1","name":"Quiet",` + flight + `,"priority":"house"}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Spring banner with a long title that a phone must wrap",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/a/very/long/path/that/must/not/widen/the/page"}}`), 201, "")
	for i := range 7 {
		var got struct {
			Decisions map[string][]struct{ ImpressionURL, ClickURL string }
		}
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"placement":"side"}]}`)
		if json.Unmarshal([]byte(r.body), &got) != nil || len(got.Decisions["side"]) != 1 {
			t.Fatalf("decision %d = %s", i, r.body)
		}
		fire(t, got.Decisions["side"][0].ImpressionURL)
		if i < 3 {
			fire(t, got.Decisions["side"][0].ClickURL)
		}
	}
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/campaigns/1/stats"); s.Totals.Impressions != 7 || s.Totals.Clicks != 3 {
			return fmt.Sprintf("campaign 1: %+v", s.Totals)
		}
		return ""
	})

	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")

	// The chart: one plot per unit, each from 0 on its labelled axis, its
	// highest value well up the plot (not squashed under another's scale).
	b.open("#/campaigns/1", `section[aria-label=Report] .chart canvas`)
	b.waitFor("the plots", `document.querySelector('section[aria-label=Report] .chart').plots?.length >= 2`, 5*time.Second)
	type plot struct {
		Metric, Label, Legend string
		Min, Max, Top, Height float64
		Peak                  float64
	}
	plots := func() []plot {
		return eval[[]plot](b, `document.querySelector('section[aria-label=Report] .chart').plots.map(u => {
			const vals = u.data.slice(1).flat().filter(v => v !== null), peak = Math.max(...vals);
			return {metric: u.metric, label: u.axes[1].label, min: u.scales.y.min, max: u.scales.y.max, peak,
				top: u.valToPos(peak, 'y'), height: u.bbox.height / devicePixelRatio,
				legend: [...u.root.querySelectorAll('.u-legend .u-value')].map(v => v.textContent).join('|')};
		})`)
	}
	ps := plots()
	byMetric := map[string]plot{}
	for _, p := range ps {
		byMetric[p.Metric] = p
	}
	for _, want := range []struct {
		metric, label string
		peak          float64
	}{{"impressions", "Impressions", 7}, {"clicks", "Clicks", 3}, {"spend", "Spend (EUR)", 0.0315}} {
		p, ok := byMetric[want.metric]
		switch {
		case !ok:
			t.Errorf("no plot of %s in %+v", want.metric, ps)
		case p.Min != 0 || p.Max < want.peak || p.Label != want.label:
			t.Errorf("%s plot: axis %q from %v to %v; want %q from 0 past %v", want.metric, p.Label, p.Min, p.Max, want.label, want.peak)
		case p.Peak != want.peak || p.Top < 0 || p.Top > p.Height/2:
			t.Errorf("%s plot: peak %v drawn %v px from the top of %v; want %v in the upper half", want.metric, p.Peak, p.Top, p.Height, want.peak)
		case strings.Trim(p.Legend, "|") != "":
			t.Errorf("%s plot's legend without a cursor: %q; want nothing (no --)", want.metric, p.Legend)
		}
	}
	if _, ok := byMetric["conversions"]; ok || !strings.Contains(b.text("section[aria-label=Report] .chart"), "No conversions in this range.") {
		t.Errorf("a range without conversions: plots %+v, chart says %q; want no plot, and a line saying so", ps, b.text("section[aria-label=Report] .chart"))
	}
	// The cursor on today: every plot's legend shows today's value.
	at := eval[[]float64](b, `(() => { const o = document.querySelector('section[aria-label=Report] .chart .plot .u-over'); o.scrollIntoView({block: 'center'}); const r = o.getBoundingClientRect(); return [r.right - 2, r.top + r.height / 2]; })()`)
	b.do("hover today", chromedp.MouseEvent(chromedp.MouseMoved, at[0], at[1]))
	time.Sleep(100 * time.Millisecond)
	for _, p := range plots() {
		want := map[string]string{"impressions": "|7", "clicks": "|3", "spend": "|€0.0315"}[p.Metric]
		if !strings.Contains(p.Legend, want) {
			t.Errorf("%s plot's legend under the cursor: %q; want it to hold %q", p.Metric, p.Legend, want)
		}
	}

	// Money and units, said.
	if s, price := b.text("#spend"), b.text("main dl.facts"); !strings.Contains(s, "€0.0315") || !strings.Contains(price, "€4.50 per 1,000 impressions (CPM)") {
		t.Errorf("spend %q, facts %q; want €0.0315 and the price €4.50 per 1,000 impressions (CPM)", s, price)
	}
	if d := b.text("#delivery"); !strings.Contains(d, "Decisions (this instance)") || !strings.Contains(d, "verified impressions") {
		t.Errorf("delivery card %q; want decisions labelled as decisions, delivered in verified impressions", d)
	}

	// The campaign list: advertiser, state, figures, spend, pacing; sorted
	// by a click on a heading.
	b.open("#/campaigns", "main table")
	if head := b.text("main thead"); !strings.Contains(head, "Advertiser") || !strings.Contains(head, "Impressions (7 days)") || !strings.Contains(head, "CTR") ||
		!strings.Contains(head, "Spend") || !strings.Contains(head, "Pacing") || !strings.Contains(head, "State") {
		t.Errorf("campaign list headings %q; want advertiser, state, impressions, clicks, CTR, spend and pacing", head)
	}
	rows := func() []string {
		// (the cells but the bulk work's checkbox)
		return eval[[]string](b, `[...document.querySelectorAll('main tbody tr')].map(r => [...r.children].filter(c => !c.querySelector('input.pick')).map(c => c.textContent).join(' | '))`)
	}
	sortBy := func(heading string) {
		b.do("sort by "+heading, chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('main th button.sort')].find(x => x.textContent.startsWith(`+jsString(heading)+`)).click()`))
	}
	sortBy("Name")
	if r := rows(); len(r) != 2 || !strings.HasPrefix(r[0], "Quiet | Acme | house") || !strings.HasPrefix(r[1], "Spring | Acme | standard | active | 7 | 3 | 42.86% | €0.0315") {
		t.Errorf("campaigns by name = %q; want Quiet, then Spring with Acme, 7, 3, 42.86%%, €0.0315", r)
	}
	sortBy("Impressions")
	if r := rows(); len(r) != 2 || !strings.HasPrefix(r[0], "Spring") {
		t.Errorf("campaigns by impressions, largest first = %q", r)
	}
	sortBy("Impressions")
	if r := rows(); len(r) != 2 || !strings.HasPrefix(r[0], "Quiet") {
		t.Errorf("campaigns by impressions, a second click = %q; want the fewest first", r)
	}

	// A phone, light then dark.
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	pages := []struct{ name, hash, ready string }{
		{"overview", "#/", ".chart canvas"},
		{"campaigns", "#/campaigns", "main table"},
		{"campaign", "#/campaigns/1", "section[aria-label=Report] .chart canvas"},
		{"campaign-editor", "#/campaigns/1/edit", "#campaign-form"},
		{"ads", "#/ads", "main table"},
		{"ad", "#/ads/1", "section[aria-label=Report] .chart canvas"},
		{"ad-editor", "#/ads/1/edit", "#ad-form"},
		{"advertiser", "#/advertisers/1", "section[aria-label=Report] .chart canvas"},
		{"placement", "#/placements/side", "section[aria-label=Report] .chart canvas"},
		{"preview", "#/decisions", "#preview-form"},
		{"audit", "#/audit", "main table"},
	}
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			b.open(p.hash, p.ready)
			time.Sleep(150 * time.Millisecond) // charts draw on the next frame
			where := p.name + " at 390 px, " + scheme
			if w := eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
				t.Errorf("%s: %d px wider than the screen", where, w)
			}
			// Nothing pokes out of the screen but what scrolls in its own box.
			if out := eval[[]string](b, `[...document.querySelectorAll('main *')].filter(e => {
					const r = e.getBoundingClientRect();
					if (r.width === 0 || r.right <= innerWidth + 0.5) return false;
					for (let p = e.parentElement; p; p = p.parentElement) if (/(auto|scroll|hidden)/.test(getComputedStyle(p).overflowX)) return false;
					return true;
				}).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)`); len(out) > 0 {
				t.Errorf("%s: past the screen's edge: %v", where, out)
			}
			// Every chart's last date is labelled inside its plot.
			if bad := eval[[]string](b, `[...document.querySelectorAll('.chart')].flatMap(c => (c.plots || []).map(u => {
					const a = u.axes[0], splits = a._splits || [], last = splits[splits.length - 1];
					if (last !== u.data[0][u.data[0].length - 1]) return u.metric + ': the last bucket has no label';
					const label = a._values[a._values.length - 1], ctx = u.ctx;
					ctx.save(); ctx.font = a.font[0]; const w = ctx.measureText(label).width / devicePixelRatio; ctx.restore();
					const right = u.bbox.left / devicePixelRatio + u.valToPos(last, 'x') + w / 2;
					return right > u.width + 0.5 || u.width > c.clientWidth ? u.metric + ': last label ' + label + ' ends at ' + right + ' of ' + u.width + ' (box ' + c.clientWidth + ')' : '';
				})).filter(Boolean)`); len(bad) > 0 {
				t.Errorf("%s: %v", where, bad)
			}
			b.screenshot(fmt.Sprintf("console-390-%s-%s.png", scheme, p.name))
		}
		// Fields take the form's width.
		b.open("#/ads/1/edit", "#ad-form")
		if w := eval[[]float64](b, `[document.querySelector('[data-field=title] input'), document.querySelector('[data-field="creative.clickUrl"] input')].map(i => i.getBoundingClientRect().width)`); len(w) != 2 || w[0] < 300 || w[1] < 300 {
			t.Errorf("ad editor at 390 px, %s: title and click URL fields %v px wide; want the form's width (over 300)", scheme, w)
		}
		// The sections' bar says there are more to the right, until there
		// are none.
		b.open("#/", "h1")
		if more := eval[bool](b, `document.getElementById('nav').classList.contains('more-right')`); !more {
			t.Errorf("%s: the sections' bar at 390 px does not say it scrolls", scheme)
		}
		eval[bool](b, `(() => { const n = document.getElementById('nav'); n.scrollLeft = n.scrollWidth; return true; })()`)
		b.waitFor("the end of the sections", `(n => !n.classList.contains('more-right') && n.classList.contains('more-left'))(document.getElementById('nav'))`, 2*time.Second)
	}
	if bg := eval[string](b, `getComputedStyle(document.documentElement).backgroundColor`); bg == "rgb(246, 247, 249)" {
		t.Errorf("dark scheme: background %s; want the dark one", bg)
	}
	if errs, reqs := b.logged(); len(errs) > 0 || len(reqs) > 0 {
		t.Errorf("the pages logged errors %v, asked other origins %v", errs, reqs)
	}
	if dir := os.Getenv("MARQUEE_ARTIFACTS"); dir != "" {
		t.Logf("screenshots in %s", filepath.Join(dir, t.Name()))
	}
}
