package main

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/tag"
)

// The VAST 4.x document as the IAB's specification (VAST 4.2, section 3)
// lays it out, written here from the specification and not from the types
// that write it (package vast): what a player reads.
type vastDoc struct {
	XMLName xml.Name `xml:"http://www.iab.com/VAST VAST"`
	Version string   `xml:"version,attr"`
	Ads     []struct {
		ID       string `xml:"id,attr"`
		Sequence string `xml:"sequence,attr"`
		InLine   *struct {
			AdSystem struct {
				Version string `xml:"version,attr"`
				Name    string `xml:",chardata"`
			}
			Error      []string
			Impression []struct {
				ID  string `xml:"id,attr"`
				URL string `xml:",chardata"`
			}
			AdServingID     string `xml:"AdServingId"`
			AdTitle         string
			AdVerifications []struct {
				Vendor string `xml:"vendor,attr"`
				JS     struct {
					APIFramework string `xml:"apiFramework,attr"`
					URL          string `xml:",chardata"`
				} `xml:"JavaScriptResource"`
				Parameters string `xml:"VerificationParameters"`
			} `xml:"AdVerifications>Verification"`
			Viewable struct {
				Viewable     []string `xml:"Viewable"`
				NotViewable  []string `xml:"NotViewable"`
				Undetermined []string `xml:"ViewUndetermined"`
			} `xml:"ViewableImpression"`
			Creatives []struct {
				ID            string `xml:"id,attr"`
				AdID          string `xml:"adId,attr"`
				UniversalAdID struct {
					IDRegistry string `xml:"idRegistry,attr"`
					Value      string `xml:",chardata"`
				} `xml:"UniversalAdId"`
				Linear *struct {
					SkipOffset string `xml:"skipoffset,attr"`
					Duration   string
					Tracking   []struct {
						Event string `xml:"event,attr"`
						URL   string `xml:",chardata"`
					} `xml:"TrackingEvents>Tracking"`
					MediaFiles []struct {
						Delivery string `xml:"delivery,attr"`
						Type     string `xml:"type,attr"`
						Width    int    `xml:"width,attr"`
						Height   int    `xml:"height,attr"`
						URL      string `xml:",chardata"`
					} `xml:"MediaFiles>MediaFile"`
					ClickThrough string `xml:"VideoClicks>ClickThrough"`
				}
			} `xml:"Creatives>Creative"`
		}
		Wrapper *struct{}
	} `xml:"Ad"`
}

func decodeVAST(t *testing.T, r response) vastDoc {
	t.Helper()
	var doc vastDoc
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") {
		t.Fatalf("GET /vast = %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatalf("GET /vast: %v in\n%s", err, r.body)
	}
	if doc.Version != "4.2" {
		t.Fatalf("VAST version %q; want 4.2", doc.Version)
	}
	if lint := os.Getenv("MARQUEE_TEST_XMLLINT"); lint != "" { // every answer a test reads, against the VAST 4.2 schema (vast.TestSchema)
		f := filepath.Join(t.TempDir(), "vast.xml")
		if err := os.WriteFile(f, []byte(r.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(lint, "--noout", "--nonet", "--schema", "../../vast/testdata/vast4.2.xsd", f).CombinedOutput(); err != nil {
			t.Fatalf("GET /vast answers a document the VAST 4.2 schema refuses: %v: %s\n%s", err, out, r.body)
		}
	}
	return doc
}

// TestVASTOverHTTP: a video ad's VAST document, read as a player reads it;
// every tracking event counted once, whatever VAST macros the player
// leaves in its URLs; a tampered URL not counted; an empty VAST when
// nothing fills the placement; the reports' quartiles and completion rate.
func TestVASTOverHTTP(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"Spring video",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"preroll","types":["video"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"midroll","types":["video"]}`), 201, "")
	creative := `"creative":{"type":"video","width":1280,"height":720,"mediaUrl":"https://cdn.acme.test/spring.mp4?a=1&b=2","mimeType":"video/mp4","durationMs":15500,"clickUrl":"https://acme.test/?ad={ad}",` +
		`"skipOffsetMs":5000,"universalAdId":{"registry":"ad-id.org","value":"ACME0001000H"},` +
		`"verifications":[{"vendor":"iabtechlab.com-omid","url":"https://verify.test/omid.js","parameters":"{\"campaign\":7}"}]}`
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Spring <sale> & more",`+flight+`,"campaignId":"1","placements":["preroll"],`+creative+`}`), 201, `{"id":"1"}`)

	r := in.get("/vast?placement=preroll&country=TW")
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("GET /vast: Access-Control-Allow-Origin %q; want * (players fetch it from any page)", r.header.Get("Access-Control-Allow-Origin"))
	}
	doc := decodeVAST(t, r)
	if len(doc.Ads) != 1 || doc.Ads[0].InLine == nil || doc.Ads[0].ID != "1" || doc.Ads[0].Sequence != "" {
		t.Fatalf("VAST = %s; want one InLine ad 1, not in a pod", r.body)
	}
	il := doc.Ads[0].InLine
	if il.AdSystem.Name != "Marquee" || il.AdTitle != "Spring <sale> & more" || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(il.AdServingID) {
		t.Errorf("InLine = %+v; want AdSystem Marquee, the ad's title, a 128-bit AdServingId", il)
	}
	if len(il.Impression) != 1 || !strings.HasPrefix(il.Impression[0].URL, in.url+"/t/i/") || len(il.Viewable.Viewable) != 1 ||
		!strings.HasPrefix(il.Viewable.Viewable[0], in.url+"/t/w/") || len(il.Viewable.NotViewable) != 1 || !strings.HasPrefix(il.Viewable.NotViewable[0], in.url+"/t/n/") ||
		len(il.Viewable.Undetermined) != 1 || !strings.HasPrefix(il.Viewable.Undetermined[0], in.url+"/t/d/") ||
		len(il.Error) != 1 || !strings.HasSuffix(il.Error[0], "?code=[ERRORCODE]") {
		t.Fatalf("InLine's URLs: impression %+v, viewable %+v, error %q", il.Impression, il.Viewable, il.Error)
	}
	if len(il.AdVerifications) != 1 || il.AdVerifications[0].Vendor != "iabtechlab.com-omid" || il.AdVerifications[0].JS.APIFramework != "omid" ||
		il.AdVerifications[0].JS.URL != "https://verify.test/omid.js" || il.AdVerifications[0].Parameters != `{"campaign":7}` {
		t.Errorf("AdVerifications = %+v; want the creative's Open Measurement script and parameters", il.AdVerifications)
	}
	if len(il.Creatives) != 1 || il.Creatives[0].Linear == nil || il.Creatives[0].UniversalAdID.IDRegistry != "ad-id.org" || il.Creatives[0].UniversalAdID.Value != "ACME0001000H" {
		t.Fatalf("Creatives = %+v; want one Linear with the creative's UniversalAdId", il.Creatives)
	}
	lin := il.Creatives[0].Linear
	if lin.Duration != "00:00:15.500" || lin.SkipOffset != "00:00:05.000" || len(lin.MediaFiles) != 1 || !strings.HasPrefix(lin.ClickThrough, in.url+"/t/c/") {
		t.Fatalf("Linear = %+v; want 00:00:15.500, skippable at 00:00:05.000, one media file, a signed ClickThrough", lin)
	}
	if mf := lin.MediaFiles[0]; mf.URL != "https://cdn.acme.test/spring.mp4?a=1&b=2" || mf.Type != "video/mp4" || mf.Delivery != "progressive" || mf.Width != 1280 || mf.Height != 720 {
		t.Errorf("MediaFile = %+v", mf)
	}
	events := map[string]string{}
	for _, e := range lin.Tracking {
		events[e.Event] = strings.TrimSpace(e.URL)
	}
	want := []string{"start", "firstQuartile", "midpoint", "thirdQuartile", "complete", "pause", "mute", "skip"}
	for _, e := range want {
		if !strings.HasPrefix(events[e], in.url+"/t/") {
			t.Fatalf("TrackingEvents = %v; want a signed URL for %s", events, e)
		}
	}

	// A player fills the macros it knows and may leave the others as they are.
	for _, u := range []string{il.Impression[0].URL + "?ts=[TIMESTAMP]", il.Viewable.Viewable[0], strings.Replace(il.Error[0], "[ERRORCODE]", "405", 1)} {
		for range 2 {
			if s := fire(t, u).StatusCode; s != 204 {
				t.Fatalf("GET %s = %d; want 204", u, s)
			}
		}
	}
	for _, e := range want {
		for range 2 { // fired twice, counted once
			if s := fire(t, events[e]+"?cb=[CACHEBUSTING]&t=2026-11-26T10%3A00%3A00Z").StatusCode; s != 204 {
				t.Fatalf("%s URL = %d; want 204", e, s)
			}
		}
	}
	tampered := events["complete"][:len(events["complete"])-4] + "AAAA"
	if s := fire(t, tampered).StatusCode; s != 400 {
		t.Errorf("a tampered complete URL = %d; want 400", s)
	}
	if s := fire(t, lin.ClickThrough).StatusCode; s != 302 {
		t.Errorf("ClickThrough = %d; want 302", s)
	}

	// Nothing fills midroll: an empty VAST.
	if empty := decodeVAST(t, in.get("/vast?placement=midroll")); len(empty.Ads) != 0 {
		t.Errorf("VAST of an empty placement has %d ads; want none", len(empty.Ads))
	}
	for _, c := range []struct{ path, want string }{
		{"/vast", `"placement":"is required"`},
		{"/vast?placement=nowhere", `"placement":"no placement \"nowhere\""`},
		{"/vast?placement=preroll&age=old", `"age":"must be an integer"`},
	} {
		if r := in.get(c.path); r.status != 400 || !strings.Contains(r.body, c.want) {
			t.Errorf("GET %s = %d %s; want 400 …%s…", c.path, r.status, r.body, c.want)
		}
	}

	eventually(t, 5*time.Second, func() string {
		s := in.stats("/api/v1/campaigns/1/stats")
		if x := s.Totals; x.Impressions != 1 || x.Views != 0 || x.Clicks != 1 || x.Starts != 1 || x.FirstQuartiles != 1 || x.Midpoints != 1 ||
			x.ThirdQuartiles != 1 || x.Completes != 1 || x.CompletionRate != 1 || x.Measured != 0 || x.Viewability != 0 ||
			x.VideoMeasured != 1 || x.VideoViews != 1 || x.VideoViewability != 1 || x.Errors != 1 {
			return fmt.Sprintf("campaign 1: %+v; want each event once, completion rate 1, nothing measured by a tag, the player's viewable impression: video viewability 1, one error", x)
		}
		// The player's error, fired twice, counted once by its code.
		if b := in.stats("/api/v1/ad/1/stats?by=errorCode").Breakdown; len(b) != 1 || b[0].ErrorCode != "405" || b[0].Errors != 1 {
			return fmt.Sprintf("ad 1's errors by code = %+v; want 405 once", b)
		}
		return ""
	})
	in.stop()
	types := map[string]int{}
	var code any
	for _, e := range eventLines(t, data) {
		types[fmt.Sprint(e["type"])]++
		if e["type"] == "error" {
			code = e["errorCode"]
		}
	}
	for _, e := range append(want, "impression", "videoViewable", "click", "error") {
		if types[e] != 1 {
			t.Errorf("event files hold %d %s events; want 1 (all: %v)", types[e], e, types)
		}
	}
	if code != "405" {
		t.Errorf("the error event's code = %v; want the player's 405", code)
	}
}

// TestTagRoutes: the tag at /t.js (5 minutes' cache, gzipped for a client
// that takes it, 304 for the copy it has) and at its version's path (a
// year), its Prebid.js glue at /pb.js; another version and a frame of a
// token not ours refused.
func TestTagRoutes(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	etag := `"` + tag.Tag.Version + `"`
	r := in.get("/t.js", "Accept-Encoding", "gzip")
	if r.status != 200 || r.header.Get("Content-Encoding") != "gzip" || r.body != string(tag.Tag.Gzip) || r.header.Get("ETag") != etag ||
		r.header.Get("Cache-Control") != "public, max-age=300" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") {
		t.Errorf("GET /t.js (gzip) = %d %v, %d bytes; want the gzipped tag, its ETag, 5 minutes' cache", r.status, r.header, len(r.body))
	}
	if r := in.get("/t.js", "Accept-Encoding", "identity"); r.status != 200 || r.body != string(tag.Tag.Source) || r.header.Get("Content-Encoding") != "" {
		t.Errorf("GET /t.js (identity) = %d %v; want the script as it is", r.status, r.header)
	}
	if r := in.get("/t.js", "If-None-Match", etag); r.status != 304 || r.body != "" {
		t.Errorf("GET /t.js with its ETag = %d, %d bytes; want 304 and nothing", r.status, len(r.body))
	}
	if r := in.get("/tag/"+tag.Tag.Version+".js", "Accept-Encoding", "identity"); r.status != 200 || r.body != string(tag.Tag.Source) ||
		r.header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("GET the versioned tag = %d %v; want it cached a year", r.status, r.header)
	}
	pbETag := `"` + tag.Prebid.Version + `"`
	if r := in.get("/pb.js", "Accept-Encoding", "gzip"); r.status != 200 || r.body != string(tag.Prebid.Gzip) || r.header.Get("ETag") != pbETag ||
		r.header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("GET /pb.js (gzip) = %d %v, %d bytes; want the gzipped Prebid.js glue, its ETag, 5 minutes' cache", r.status, r.header, len(r.body))
	}
	if r := in.get("/pb.js", "If-None-Match", pbETag); r.status != 304 {
		t.Errorf("GET /pb.js with its ETag = %d; want 304", r.status)
	}
	if r := in.get("/tag/000000000000.js"); r.status != 404 || !strings.Contains(r.body, "/tag/"+tag.Tag.Version+".js") {
		t.Errorf("GET another version = %d %s; want 404 naming this one", r.status, r.body)
	}
	if r := in.get("/f/AAAA"); r.status != 400 {
		t.Errorf("GET /f/ of a token not ours = %d %s; want 400", r.status, r.body)
	}
}

// TestVASTWrapper: a video ad of a buyer's VAST tag is answered as a
// Wrapper, which a player follows to the buyer's inline ad (here a local
// server, which sees the player's macro filled); the player fires the
// wrapper's impression, quartiles and click tracking beside the buyer's,
// and Marquee counts them once each, as any ad's.
func TestVASTWrapper(t *testing.T) {
	t.Parallel()
	buyer, asked := buyerServer(t)
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Buyer"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"programmatic",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"preroll","types":["video"]}`), 201, "")
	for _, bad := range []string{`"vastTagUrl":"ftp://buyer.test/vast"`, `"vastTagUrl":"https://buyer.test/vast","mediaUrl":"https://x.test/v.mp4"`} {
		if r := in.admin("POST", "/api/v1/ad", `{"title":"w",`+flight+`,"campaignId":"1","creative":{"type":"video",`+bad+`}}`); r.status != 400 {
			t.Errorf("a wrapper with %s = %d %s; want 400", bad, r.status, r.body)
		}
	}
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Buyer's tag",`+flight+`,"campaignId":"1","placements":["preroll"],`+
		`"creative":{"type":"video","vastTagUrl":"`+buyer.URL+`/vast?cb=[CACHEBUSTING]","clickUrl":"https://buyer.test/"}}`), 201, "")

	r := in.get("/vast?placement=preroll")
	var doc struct {
		Ads []struct {
			InLine  *struct{}
			Wrapper *struct {
				Impression []string
				TagURI     string `xml:"VASTAdTagURI"`
				Tracking   []struct {
					Event string `xml:"event,attr"`
					URL   string `xml:",chardata"`
				} `xml:"Creatives>Creative>Linear>TrackingEvents>Tracking"`
				ClickTracking string `xml:"Creatives>Creative>Linear>VideoClicks>ClickTracking"`
			}
		} `xml:"Ad"`
	}
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil || len(doc.Ads) != 1 || doc.Ads[0].Wrapper == nil || doc.Ads[0].InLine != nil {
		t.Fatalf("GET /vast = %d %s (%v); want one Wrapper", r.status, r.body, err)
	}
	w := doc.Ads[0].Wrapper
	if w.TagURI != buyer.URL+"/vast?cb=[CACHEBUSTING]" || len(w.Impression) != 1 || !strings.HasPrefix(w.ClickTracking, in.url+"/t/c/") {
		t.Fatalf("Wrapper = %+v", w)
	}
	// The player: fills its macro, follows the tag, reads the buyer's ad.
	resp, err := http.Get(strings.Replace(w.TagURI, "[CACHEBUSTING]", "12345678", 1))
	if err != nil {
		t.Fatal(err)
	}
	var inline struct {
		Title string `xml:"Ad>InLine>AdTitle"`
		Media string `xml:"Ad>InLine>Creatives>Creative>Linear>MediaFiles>MediaFile"`
	}
	xml.NewDecoder(resp.Body).Decode(&inline)
	resp.Body.Close()
	if q := asked(); len(q) != 1 || q[0] != "cb=12345678" || inline.Title != "Buyer's ad" || inline.Media != "https://buyer.test/v.mp4" {
		t.Errorf("the buyer was asked %q and answered %+v; want cb=12345678 and its ad", q, inline)
	}
	// Then fires the wrapper's URLs with the buyer's (each twice: counted once).
	urls := []string{w.Impression[0], w.ClickTracking}
	for _, e := range w.Tracking {
		if e.Event == "start" || e.Event == "firstQuartile" || e.Event == "complete" {
			urls = append(urls, strings.TrimSpace(e.URL))
		}
	}
	for _, u := range urls {
		for range 2 {
			if s := fire(t, u).StatusCode; s != 204 && s != 302 {
				t.Fatalf("GET %s = %d", u, s)
			}
		}
	}
	eventually(t, 5*time.Second, func() string {
		if x := in.stats("/api/v1/campaigns/1/stats").Totals; x.Impressions != 1 || x.Clicks != 1 || x.Starts != 1 || x.FirstQuartiles != 1 || x.Completes != 1 {
			return fmt.Sprintf("campaign 1: %+v; want the wrapper's impression, click, start, first quartile and complete once each", x)
		}
		return ""
	})
}

// TestAudioOverVAST: an audio ad in a placement of an audio player is
// answered as VAST (its audio type, 0 by 0) and its impression and
// quartiles are counted once each, as a video's; a placement that names
// no types (a page's) never serves it.
func TestAudioOverVAST(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"podcast spots",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"podcast","types":["audio"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"page"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Spot",`+flight+`,"campaignId":"1",`+
		`"creative":{"type":"audio","mediaUrl":"https://cdn.acme.test/spot.mp3","mimeType":"audio/mpeg","durationMs":30000,"clickUrl":"https://acme.test/"}}`), 201, "")

	if r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"page"}]}`); strings.Contains(r.body, `"adId"`) {
		t.Errorf("a page's placement served %s; want no audio ad", r.body)
	}
	doc := decodeVAST(t, in.get("/vast?placement=podcast"))
	if len(doc.Ads) != 1 || doc.Ads[0].InLine == nil || len(doc.Ads[0].InLine.Creatives) != 1 || doc.Ads[0].InLine.Creatives[0].Linear == nil {
		t.Fatalf("VAST of the podcast = %+v; want one InLine ad", doc)
	}
	lin := doc.Ads[0].InLine.Creatives[0].Linear
	if len(lin.MediaFiles) != 1 || lin.MediaFiles[0].Type != "audio/mpeg" || lin.MediaFiles[0].Width != 0 || lin.MediaFiles[0].Height != 0 || lin.Duration != "00:00:30.000" {
		t.Fatalf("Linear = %+v; want one audio/mpeg file, 0 by 0, 30 s", lin)
	}
	urls := []string{doc.Ads[0].InLine.Impression[0].URL}
	for _, e := range lin.Tracking {
		switch e.Event {
		case "start", "firstQuartile", "midpoint", "thirdQuartile", "complete":
			urls = append(urls, strings.TrimSpace(e.URL))
		}
	}
	for _, u := range urls {
		for range 2 {
			if s := fire(t, u).StatusCode; s != 204 {
				t.Fatalf("GET %s = %d; want 204", u, s)
			}
		}
	}
	eventually(t, 5*time.Second, func() string {
		if x := in.stats("/api/v1/campaigns/1/stats").Totals; x.Impressions != 1 || x.Starts != 1 || x.FirstQuartiles != 1 || x.Midpoints != 1 ||
			x.ThirdQuartiles != 1 || x.Completes != 1 || x.CompletionRate != 1 {
			return fmt.Sprintf("campaign 1: %+v; want the impression and each quartile once, completion rate 1", x)
		}
		return ""
	})
}

// buyerServer is a buyer's ad server (what a wrapper's tag names): it
// answers every request with one inline ad, "Buyer's ad", and asked says
// the query strings it was asked with so far.
func buyerServer(t *testing.T) (srv *httptest.Server, asked func() []string) {
	var mu sync.Mutex
	var queries []string
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0"?><VAST version="4.2" xmlns="http://www.iab.com/VAST"><Ad id="b1"><InLine><AdSystem>Buyer</AdSystem>`+
			`<Impression><![CDATA[https://buyer.test/imp]]></Impression><AdServingId>x</AdServingId><AdTitle>Buyer's ad</AdTitle><Creatives><Creative>`+
			`<UniversalAdId idRegistry="ad-id.org">BUYR0001000H</UniversalAdId><Linear><Duration>00:00:10.000</Duration><MediaFiles>`+
			`<MediaFile delivery="progressive" type="video/mp4" width="640" height="360"><![CDATA[https://buyer.test/v.mp4]]></MediaFile></MediaFiles>`+
			`<VideoClicks><ClickThrough><![CDATA[https://buyer.test/landing]]></ClickThrough></VideoClicks></Linear></Creative></Creatives></InLine></Ad></VAST>`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(queries) }
}

// vmapDoc is a VMAP 1.0 document as IAB's specification lays it out,
// written here from the specification: what a player reads.
type vmapDoc struct {
	XMLName xml.Name `xml:"http://www.iab.net/videosuite/vmap VMAP"`
	Version string   `xml:"version,attr"`
	Breaks  []struct {
		TimeOffset string `xml:"timeOffset,attr"`
		BreakType  string `xml:"breakType,attr"`
		BreakID    string `xml:"breakId,attr"`
		Source     struct {
			AllowMultipleAds string `xml:"allowMultipleAds,attr"`
			TagURI           struct {
				TemplateType string `xml:"templateType,attr"`
				URL          string `xml:",chardata"`
			} `xml:"http://www.iab.net/videosuite/vmap AdTagURI"`
		} `xml:"http://www.iab.net/videosuite/vmap AdSource"`
	} `xml:"http://www.iab.net/videosuite/vmap AdBreak"`
}

// TestVMAP: a placement's ad rules answer VMAP 1.0 — the pre-roll first,
// the mid-rolls where they fall, the post-roll last, a mid-roll past the
// content's end dropped — each break's AdTagURI a VAST request of the
// placement with its pod size and the player's other parameters, which
// answers that many ads; the ad rules round-trip through the API.
func TestVMAP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"video",` + flight + `}`)
	in.campaign(`{"advertiserId":"1","name":"video 2",` + flight + `}`)
	// The 50% break holds two ads lasting 20 s at most: one of 15 s.
	breaks := `[{"offset":"start","ads":1},{"offset":"00:10:00","ads":2},{"offset":"50%","ads":2,"maxDurationMs":20000},{"offset":"end","ads":1}]`
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"episode","types":["video"],"maxDurationMs":15000,"adBreaks":`+breaks+`}`), 201, "")
	for _, bad := range []string{`[{"offset":"middle","ads":1}]`, `[{"offset":"start","ads":0}]`, `[{"offset":"start","ads":1},{"offset":"start","ads":2}]`, `{}`} {
		if r := in.admin("POST", "/api/v1/placements", `{"name":"bad","adBreaks":`+bad+`}`); r.status != 400 || !strings.Contains(r.body, "adBreaks") {
			t.Errorf("adBreaks %s = %d %s; want 400 naming adBreaks", bad, r.status, r.body)
		}
	}
	if r := in.admin("GET", "/api/v1/placements/episode", ""); !strings.Contains(r.body, `"adBreaks":`+breaks) {
		t.Errorf("the placement = %s; want its ad breaks as given", r.body)
	}
	for i := range 2 {
		in.expect(in.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"v%d",%s,"campaignId":"%d","creative":{"type":"video","mediaUrl":"https://cdn.test/%d.mp4","mimeType":"video/mp4","durationMs":15000}}`,
			i, flight, i+1, i)), 201, "")
	}

	read := func(path string) vmapDoc {
		t.Helper()
		r := in.get(path)
		var doc vmapDoc
		if r.status != 200 || xml.Unmarshal([]byte(r.body), &doc) != nil || doc.Version != "1.0" {
			t.Fatalf("GET %s = %d %s; want VMAP 1.0", path, r.status, r.body)
		}
		return doc
	}
	doc := read("/vmap?placement=episode&duration=300&country=TW")
	var got []string
	for _, b := range doc.Breaks {
		got = append(got, b.BreakID+"@"+b.TimeOffset)
		u := b.Source.TagURI.URL
		if b.BreakType != "linear" || b.Source.AllowMultipleAds != "true" || !strings.HasPrefix(u, in.url+"/vast?") || !strings.Contains(u, "country=TW") || !strings.Contains(u, "placement=episode") {
			t.Errorf("break %s = %+v; want linear, a pod, a VAST request of the placement with country=TW", b.BreakID, b)
		}
		want := "1"
		if b.BreakID == "midroll-1" {
			want = "2"
			if !strings.Contains(u, "podDurationMs=20000") {
				t.Errorf("break %s's tag %s; want podDurationMs=20000", b.BreakID, u)
			}
		}
		if !strings.Contains(u, "count="+want) {
			t.Errorf("break %s's tag %s; want count=%s", b.BreakID, u, want)
		}
		if v := decodeVAST(t, in.get(strings.TrimPrefix(u, in.url))); len(v.Ads) != 1 {
			t.Errorf("break %s's VAST has %d ads; want 1 (a pod of two 15 s ads is longer than 20 s)", b.BreakID, len(v.Ads))
		}
	}
	if strings.Join(got, " ") != "preroll@start midroll-1@50% postroll@end" {
		t.Errorf("breaks of a 300 s content = %v; want preroll, the 50%% mid-roll (10:00 is past the end), postroll", got)
	}
	got = nil
	for _, b := range read("/vmap?placement=episode").Breaks {
		got = append(got, b.BreakID+"@"+b.TimeOffset)
	}
	if strings.Join(got, " ") != "preroll@start midroll-1@00:10:00.000 midroll-2@50% postroll@end" {
		t.Errorf("breaks of a content of unknown length = %v; want every break, mid-rolls as listed", got)
	}
	if len(read("/vmap?placement=episode&duration=3600").Breaks) != 4 {
		t.Error("an hour's content: want all four breaks")
	}
	// A pod of two with room for both; the placement's 15 s maximum keeps
	// out a 16 s ad.
	if v := decodeVAST(t, in.get("/vast?placement=episode&count=2&podDurationMs=30000")); len(v.Ads) != 2 {
		t.Errorf("a pod of two lasting up to 30 s has %d ads; want 2", len(v.Ads))
	}
	in.expect(in.admin("PUT", "/api/v1/placements/episode", `{"name":"episode","types":["video"],"maxDurationMs":14999}`), 200, "")
	if v := decodeVAST(t, in.get("/vast?placement=episode&count=2")); len(v.Ads) != 0 {
		t.Errorf("ads of 15 s in a placement of at most 14.999 s: %d; want none", len(v.Ads))
	}
	if r := in.admin("GET", "/api/v1/placements/episode", ""); !strings.Contains(r.body, `"maxDurationMs":14999`) {
		t.Errorf("the placement = %s; want its maxDurationMs", r.body)
	}
	if r := in.get("/vast?placement=episode&podDurationMs=soon"); r.status != 400 || !strings.Contains(r.body, `"podDurationMs"`) {
		t.Errorf("podDurationMs=soon: %d %s; want 400 naming it", r.status, r.body)
	}
	for _, c := range []struct{ path, want string }{
		{"/vmap", `"placement":"is required"`},
		{"/vmap?placement=nowhere", `"placement"`},
		{"/vmap?placement=episode&duration=-5", `"duration"`},
	} {
		if r := in.get(c.path); r.status != 400 || !strings.Contains(r.body, c.want) {
			t.Errorf("GET %s = %d %s; want 400 naming %s", c.path, r.status, r.body, c.want)
		}
	}
}
