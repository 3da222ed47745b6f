package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prebid/openrtb/v20/openrtb2"

	"marquee/store/postgres/pgtest"
)

// TestDemandPartnersAsObjects: a demand partner made through the API
// (every problem named; a name taken is a 409; Marquee's own name
// refused), answered with its headers' names and never their values —
// nor does the audit log hold them —, listed with its health on the
// instance, replaced keeping its headers when the body gives none,
// deleted.
func TestDemandPartnersAsObjects(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	in.expect(in.admin("POST", "/api/v1/demand-partners", `{"name":"marquee","endpoint":"ftp://x","formats":["banner","print"],"timeoutMs":0,"bidAdjustment":0,"headers":{"Content-Type":"x"}}`), 400,
		`{"error":"invalid demand partner","problems":{"bidAdjustment":"must be a number above 0 and at most 10","endpoint":"must be an http or https URL of at most 2048 bytes","formats[1]":"must be one of banner, video, audio, native","headers.Content-Type":"is set by Marquee","name":"\"marquee\" is Marquee's own component","timeoutMs":"must be an integer from 1 to 2000"}}`)
	in.expect(in.admin("POST", "/api/v1/demand-partners", `{"endpoint":"https://bid.example/rtb","formats":["banner"]}`), 400,
		`{"error":"invalid demand partner","problems":{"name":"is required: the partner's name, a bidder code"}}`)
	body := `{"name":"dsp-one","endpoint":"https://bid.example/rtb","formats":["video","banner"],"qps":50,"placements":["side"],"headers":{"X-Api-Key":"secret-value-1"},"gzip":true}`
	r := in.admin("POST", "/api/v1/demand-partners", body)
	if r.status != 201 || strings.Contains(r.body, "secret-value-1") || !strings.Contains(r.body, `"headers":["X-Api-Key"]`) ||
		!strings.Contains(r.body, `"formats":["banner","video"],"timeoutMs":200,"qps":50,"bidAdjustment":1`) {
		t.Fatalf("a partner = %d %s; want 201, its header named and not shown, the defaults", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/demand-partners", body), 409, "")
	if r := in.admin("GET", "/api/v1/demand-partners", ""); r.status != 200 || !strings.Contains(r.body, `"health":{"requests":0,"bids":0,"wins":0,"dropped":{},"paused":false}`) {
		t.Errorf("partners = %d %s; want dsp-one with its health", r.status, r.body)
	}
	in.expect(in.admin("PUT", "/api/v1/demand-partners/dsp-one", `{"name":"other","endpoint":"https://bid.example/rtb","formats":["banner"]}`), 400, "")
	if r := in.admin("PUT", "/api/v1/demand-partners/dsp-one", `{"endpoint":"https://bid.example/v2","formats":["banner"],"timeoutMs":120}`); r.status != 200 ||
		!strings.Contains(r.body, `"headers":["X-Api-Key"]`) || !strings.Contains(r.body, `"timeoutMs":120`) {
		t.Errorf("a replace without headers = %d %s; want the header kept", r.status, r.body)
	}
	if r := in.admin("GET", "/api/v1/audit?entity=demandPartner", ""); r.status != 200 || strings.Contains(r.body, "secret-value-1") || !strings.Contains(r.body, `"timeoutMs":120`) {
		t.Errorf("the audit log of partners = %d %s; want the change, never the header's value", r.status, r.body)
	}
	in.expect(in.admin("DELETE", "/api/v1/demand-partners/dsp-one", ""), 204, "")
	in.expect(in.admin("GET", "/api/v1/demand-partners/dsp-one", ""), 404, "")
}

// TestPartnerBidsInDecisions: a buyer on a local server receives the
// decision's OpenRTB 2.6 request (its impression, floor, site, device,
// regs, source, tmax, at and cur), bids, and wins over a lower remnant
// campaign: the answer names it and frames its markup; its nurl is
// called with the price macro filled; its burl only once its impression
// is verified, and once however often it is fired. On a sponsorship's
// placement it loses, and its lurl says why (102).
func TestPartnerBidsInDecisions(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var requests []openrtb2.BidRequest
	notices := map[string][]string{}
	buyer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" { // a notice
			mu.Lock()
			notices[r.URL.Path] = append(notices[r.URL.Path], r.URL.RawQuery)
			mu.Unlock()
			return
		}
		var req openrtb2.BidRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("a bid request that is not a BidRequest: %v", err)
		}
		mu.Lock()
		requests = append(requests, req)
		mu.Unlock()
		base := "http://" + r.Host
		json.NewEncoder(w).Encode(openrtb2.BidResponse{ID: req.ID, Cur: req.Cur[0], SeatBid: []openrtb2.SeatBid{{Seat: "seat-1", Bid: []openrtb2.Bid{{
			ID: "bid-1", ImpID: req.Imp[0].ID, Price: 3, W: 300, H: 250, AdM: `<div id="dsp-ad">the buyer's ad at ${AUCTION_PRICE}</div>`,
			NURL: base + "/win?p=${AUCTION_PRICE}&a=${AUCTION_ID}", BURL: base + "/bill?p=${AUCTION_PRICE}", LURL: base + "/loss?l=${AUCTION_LOSS}",
			ADomain: []string{"brand.example"}}}}}})
	}))
	t.Cleanup(buyer.Close)
	count := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(notices[path])
	}

	in := start(t, t.TempDir(), nil, "-demand-notices-allow-private", "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"news","domains":["news.example"],"revenueShare":0.5}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","site":"news","sizes":["300x250"],"floor":1}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"top","sizes":["300x250"]}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"remnant",` + flight + `,"priority":"remnant","price":{"model":"cpm","amount":2}}`)
	in.campaign(`{"advertiserId":"1","name":"sponsor",` + flight + `,"priority":"sponsorship"}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"r",`+flight+`,"campaignId":"1","placements":["side"],"creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"s",`+flight+`,"campaignId":"2","placements":["top"],"creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/demand-partners", `{"name":"dsp","endpoint":"`+buyer.URL+`/rtb","formats":["banner"],"timeoutMs":1000}`), 201, "")

	var got struct {
		Decisions map[string][]struct {
			Partner, FrameURL, ImpressionURL, CampaignID string
			CPM                                          float64
			Creative                                     struct{ Type string }
		}
	}
	eventually(t, 5*time.Second, func() string {
		r := in.doHeaders("POST", "/api/v1/decisions", "application/json",
			`{"placements":[{"div":"d","placement":"side"}],"url":"https://news.example/story","consent":{"gpp":"DBAA","gppSid":[7]}}`, "User-Agent", iphoneUA)
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["d"]) != 1 || got.Decisions["d"][0].Partner != "dsp" {
			return "want the partner's bid to win over the remnant campaign's 2: " + r.body
		}
		return ""
	})
	ch := got.Decisions["d"][0]
	if ch.CPM != 3 || ch.Creative.Type != "html" || ch.FrameURL == "" || ch.CampaignID != "" {
		t.Errorf("the partner's choice = %+v; want cpm 3, an html creative in a frame, no campaign", ch)
	}
	mu.Lock()
	req := requests[len(requests)-1]
	mu.Unlock()
	if len(req.Imp) != 1 || req.Imp[0].TagID != "side" || req.Imp[0].Banner == nil || req.Imp[0].Banner.Format[0].W != 300 || req.Imp[0].BidFloor != 1 ||
		req.Imp[0].BidFloorCur != "USD" || req.Site == nil || req.Site.Page != "https://news.example/story" || req.Site.Domain != "news.example" ||
		req.Device == nil || req.Device.UA != iphoneUA || req.Regs == nil || req.Regs.GPP != "DBAA" || len(req.Regs.GPPSID) != 1 ||
		req.Source == nil || req.Source.TID != req.ID || req.TMax != 200 || req.AT != 1 || req.Cur[0] != "USD" {
		t.Errorf("the bid request = %+v; want the slot's impression, floor, page, device, regs, source, tmax 200, at 1, USD", req)
	}
	frame := in.get(ch.FrameURL[strings.Index(ch.FrameURL, "/f/"):])
	if frame.status != 200 || !strings.Contains(frame.body, `<div id="dsp-ad">the buyer's ad at 3</div>`) {
		t.Errorf("the frame = %d %s; want the buyer's markup, its price macro filled", frame.status, frame.body)
	}
	eventually(t, 5*time.Second, func() string {
		if count("/win") == 0 {
			return "no win notice"
		}
		return ""
	})
	if n := count("/bill"); n != 0 {
		t.Errorf("%d billing notices before the impression; want none", n)
	}
	imp := ch.ImpressionURL[strings.Index(ch.ImpressionURL, "/t/"):]
	in.expect(in.get(imp), 204, "")
	in.expect(in.get(imp), 204, "")
	eventually(t, 5*time.Second, func() string {
		if count("/bill") != 1 {
			return "want one billing notice after the verified impression"
		}
		return ""
	})
	mu.Lock()
	if q := notices["/bill"][0]; q != "p=3" {
		t.Errorf("the billing notice's query = %q; want p=3", q)
	}
	mu.Unlock()
	// The partner pays the network: the site's statement owes the
	// publisher its share of the bid's 3 CPM (0.003 gross, 0.0015 net).
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/bidders/stats", ""); !strings.Contains(r.body, `"bidder":"@dsp"`) || !strings.Contains(r.body, `"impressions":1`) {
			return "the partner's impression not counted yet: " + r.body
		}
		return ""
	})
	today := time.Now().UTC().Truncate(24 * time.Hour)
	st := in.admin("POST", "/api/v1/statements", `{"site":"news","from":"`+today.Format(time.RFC3339)+`","to":"`+today.Add(24*time.Hour).Format(time.RFC3339)+`"}`)
	if st.status != 201 || !strings.Contains(st.body, `"impressions":1,"gross":0.003,"net":0.0015,"partnerGross":0.003}`) || !strings.Contains(st.body, `"total":0.0015,`) {
		t.Errorf("the site's statement = %d %s; want the partner's impression, 0.003 gross, 0.0015 net", st.status, st.body)
	}

	// A sponsorship's placement: the partner's bid loses, told why.
	r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"top"}]}`)
	if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["d"]) != 1 || got.Decisions["d"][0].CampaignID != "2" {
		t.Fatalf("the sponsorship's placement = %d %s; want campaign 2", r.status, r.body)
	}
	eventually(t, 5*time.Second, func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(notices["/loss"]) != 1 || notices["/loss"][0] != "l=102" {
			return fmt.Sprintf("loss notices %v; want one, l=102", notices["/loss"])
		}
		return ""
	})
	time.Sleep(200 * time.Millisecond) // a second billing notice would have come by now
	if n := count("/bill"); n != 1 {
		t.Errorf("%d billing notices; want 1: an impression fired twice bills once", n)
	}
}

// TestPrebidServerAuction: Marquee answers Prebid Server's
// /openrtb2/auction as stock Prebid.js's prebidServerBidAdapter asks it
// (text/plain, with credentials, bidder "marquee" naming a placement in
// its params): seat "marquee", a bid of the slot's campaign at its CPM,
// its markup framing the ad with its impression pixel, Prebid's
// targeting; the pixel counts the impression as any decision's. An imp
// that names no placement is a 400 naming it; /status answers ok.
func TestPrebidServerAuction(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"cpm",` + flight + `,"price":{"model":"cpm","amount":4.25}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"html","html":"<p>hello</p>","width":300,"height":250}}`), 201, "")
	in.expect(in.get("/status"), 200, "ok")

	req := `{"id":"pbjs-1","imp":[{"id":"div-1","banner":{"format":[{"w":300,"h":250}]},"ext":{"prebid":{"bidder":{"marquee":{"placement":"side"}}}}}],
		"site":{"page":"https://news.example/a"},"device":{"ua":"` + iphoneUA + `"},"tmax":1000}`
	r := in.doHeaders("POST", "/openrtb2/auction", "text/plain", req, "Origin", "https://news.example")
	var resp openrtb2.BidResponse
	if r.status != 200 || json.Unmarshal([]byte(r.body), &resp) != nil || len(resp.SeatBid) != 1 || len(resp.SeatBid[0].Bid) != 1 {
		t.Fatalf("auction = %d %s; want one seat's bid", r.status, r.body)
	}
	if got := r.header.Get("Access-Control-Allow-Origin"); got != "https://news.example" || r.header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("CORS = %q, credentials %q; want the page's origin, with credentials", got, r.header.Get("Access-Control-Allow-Credentials"))
	}
	b := resp.SeatBid[0].Bid[0]
	if resp.ID != "pbjs-1" || resp.SeatBid[0].Seat != "marquee" || b.ImpID != "div-1" || b.Price != 4.25 || b.W != 300 || b.H != 250 || b.CrID != "1" ||
		!strings.Contains(string(b.Ext), `"hb_pb":"4.20"`) || !strings.Contains(string(b.Ext), `"type":"banner"`) || !strings.Contains(b.AdM, `/f/`) {
		t.Errorf("bid = %+v ext %s; want seat marquee, div-1 at 4.25, 300x250, its frame, hb_pb 4.20", b, b.Ext)
	}
	frame := strings.Split(strings.Split(b.AdM, `<iframe src="`)[1], `"`)[0]
	if f := in.get(frame[strings.Index(frame, "/f/"):]); f.status != 200 || !strings.Contains(f.body, "<p>hello</p>") {
		t.Errorf("the frame = %d %s; want the ad's HTML", f.status, f.body)
	}
	pixel := strings.Split(strings.Split(b.AdM, `style="display:none"`)[0], `<img src="`)[1]
	pixel = strings.Split(pixel, `"`)[0]
	in.expect(in.get(pixel[strings.Index(pixel, "/t/"):]), 204, "")
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", "/api/v1/campaigns/1/stats", ""); !strings.Contains(r.body, `"impressions":1`) {
			return "the impression not counted: " + r.body
		}
		return ""
	})
	in.expect(in.doHeaders("POST", "/openrtb2/auction", "text/plain", `{"id":"x","imp":[{"id":"a"}]}`), 400,
		`{"error":"invalid bid request","problems":{"imp[0]":"must have an id and name a placement: ext.prebid.bidder.marquee.placement (Prebid.js: params {\"placement\": \"…\"})"}}`)
}

// TestDealLiftsAListedPartnerOnly: two partners bid the same CPM with
// the same deal id on a standard campaign's placement; the deal (a
// standard one, not taking the page's bids) lists one of them: its bid
// is lifted and wins, the other's competes in the open auction and loses
// to the campaign. Its bid request carried the deal; the other's did not.
func TestDealLiftsAListedPartnerOnly(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	deals := map[string][]string{}
	buyer := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req openrtb2.BidRequest
			json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			if req.Imp[0].PMP != nil {
				for _, d := range req.Imp[0].PMP.Deals {
					deals[name] = append(deals[name], d.ID)
				}
			}
			mu.Unlock()
			json.NewEncoder(w).Encode(openrtb2.BidResponse{ID: req.ID, Cur: "USD", SeatBid: []openrtb2.SeatBid{{Bid: []openrtb2.Bid{{
				ID: name, ImpID: req.Imp[0].ID, Price: 2, DealID: "PG-1", W: 300, H: 250, AdM: "<b>" + name + "</b>"}}}}})
		}))
		t.Cleanup(s.Close)
		return s
	}
	listed, other := buyer("listed"), buyer("other")
	in := start(t, t.TempDir(), nil)
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"std",` + flight + `,"priority":"standard"}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/"}}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/deals", `{"id":"PG-1","name":"PG","bidders":["listed"],"tier":"standard","floor":1}`), 201, "")
	winner := func() string {
		t.Helper()
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`)
		var got struct {
			Decisions map[string][]struct{ Partner, CampaignID string }
		}
		if json.Unmarshal([]byte(r.body), &got); r.status != 200 || len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		c := got.Decisions["d"][0]
		return c.Partner + c.CampaignID
	}
	in.expect(in.admin("POST", "/api/v1/demand-partners", `{"name":"other","endpoint":"`+other.URL+`","formats":["banner"],"timeoutMs":1000}`), 201, "")
	eventually(t, 5*time.Second, func() string {
		if w := winner(); w != "1" {
			return "with the unlisted partner alone, want campaign 1 (its deal bid competes in the open auction): " + w
		}
		return ""
	})
	in.expect(in.admin("POST", "/api/v1/demand-partners", `{"name":"listed","endpoint":"`+listed.URL+`","formats":["banner"],"timeoutMs":1000}`), 201, "")
	eventually(t, 5*time.Second, func() string {
		if w := winner(); w != "listed" {
			return "with the listed partner, want its deal's bid: " + w
		}
		return ""
	})
	mu.Lock()
	defer mu.Unlock()
	if len(deals["listed"]) == 0 || deals["listed"][0] != "PG-1" || len(deals["other"]) != 0 {
		t.Errorf("deals in the bid requests = %v; want PG-1 in the listed partner's only", deals)
	}
}

// TestPartnerMarkupAcrossInstances: with -counters redis://…, a partner's
// winning markup and billing notice are kept for the fleet — a decision
// made on one instance is drawn by another's frame, and its impression,
// fired at both instances, sends one billing notice.
func TestPartnerMarkupAcrossInstances(t *testing.T) {
	t.Parallel()
	redis := os.Getenv("MARQUEE_TEST_REDIS")
	if redis == "" {
		t.Skip("MARQUEE_TEST_REDIS is not set: partners' markup across instances is not tested")
	}
	var bills atomic.Int64
	buyer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bill" {
			bills.Add(1)
			return
		}
		var req openrtb2.BidRequest
		json.NewDecoder(r.Body).Decode(&req)
		json.NewEncoder(w).Encode(openrtb2.BidResponse{ID: req.ID, Cur: "USD", SeatBid: []openrtb2.SeatBid{{Bid: []openrtb2.Bid{{
			ID: "b", ImpID: req.Imp[0].ID, Price: 2, W: 300, H: 250, AdM: `<i id="fleet">fleet ad ${AUCTION_ID}</i>`, BURL: "http://" + r.Host + "/bill"}}}}})
	}))
	t.Cleanup(buyer.Close)
	dsn := pgtest.DSN(t)
	flags := []string{"-counters", redis, "-tracking-key", strings.Repeat("k", 32), "-demand-notices-allow-private"}
	a, b := startPG(t, dsn, flags...), startPG(t, dsn, flags...)
	a.expect(a.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	a.expect(a.admin("POST", "/api/v1/demand-partners", `{"name":"fleet-dsp","endpoint":"`+buyer.URL+`","formats":["banner"],"timeoutMs":1000}`), 201, "")
	var got struct {
		Decisions map[string][]struct{ Partner, FrameURL, ImpressionURL string }
	}
	eventually(t, 5*time.Second, func() string {
		r := a.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`)
		if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["d"]) != 1 || got.Decisions["d"][0].Partner != "fleet-dsp" {
			return "want the partner's bid: " + r.body
		}
		return ""
	})
	ch := got.Decisions["d"][0]
	if f := b.get(ch.FrameURL[strings.Index(ch.FrameURL, "/f/"):]); f.status != 200 || !strings.Contains(f.body, `<i id="fleet">fleet ad `) {
		t.Errorf("the other instance's frame = %d %s; want the partner's markup", f.status, f.body)
	}
	imp := ch.ImpressionURL[strings.Index(ch.ImpressionURL, "/t/"):]
	b.expect(b.get(imp), 204, "")
	a.expect(a.get(imp), 204, "")
	eventually(t, 5*time.Second, func() string {
		if n := bills.Load(); n != 1 {
			return fmt.Sprintf("%d billing notices; want 1", n)
		}
		return ""
	})
	time.Sleep(300 * time.Millisecond) // a second notice would have come by now
	if n := bills.Load(); n != 1 {
		t.Errorf("%d billing notices; want 1 for the fleet", n)
	}
}
