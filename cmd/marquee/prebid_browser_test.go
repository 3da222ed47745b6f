//go:build !noconsole

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prebid/openrtb/v20/openrtb2"
)

// prebidBundle is the page's Prebid.js for the header-bidding tests: the
// npm package (testdata/prebid) with two bidders' adapters, the floors
// module and the debugging module, bundled by esbuild. .ci/run builds it
// and names it in MARQUEE_TEST_PREBID; without it the tests skip.
func prebidBundle(t *testing.T) {
	t.Helper()
	if p := os.Getenv("MARQUEE_TEST_PREBID"); p == "" {
		t.Skip("MARQUEE_TEST_PREBID is not set: no Prebid.js bundle (.ci/run builds one from cmd/marquee/testdata/prebid with npm)")
	} else if _, err := os.Stat(p); err != nil {
		t.Fatalf("MARQUEE_TEST_PREBID: %v", err)
	}
}

// prebidPage is a publisher's page running its own Prebid.js beside the
// tag (data-prebid="800": an 800 ms auction): an ad unit per slot, each
// with one bidder whose bid the debugging module answers (mocks: bidder,
// CPM in USD; no network). It records the tracking URLs the page fetches
// (window.pinged) and the floor Prebid's floors module gave each bidder
// (window.floors, by ad unit). Each bid's markup tries to take the page
// to /hijacked, as malvertising does.
func prebidPage(mocks map[string]struct {
	bidder string
	cpm    float64
}, body string) string {
	var units, rules []string
	for code, m := range mocks {
		params := `{"placementId":13144370}`
		if m.bidder == "rubicon" {
			params = `{"accountId":1001,"siteId":113932,"zoneId":535510}`
		}
		units = append(units, fmt.Sprintf(`{code:%q,mediaTypes:{banner:{sizes:[[300,250]]}},bids:[{bidder:%q,params:%s}]}`, code, m.bidder, params))
		rules = append(rules, fmt.Sprintf(`{when:{adUnitCode:%q,bidder:%q},then:function(bid){
			window.floors[%q] = bid.getFloor ? bid.getFloor({currency:'USD',mediaType:'banner',size:[300,250]}).floor : null;
			var src = (bid.ortb2 || {}).source || {}; window.schains.push(JSON.stringify(src.schain || (src.ext || {}).schain || null));
			return {cpm:%g,currency:'USD',width:300,height:250,ad:'<html><body style="margin:0"><div id="creative" style="width:300px;height:250px">%s bid of %g</div>' +
				'<script>top.postMessage("rendered: " + document.getElementById("creative").textContent, "*"); try { top.location.href = "/hijacked"; } catch (e) {}<\/script></body></html>'};}}`,
			code, m.bidder, code, m.cpm, m.bidder, m.cpm))
	}
	head := `<script>window.pinged = []; window.floors = {}; window.rendered = []; window.schains = [];
window.addEventListener('message', function (e) { if (typeof e.data === 'string' && e.data.indexOf('rendered: ') === 0) window.rendered.push(e.data.slice(10)); });
const pageFetch = window.fetch;
window.fetch = function (u) { if (String(u).indexOf('/t/') >= 0) window.pinged.push(String(u)); return pageFetch.apply(this, arguments); };
window.pbjs = window.pbjs || {que: []};
pbjs.que.push(function () {
  pbjs.setConfig({debugging: {enabled: true, intercept: [` + strings.Join(rules, ",") + `]}});
  pbjs.addAdUnits([` + strings.Join(units, ",") + `]);
});</script><script src="/prebid.js"></script>`
	return head + body
}

// TestPrebidInTheDecision: a page's Prebid.js auction (Prebid from npm,
// its bidders mocked by its debugging module) feeds the one decision. A
// bid above the remnant campaign's eCPM wins its slot and is drawn in
// Marquee's bid frame, of another origin than the page's (the page cannot
// reach it, its markup cannot navigate the page); a bid below it loses to the campaign; a guaranteed
// campaign beats a far higher bid; a bid under the placement's floor
// (after its bidder's adjustment) never wins, and Prebid's floors module
// was offered the floor. The winner's impression, view and click are
// fired once, and the bidders' report counts each bid, the win and its
// one impression (re-fired by the page) once.
func TestPrebidInTheDecision(t *testing.T) {
	t.Parallel()
	prebidBundle(t)
	ads := newAdServer(t, "-bid-adjustments", "rubicon=0.5", "-seller-domain", "ads.example.net")
	ads.expect(ads.admin("POST", "/api/v1/sites", `{"name":"pub","revenueShare":0.7}`), 201, "")
	slot := func(name, floor, campaign, title string) {
		ads.expect(ads.admin("POST", "/api/v1/placements", `{"name":"`+name+`","site":"pub","sizes":["300x250"]`+floor+`}`), 201, "")
		if campaign == "" {
			return
		}
		id := ads.campaign(`{"advertiserId":"1","name":"` + name + `",` + ads.flight + `,` + campaign + `}`)
		ads.expect(ads.admin("POST", "/api/v1/ad", `{"title":"`+title+`",`+ads.flight+`,"campaignId":"`+id+`","placements":["`+name+`"],"creative":{"type":"native","title":"`+title+`"}}`), 201, "")
	}
	remnant := `"priority":"remnant","price":{"model":"cpm","amount":2}`
	slot("above", "", remnant, "Campaign above")
	slot("below", "", remnant, "Campaign below")
	slot("sold", "", `"priority":"standard","goal":{"metric":"impressions","total":1000000}`, "Campaign sold")
	slot("floored", `,"floor":3`, "", "")

	pub := newPublisher(t)
	body := ""
	for _, s := range []string{"above", "below", "sold", "floored"} {
		body += `<div id="` + s + `" data-marquee-placement="` + s + `" data-marquee-size="300x250"></div>`
	}
	// The page's CSP lets scripts come from the page and the ad server
	// only (Prebid's attempt to load a module from a CDN is refused).
	url := pub.page("/prebid", "script-src 'self' 'unsafe-inline' "+ads.url, pubHTML(ads.url+"/t.js", `data-prebid="800"`, prebidPage(map[string]struct {
		bidder string
		cpm    float64
	}{
		"above":   {"appnexus", 5},   // beats the remnant campaign's $2
		"below":   {"appnexus", 1.5}, // under it
		"sold":    {"appnexus", 50},  // a guaranteed campaign comes first
		"floored": {"rubicon", 4},    // over the $3 floor for Prebid; 4 × 0.5 = $2 for Marquee
	}, body)))
	b := newTab(t, pub.URL, 1200, 1600)
	b.do("open the page", chromedp.Navigate(url))
	b.waitFor("every slot decided", `['above','below','sold','floored'].every(id => ['filled','empty'].includes(document.getElementById(id).dataset.marqueeState))`, 15*time.Second)

	if n := eval[int](b, `window.sent.length`); n != 1 {
		t.Fatalf("%d decision requests; want 1 for the four slots", n)
	}
	// Every bid request of the page's auction carried the network's node
	// of the supply chain: its domain, the site's seller id, hp 1.
	schains := eval[[]string](b, `window.schains`)
	if len(schains) == 0 {
		t.Error("no bid requested")
	}
	for _, s := range schains {
		var sc openrtb2.SupplyChain
		json.Unmarshal([]byte(s), &sc)
		if sc.Ver != "1.0" || sc.Complete != 1 || len(sc.Nodes) != 1 || sc.Nodes[0].ASI != "ads.example.net" || sc.Nodes[0].SID != "1" || sc.Nodes[0].HP == nil || *sc.Nodes[0].HP != 1 {
			t.Errorf("a bid request's schain = %s; want the network's node for seller 1", s)
		}
	}
	var sent struct {
		Placements []struct {
			Div  string
			Bids []struct {
				Bidder, Currency, AdID, Size string
				CPM                          float64
			}
		}
	}
	if err := json.Unmarshal([]byte(eval[string](b, `window.sent[0].text()`)), &sent); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"above": "appnexus 5 USD 300x250", "below": "appnexus 1.5 USD 300x250", "sold": "appnexus 50 USD 300x250", "floored": "rubicon 4 USD 300x250"}
	for _, p := range sent.Placements {
		if len(p.Bids) != 1 || fmt.Sprintf("%s %g %s %s", p.Bids[0].Bidder, p.Bids[0].CPM, p.Bids[0].Currency, p.Bids[0].Size) != want[p.Div] || p.Bids[0].AdID == "" {
			t.Errorf("the decision request's bids for %s = %+v; want one: %s, with Prebid's ad id", p.Div, p.Bids, want[p.Div])
		}
	}
	if f := eval[float64](b, `window.floors.floored || 0`); f != 3 {
		t.Errorf("the floor Prebid's floors module gave the floored slot's bidder = %v; want 3 (the placement's)", f)
	}

	// The bid drawn in the slot, in a frame of another origin than the
	// page's (the page cannot reach its document); the others lost.
	b.waitFor("the winning bid drawn", `window.rendered.includes('appnexus bid of 5')`, 10*time.Second)
	if reach := eval[bool](b, `(() => { const f = document.querySelector('#above iframe'); try { return f.contentDocument !== null || f.contentWindow.document !== undefined; } catch (e) { return false; } })()`); reach {
		t.Error("the page reaches the bid's frame's document; want a frame of another origin")
	}
	if won := eval[string](b, `pbjs.getAllWinningBids().map(b => b.adUnitCode + ':' + b.status).join(',')`); won != "above:rendered" {
		t.Errorf("Prebid's winning bids = %q; want the above slot's, rendered", won)
	}
	for id, want := range map[string]string{"below": "Campaign below", "sold": "Campaign sold"} {
		if got := eval[string](b, `document.getElementById('`+id+`').textContent`); !strings.Contains(got, want) {
			t.Errorf("the %s slot shows %q; want the campaign (%s)", id, got, want)
		}
	}
	if state := eval[string](b, `document.getElementById('floored').dataset.marqueeState`); state != "empty" {
		t.Errorf("the floored slot is %q; want empty (its only bid under the floor)", state)
	}

	// The bid's impression and view (in view a second), then a click.
	b.waitFor("the bid's impression and view fired", `window.pinged.some(u => u.includes('/t/i/')) && window.pinged.some(u => u.includes('/t/v/'))`, 10*time.Second)
	pub.mu.Lock()
	hijacked := pub.hits["/hijacked"]
	pub.mu.Unlock()
	if u := eval[string](b, `location.pathname`); u != "/prebid" || hijacked > 0 {
		t.Errorf("after the bid rendered the page is at %s (/hijacked asked %d times); want it kept at /prebid", u, hijacked)
	}
	x := eval[float64](b, `(() => { const r = document.querySelector('#above iframe').getBoundingClientRect(); return r.left + r.width / 2; })()`)
	y := eval[float64](b, `(() => { const r = document.querySelector('#above iframe').getBoundingClientRect(); return r.top + r.height / 2; })()`)
	b.do("click the bid", chromedp.MouseClickXY(x, y))
	b.waitFor("the bid's click fired", `window.pinged.some(u => u.includes('/t/c/'))`, 10*time.Second)
	// The page fires the impression twice more: counted once.
	eval[bool](b, `Promise.all(window.pinged.filter(u => u.includes('/t/i/')).slice(0, 1).flatMap(u => [fetch(u, {mode: 'no-cors'}), fetch(u, {mode: 'no-cors'})])).then(() => true)`)
	if n := eval[int](b, `window.pinged.filter(u => u.includes('/t/c/')).length`); n != 1 {
		t.Errorf("the click URL fired %d times; want 1", n)
	}

	type row struct {
		Placement, Bidder       string
		Bids, Wins, Impressions int64
		Revenue, WinRate, ECPM  float64
	}
	eventually(t, 10*time.Second, func() string {
		r := ads.admin("GET", "/api/v1/bidders/stats", "")
		var got struct{ Rows []row }
		if err := json.Unmarshal([]byte(r.body), &got); r.status != 200 || err != nil {
			return fmt.Sprintf("GET /api/v1/bidders/stats = %d %s", r.status, r.body)
		}
		want := []row{
			{"above", "appnexus", 1, 1, 1, 0.005, 1, 5},
			{"below", "appnexus", 1, 0, 0, 0, 0, 0},
			{"floored", "rubicon", 1, 0, 0, 0, 0, 0},
			{"sold", "appnexus", 1, 0, 0, 0, 0, 0},
		}
		if fmt.Sprint(got.Rows) != fmt.Sprint(want) {
			return fmt.Sprintf("the bidders' report = %+v; want %+v", got.Rows, want)
		}
		return ""
	})
	if errs, _ := b.logged(); len(errs) > 0 {
		t.Logf("the page's console errors: %q", errs)
	}

	// A page whose wrapper sends its own supply chain keeps it: the
	// network's node is appended to it, once.
	wrapped := pub.page("/prebid-wrapped", "script-src 'self' 'unsafe-inline' "+ads.url, pubHTML(ads.url+"/t.js", `data-prebid="800"`,
		`<script>window.pbjs = window.pbjs || {que: []}; pbjs.que.push(function () { pbjs.setConfig({ortb2: {source: {schain: {ver: '1.0', complete: 0, nodes: [{asi: 'wrapper.example', sid: 'w-1', hp: 1}]}}}}); });</script>`+
			prebidPage(map[string]struct {
				bidder string
				cpm    float64
			}{"above": {"appnexus", 5}}, `<div id="above" data-marquee-placement="above" data-marquee-size="300x250"></div>`)))
	b.do("open a page with its own supply chain", chromedp.Navigate(wrapped))
	b.waitFor("its slot decided", `['filled','empty'].includes(document.getElementById('above').dataset.marqueeState)`, 15*time.Second)
	wrappedChains := eval[[]string](b, `window.schains`)
	if len(wrappedChains) == 0 {
		t.Error("the wrapped page requested no bid")
	}
	for _, s := range wrappedChains {
		var sc openrtb2.SupplyChain
		json.Unmarshal([]byte(s), &sc)
		if sc.Complete != 0 || len(sc.Nodes) != 2 || sc.Nodes[0].ASI != "wrapper.example" || sc.Nodes[1].ASI != "ads.example.net" || sc.Nodes[1].SID != "1" {
			t.Errorf("a wrapped page's bid request's schain = %s; want the wrapper's node, then the network's, incomplete as the wrapper said", s)
		}
	}
}

// TestStockPrebidCallsMarqueeAsPrebidServer: stock Prebid.js 11 (its
// prebidServerBidAdapter, from npm) in Chromium, its s2sConfig pointed at
// Marquee, asks bidder "marquee" for a placement; Marquee's answer is the
// highest bid, Prebid renders it, and its impression — fired by the
// rendered markup — counts for the campaign.
func TestStockPrebidCallsMarqueeAsPrebidServer(t *testing.T) {
	t.Parallel()
	prebidBundle(t)
	ads := newAdServer(t)
	ads.expect(ads.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	id := ads.campaign(`{"advertiserId":"1","name":"cpm",` + ads.flight + `,"price":{"model":"cpm","amount":4.25}}`)
	ads.expect(ads.admin("POST", "/api/v1/ad", `{"title":"a",`+ads.flight+`,"campaignId":"`+id+`","placements":["side"],"creative":{"type":"html","html":"<p id=\"hello\">Marquee's ad</p>","width":300,"height":250}}`), 201, "")

	pub := newPublisher(t)
	page := `<!doctype html><html><head><meta charset="utf-8"><title>Publisher</title><script>
window.pbjs = window.pbjs || {que: []};
pbjs.que.push(function () {
  pbjs.setConfig({s2sConfig: [{accountId: '1', bidders: ['marquee'], adapter: 'prebidServer', enabled: true, endpoint: '` + ads.url + `/openrtb2/auction', timeout: 2000}]});
  pbjs.addAdUnits([{code: 'side', mediaTypes: {banner: {sizes: [[300, 250]]}}, bids: [{bidder: 'marquee', params: {placement: 'side'}}]}]);
  pbjs.requestBids({timeout: 3000, bidsBackHandler: function () {
    var w = pbjs.getHighestCpmBids('side')[0];
    window.winner = w ? w.bidderCode + ' ' + w.cpm + ' ' + w.width + 'x' + w.height : 'none';
    if (w) {
      var f = document.createElement('iframe');
      f.width = 300; f.height = 250; f.style.border = '0';
      document.getElementById('side').appendChild(f);
      pbjs.renderAd(f.contentWindow.document, w.adId);
    }
  }});
});
</script><script src="/prebid.js"></script></head><body><div id="side"></div></body></html>`
	url := pub.page("/s2s", "", page)
	b := newTab(t, pub.URL, 1200, 900)
	b.do("open the page", chromedp.Navigate(url))
	b.waitFor("Prebid's auction done", `window.winner !== undefined`, 15*time.Second)
	if w := eval[string](b, `window.winner`); w != "marquee 4.25 300x250" {
		t.Fatalf("Prebid's winning bid = %q; want marquee's at 4.25, 300x250", w)
	}
	// Prebid's renderer draws the markup in a frame of its own inside the
	// slot's: Marquee's frame is somewhere below it.
	b.waitFor("the ad drawn", `(function find(d) { if (!d) return false; if (d.querySelector('iframe[src*="/f/"]')) return true;
		return [...d.querySelectorAll('iframe')].some(f => { try { return find(f.contentDocument); } catch (e) { return false; } }); })(document.querySelector('#side iframe').contentDocument)`, 10*time.Second)
	eventually(t, 10*time.Second, func() string {
		if r := ads.admin("GET", "/api/v1/campaigns/"+id+"/stats", ""); !strings.Contains(r.body, `"impressions":1`) {
			return "the rendered bid's impression not counted: " + r.body
		}
		return ""
	})
}
