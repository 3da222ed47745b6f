//go:build !noconsole

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleVideoCreative: the ad editor keeps a video's skip offset,
// UniversalAdId and Open Measurement verifications through an edit of
// something else, names a skip offset past the video's end and
// verifications that are not a list beside their fields, and saves
// changed ones; a wrapper's edit keeps its VAST tag and names no media,
// an audio ad's its type and audio media type.
func TestConsoleVideoCreative(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"video",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Spring",`+flight+`,"campaignId":"1","creative":{"type":"video","mediaUrl":"https://cdn.test/v.mp4",`+
		`"mimeType":"video/mp4","durationMs":15000,"clickUrl":"https://acme.test/","skipOffsetMs":5000,"universalAdId":{"registry":"ad-id.org","value":"ACME0001000H"},`+
		`"verifications":[{"vendor":"iabtechlab.com-omid","url":"https://verify.test/omid.js","parameters":"p=1"}]}}`), 201, "")

	b := newTab(t, in.url, 1280, 900)
	b.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	b.signIn("owner@example.com", "owner-password-1")
	b.open("#/ads/1/edit", "#ad-form")
	b.labelled("the video ad's editor")
	b.do("rename it", chromedp.SetValue(chromedp.CSS(`[data-field="title"] input`), "Spring 2"), click(`#ad-form button[type=submit]`))
	b.waitHash(`^#/ads/1$`)
	if r := in.get("/api/v1/ad/1"); !strings.Contains(r.body, `"title":"Spring 2"`) || !strings.Contains(r.body, `"skipOffsetMs":5000`) ||
		!strings.Contains(r.body, `"universalAdId":{"registry":"ad-id.org","value":"ACME0001000H"}`) ||
		!strings.Contains(r.body, `"verifications":[{"vendor":"iabtechlab.com-omid","url":"https://verify.test/omid.js","parameters":"p=1"}]`) {
		t.Fatalf("after an edit of the title the API has %s; want the skip offset, UniversalAdId and verifications kept", r.body)
	}
	b.open("#/ads/1/edit", "#ad-form")
	b.do("skip past the end", chromedp.SetValue(chromedp.CSS(`[data-field="creative.skipOffsetMs"] input`), "20000"), click(`#ad-form button[type=submit]`))
	b.waitFor("the problem beside the field", `!!document.querySelector('[data-field="creative.skipOffsetMs"] .problem')`, 10*time.Second)
	b.do("verifications that are not JSON", chromedp.SetValue(chromedp.CSS(`#creative-verifications`), "omid.js"), click(`#ad-form button[type=submit]`))
	b.waitFor("the verifications' problem beside them", `!!document.querySelector('[data-field="creative.verifications"] .problem')`, 10*time.Second)
	b.do("no verifications", chromedp.Evaluate[chromedp.Void](`document.querySelector('#creative-verifications').value = ''`))
	b.do("skip at 3 s", chromedp.SetValue(chromedp.CSS(`[data-field="creative.skipOffsetMs"] input`), "3000"),
		chromedp.SetValue(chromedp.CSS(`#creative-uid-value`), "ACME0002000H"), click(`#ad-form button[type=submit]`))
	b.waitHash(`^#/ads/1$`)
	if r := in.get("/api/v1/ad/1"); !strings.Contains(r.body, `"skipOffsetMs":3000`) || !strings.Contains(r.body, `"value":"ACME0002000H"`) || strings.Contains(r.body, "verifications") {
		t.Errorf("after the second edit the API has %s; want skippable at 3000 ms, ACME0002000H, no verifications", r.body)
	}
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Wrapped",`+flight+`,"campaignId":"1","creative":{"type":"video","vastTagUrl":"https://buyer.test/vast?cb=[CACHEBUSTING]",`+
		`"clickUrl":"https://acme.test/"}}`), 201, "")
	b.open("#/ads/2/edit", "#ad-form")
	b.do("rename the wrapper", chromedp.SetValue(chromedp.CSS(`[data-field="title"] input`), "Wrapped 2"), click(`#ad-form button[type=submit]`))
	b.waitHash(`^#/ads/2$`)
	if r := in.get("/api/v1/ad/2"); !strings.Contains(r.body, `"title":"Wrapped 2"`) || !strings.Contains(r.body, `"vastTagUrl":"https://buyer.test/vast?cb=[CACHEBUSTING]"`) ||
		strings.Contains(r.body, "mimeType") {
		t.Errorf("after an edit of the wrapper's title the API has %s; want its tag kept and no media", r.body)
	}
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Spot",`+flight+`,"campaignId":"1","creative":{"type":"audio","mediaUrl":"https://cdn.test/spot.mp3",`+
		`"mimeType":"audio/aac","durationMs":30000,"clickUrl":"https://acme.test/"}}`), 201, "")
	b.open("#/ads/3/edit", "#ad-form")
	b.do("rename the audio ad", chromedp.SetValue(chromedp.CSS(`[data-field="title"] input`), "Spot 2"), click(`#ad-form button[type=submit]`))
	b.waitHash(`^#/ads/3$`)
	if r := in.get("/api/v1/ad/3"); !strings.Contains(r.body, `"title":"Spot 2"`) || !strings.Contains(r.body, `"type":"audio"`) || !strings.Contains(r.body, `"mimeType":"audio/aac"`) {
		t.Errorf("after an edit of the audio ad's title the API has %s; want it audio/aac still", r.body)
	}
	// Placements: an audio player's and a content video's ad rules kept
	// through an edit of something else.
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"podcast","types":["audio"],"expectedDailyRequests":5000}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"episode","types":["video"],"maxDurationMs":30000,"adBreaks":[{"offset":"start","ads":1},{"offset":"50%","ads":2,"maxDurationMs":45000}]}`), 201, "")
	for _, name := range []string{"podcast", "episode"} {
		b.open("#/placements/"+name+"/edit", "#placement-form")
		b.do("edit "+name+"'s site", chromedp.SetValue(chromedp.CSS(`[data-field="site"] input`), "acme.test"), click(`#placement-form button[type=submit]`))
		b.waitHash(`^#/placements/` + name + `$`)
	}
	if r := in.get("/api/v1/placements/podcast"); !strings.Contains(r.body, `"types":["audio"]`) || !strings.Contains(r.body, `"site":"acme.test"`) ||
		!strings.Contains(r.body, `"expectedDailyRequests":5000`) {
		t.Errorf("the podcast placement after an edit = %s; want audio and its 5,000 requests a day still", r.body)
	}
	if r := in.get("/api/v1/placements/episode"); !strings.Contains(r.body, `"adBreaks":[{"offset":"start","ads":1},{"offset":"50%","ads":2,"maxDurationMs":45000}]`) ||
		!strings.Contains(r.body, `"site":"acme.test"`) || !strings.Contains(r.body, `"maxDurationMs":30000`) {
		t.Errorf("the episode placement after an edit = %s; want its ad breaks and its longest ad kept", r.body)
	}
	// A player's errors, by VAST code, on the ad's page: 402 (a media
	// file's timeout), named.
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"preroll","types":["video"]}`), 201, "")
	for i := 0; ; i++ { // the campaign's video or its wrapper, drawn alike
		v := decodeVAST(t, in.get("/vast?placement=preroll"))
		if len(v.Ads) == 1 && v.Ads[0].ID == "1" {
			fire(t, strings.Replace(v.Ads[0].InLine.Error[0], "[ERRORCODE]", "402", 1))
			break
		}
		if i == 100 {
			t.Fatal("100 VAST answers without ad 1")
		}
	}
	eventually(t, 10*time.Second, func() string {
		if s := in.stats("/api/v1/ad/1/stats"); s.Totals.Errors != 1 {
			return "the ad's report counts no error yet"
		}
		return ""
	})
	b.open("#/ads/1", "#player-errors")
	if got := b.text("#player-errors td"); got != "402 — media file timeout" {
		t.Errorf("the ad's page names its player error %q; want 402 — media file timeout", got)
	}
	if errs, _ := b.logged(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
