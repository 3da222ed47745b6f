//go:build !noconsole

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// videoJSPage is a web player as publishers build one: video.js (8.24.1,
// npm) plays the ad that Dailymotion's vast-client (6.4.5) reads from a
// VAST tag, and vast-client's VASTTracker reports it — the impression when
// it plays, start and the quartiles as it goes, the skip button once the
// ad's skip offset has passed (its skip-countdown), the skip when a person
// presses it. The libraries are the publisher's own copies
// (MARQUEE_TEST_PLAYERS' node_modules, served by the test's publisher).
const videoJSPage = `<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/node_modules/video.js/dist/video-js.min.css">
<script src="/node_modules/video.js/dist/video.min.js"></script>
</head><body>
<video-js id="v" width="640" height="360" muted playsinline preload="auto"></video-js>
<button id="skip" hidden>Skip ad</button>
<script type="module">
import { VASTClient, VASTTracker } from '/node_modules/@dailymotion/vast-client/dist/vast-client.min.js';
window.ad = { events: [], state: 'loading' };
window.playAd = async (tag) => {
  const client = new VASTClient();
  const res = await client.get(tag);
  const ad = res.ads[0];
  if (!ad) { window.ad.state = 'empty'; return; }
  const creative = ad.creatives.find(c => c.type === 'linear');
  const tracker = new VASTTracker(client, ad, creative);
  window.ad.skipDelay = creative.skipDelay;
  for (const e of ['start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'skip']) tracker.on(e, () => window.ad.events.push(e));
  const skip = document.getElementById('skip');
  tracker.on('skip-countdown', left => { if (left <= 0) skip.hidden = false; });
  const player = videojs('v', { muted: true, controls: true });
  player.one('playing', () => { tracker.trackImpression(); window.ad.state = 'playing'; });
  player.on('timeupdate', () => tracker.setProgress(player.currentTime()));
  player.on('ended', () => { tracker.complete(); window.ad.state = 'complete'; });
  skip.onclick = () => { tracker.skip(); player.pause(); window.ad.state = 'skipped'; };
  window.ad.player = player;
  player.src({ src: creative.mediaFiles[0].fileURL, type: creative.mediaFiles[0].mimeType });
  await player.play();
};
window.ready = true;
</script></body></html>`

// TestVideoJSSkipsAnAd: video.js plays a skippable ad (4 s, skippable
// after 1 s) read and tracked by vast-client in Chromium; the skip button
// shows only once the offset has passed; a person watches past the
// midpoint and presses it — twice, as people do. The ad's report counts
// one impression, one start, the first quartile and the midpoint once
// each and nothing after (no third quartile, no complete); the event
// files hold one skip.
func TestVideoJSSkipsAnAd(t *testing.T) {
	if os.Getenv("MARQUEE_TEST_PLAYERS") == "" {
		t.Skip("MARQUEE_TEST_PLAYERS is not set (cd cmd/marquee/testdata/players && npm ci; then its path): video.js is not tested")
	}
	t.Parallel()
	ads := newAdServer(t)
	pub := newPublisher(t)
	b := newTab(t, pub.URL, 1000, 800)
	pub.recordVideo(b, 4300)
	ads.placement("preroll", `{"type":"video","width":320,"height":180,"mediaUrl":"`+pub.URL+`/video.webm","mimeType":"video/webm","durationMs":4000,"skipOffsetMs":1000}`)
	b.do("open the player", chromedp.Navigate(pub.page("/videojs", "", videoJSPage)))
	b.waitFor("the page's modules", `window.ready === true && typeof videojs === 'function'`, 10*time.Second)
	eval[bool](b, `(window.playAd(`+jsString(ads.url+"/vast?placement=preroll")+`).catch(e => window.ad.state = 'failed: ' + e), true)`)
	b.waitFor("the ad playing", `window.ad.state !== 'loading' && (window.ad.state !== 'playing' || window.ad.player.currentTime() > 0.2)`, 15*time.Second)
	if s := eval[string](b, `window.ad.state`); s != "playing" {
		t.Fatalf("the player's state = %q; want playing", s)
	}
	if d := eval[float64](b, `window.ad.skipDelay`); d != 1 {
		t.Errorf("vast-client reads a skip delay of %v s; want 1 (skipOffsetMs 1000)", d)
	}
	if at := eval[float64](b, `document.getElementById('skip').hidden ? -1 : window.ad.player.currentTime()`); at >= 0 && at < 0.9 {
		t.Fatalf("the skip button shows at %.2f s; want it hidden before the 1 s offset", at)
	}
	b.waitFor("the skip button", `!document.getElementById('skip').hidden`, 10*time.Second)
	if at := eval[float64](b, `window.ad.player.currentTime()`); at < 0.9 {
		t.Fatalf("the skip button shows at %.2f s; want it from the 1 s offset", at)
	}
	b.waitFor("past the midpoint", `window.ad.events.includes('midpoint')`, 10*time.Second)
	b.do("skip the ad, twice", chromedp.Click(chromedp.ID("skip")), chromedp.Click(chromedp.ID("skip")))
	if s := eval[string](b, `window.ad.state`); s != "skipped" {
		t.Fatalf("after the skip button the player is %q; want skipped", s)
	}
	time.Sleep(300 * time.Millisecond) // the tracker's last pixels
	var events []string
	if err := json.Unmarshal([]byte(eval[string](b, `JSON.stringify(window.ad.events)`)), &events); err != nil {
		t.Fatal(err)
	}
	if n := slices.Index(events, "skip"); n < 0 || len(events) != n+2 || events[n+1] != "skip" {
		t.Fatalf("the tracker fired %v; want a skip for each press of the button (the server counts one)", events)
	}
	want := map[string]int64{"impressions": 1, "starts": 1, "firstQuartiles": 1, "midpoints": 1, "thirdQuartiles": 0, "completes": 0}
	eventually(t, 10*time.Second, func() string {
		r := ads.admin("GET", "/api/v1/ad/"+ads.ads["preroll"]+"/stats", "")
		var got struct{ Totals map[string]any }
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 {
			return fmt.Sprintf("the ad's report = %d %s", r.status, r.body)
		}
		for k, v := range want {
			if n, _ := got.Totals[k].(float64); int64(n) != v {
				return fmt.Sprintf("the skipped ad's report %v; want %v (the tracker fired %v)", got.Totals, want, events)
			}
		}
		return ""
	})
	ads.stop()
	types := map[string]int{}
	for _, e := range eventLines(t, ads.data) {
		types[fmt.Sprint(e["type"])]++
	}
	for k, n := range map[string]int{"impression": 1, "start": 1, "firstQuartile": 1, "midpoint": 1, "skip": 1, "thirdQuartile": 0, "complete": 0} {
		if types[k] != n {
			t.Errorf("event files hold %d %s events; want %d (all: %v; the tracker fired %v)", types[k], k, n, types, events)
		}
	}
}
