package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// playersDir is where Dailymotion's vast-client and vmap are installed
// (MARQUEE_TEST_PLAYERS: cmd/marquee/testdata/players after npm ci; skipped
// without it or without node).
func playersDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MARQUEE_TEST_PLAYERS")
	if dir == "" {
		t.Skip("MARQUEE_TEST_PLAYERS is not set (cd cmd/marquee/testdata/players && npm ci; then its path): the players' libraries are not tested")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the players' libraries are not tested")
	}
	return dir
}

// player runs the players' script (testdata/players/players.mjs) on url
// and decodes what it prints into v.
func player(t *testing.T, dir, what, url string, v any) {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(dir, "players.mjs"), what, url)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYER_UA="+iphoneUA) // a person's browser, as a web player's requests say
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node players.mjs %s %s: %v\n%s", what, url, err, stderr)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("node players.mjs %s %s printed %s: %v", what, url, out, err)
	}
}

type playerAds struct {
	Ads []struct {
		System, Title string
		Impressions   []string
		Creatives     []struct {
			Type           string
			SkipDelay      *float64
			Duration       float64
			UniversalAdIDs []struct{ IDRegistry, Value string } `json:"universalAdIds"`
			Media          []struct {
				URL, MimeType string
				Width, Height int
			}
			Tracking      map[string][]string
			ClickThrough  string
			ClickTracking []string
		}
		Verifications []struct{ Vendor, Resource, APIFramework, Parameters string }
	}
}

// TestPlayersReadMarquee: Dailymotion's vast-client (what many web players
// parse VAST with) follows a Marquee wrapper to a buyer's inline ad on a
// local server and merges Marquee's impression, quartiles and click
// tracking into it, which Marquee then counts; it reads a skippable ad's
// skip delay, UniversalAdId and Open Measurement verification; and
// Dailymotion's vmap reads a placement's VMAP with its breaks, whose tags
// vast-client reads as pods.
func TestPlayersReadMarquee(t *testing.T) {
	t.Parallel()
	dir := playersDir(t)
	buyer, _ := buyerServer(t)
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"programmatic",` + flight + `}`)
	in.campaign(`{"advertiserId":"1","name":"direct",` + flight + `}`)
	in.campaign(`{"advertiserId":"1","name":"direct 2",` + flight + `}`)
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"preroll","types":["video"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"episode","types":["video"],"adBreaks":[{"offset":"start","ads":1},{"offset":"50%","ads":2},{"offset":"end","ads":1}]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"Buyer's tag",`+flight+`,"campaignId":"1","placements":["preroll"],`+
		`"creative":{"type":"video","vastTagUrl":"`+buyer.URL+`/vast?cb=[CACHEBUSTING]","clickUrl":"https://buyer.test/"}}`), 201, "")
	for i, c := range []string{"2", "3"} {
		in.expect(in.admin("POST", "/api/v1/ad", fmt.Sprintf(`{"title":"Direct %d",%s,"campaignId":%q,"placements":["episode"],"creative":{"type":"video","mediaUrl":"https://cdn.test/%d.mp4",`+
			`"mimeType":"video/mp4","durationMs":30000,"skipOffsetMs":5000,"clickUrl":"https://acme.test/","universalAdId":{"registry":"ad-id.org","value":"ACME000%d000H"},`+
			`"verifications":[{"vendor":"iabtechlab.com-omid","url":"https://verify.test/omid.js","parameters":"p=%d"}]}}`, i, flight, c, i, i, i)), 201, "")
	}

	// The wrapper, followed.
	var got playerAds
	player(t, dir, "vast", in.url+"/vast?placement=preroll", &got)
	if len(got.Ads) != 1 || len(got.Ads[0].Creatives) != 1 {
		t.Fatalf("vast-client read %+v; want the buyer's ad", got)
	}
	ad, cr := got.Ads[0], got.Ads[0].Creatives[0]
	mine := func(urls []string, kind string) string {
		for _, u := range urls {
			if strings.HasPrefix(u, in.url+"/t/"+kind+"/") {
				return u
			}
		}
		return ""
	}
	if ad.Title != "Buyer's ad" || !slices.Contains(ad.Impressions, "https://buyer.test/imp") || mine(ad.Impressions, "i") == "" || len(cr.Media) != 1 ||
		cr.Media[0].URL != "https://buyer.test/v.mp4" || cr.ClickThrough != "https://buyer.test/landing" || mine(cr.ClickTracking, "c") == "" || mine(cr.Tracking["start"], "s") == "" {
		t.Fatalf("vast-client read %+v; want the buyer's ad with Marquee's impression, start and click tracking merged in", ad)
	}
	for _, u := range []string{mine(ad.Impressions, "i"), mine(cr.Tracking["start"], "s"), mine(cr.Tracking["complete"], "e"), mine(cr.ClickTracking, "c")} {
		if s := fire(t, u).StatusCode; s != 204 && s != 302 {
			t.Errorf("GET %s = %d", u, s)
		}
	}
	eventually(t, 5*time.Second, func() string {
		if x := in.stats("/api/v1/campaigns/1/stats").Totals; x.Impressions != 1 || x.Starts != 1 || x.Completes != 1 || x.Clicks != 1 {
			return fmt.Sprintf("campaign 1: %+v; want the wrapper's impression, start, complete and click once", x)
		}
		return ""
	})

	// The VMAP, and its breaks' pods.
	var vm struct {
		Version string
		Breaks  []struct {
			TimeOffset, BreakType, BreakID string
			AdTagURI                       struct{ TemplateType, URI string }
		}
	}
	player(t, dir, "vmap", in.url+"/vmap?placement=episode&duration=600", &vm)
	if vm.Version != "1.0" || len(vm.Breaks) != 3 || vm.Breaks[0].TimeOffset != "start" || vm.Breaks[1].TimeOffset != "50%" || vm.Breaks[2].TimeOffset != "end" ||
		!strings.HasPrefix(vm.Breaks[1].AdTagURI.URI, in.url+"/vast?") {
		t.Fatalf("vmap read %+v; want pre-roll, the 50%% mid-roll and post-roll, each a VAST tag", vm)
	}
	var pod playerAds
	player(t, dir, "vast", vm.Breaks[1].AdTagURI.URI, &pod)
	if len(pod.Ads) != 2 || pod.Ads[0].Title == pod.Ads[1].Title {
		t.Fatalf("the mid-roll's pod = %+v; want two ads of two campaigns", pod)
	}
	for _, a := range pod.Ads {
		c := a.Creatives[0]
		if c.SkipDelay == nil || *c.SkipDelay != 5 || c.Duration != 30 || len(c.UniversalAdIDs) != 1 || c.UniversalAdIDs[0].IDRegistry != "ad-id.org" ||
			!strings.HasPrefix(c.UniversalAdIDs[0].Value, "ACME") || len(a.Verifications) != 1 || a.Verifications[0].Vendor != "iabtechlab.com-omid" ||
			a.Verifications[0].Resource != "https://verify.test/omid.js" || !strings.HasPrefix(a.Verifications[0].Parameters, "p=") {
			t.Errorf("a pod's ad as vast-client reads it: %+v; want skippable at 5 s of 30, its UniversalAdId and its verification", a)
		}
	}
}
