package demand_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prebid/openrtb/v20/openrtb2"

	"marquee"
	"marquee/demand"
	"marquee/privacy"
)

// buyer is a partner on a local server: it keeps the bid requests it
// received and answers each with answer's.
type buyer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []openrtb2.BidRequest
	headers  []http.Header
	hits     atomic.Int64
}

func newBuyer(t *testing.T, answer func(r *openrtb2.BidRequest, w http.ResponseWriter)) *buyer {
	b := &buyer{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b.hits.Add(1)
		body, _ := io.ReadAll(req.Body)
		var r openrtb2.BidRequest
		if err := json.Unmarshal(body, &r); err != nil {
			t.Errorf("a bid request that is not a BidRequest: %v: %s", err, body)
		}
		b.mu.Lock()
		b.requests, b.headers = append(b.requests, r), append(b.headers, req.Header.Clone())
		b.mu.Unlock()
		answer(&r, w)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *buyer) last(t *testing.T) openrtb2.BidRequest {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.requests) == 0 {
		t.Fatal("the buyer received no request")
	}
	return b.requests[len(b.requests)-1]
}

func answerJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// auction is a decision's offer of two banner slots, on placements
// "top" and "side", from a viewer with an address, a User-Agent, a city's
// geo, a user id and a page.
func auction(v privacy.Verdict) *demand.Auction {
	one := int8(1)
	lat, lon := 48.85, 2.35
	imp := func(id, placement string) demand.Imp {
		return demand.Imp{Format: marquee.FormatBanner, Placement: placement, Imp: openrtb2.Imp{ID: id, TagID: placement,
			Banner: &openrtb2.Banner{Format: []openrtb2.Format{{W: 300, H: 250}}}, BidFloor: 0.5, BidFloorCur: "EUR", Secure: &one}}
	}
	return &demand.Auction{
		Request: openrtb2.BidRequest{ID: "auction-1", TMax: 500, AT: 1, Cur: []string{"EUR"},
			Site:   &openrtb2.Site{ID: "news", Domain: "news.example", Page: "https://news.example/a", Ref: "https://search.example/", Publisher: &openrtb2.Publisher{ID: "7"}},
			Device: &openrtb2.Device{UA: "Mozilla/5.0", IP: "203.0.113.77", Geo: &openrtb2.Geo{Country: "FRA", City: "Paris", Lat: &lat, Lon: &lon}},
			User:   &openrtb2.User{ID: "u-1"},
			Regs:   &openrtb2.Regs{GPP: "DBAA", GPPSID: []int8{7}},
			Source: &openrtb2.Source{TID: "auction-1", SChain: &openrtb2.SupplyChain{Ver: "1.0", Complete: 1, Nodes: []openrtb2.SupplyChainNode{{ASI: "net.example", SID: "7"}}}}},
		Imps:    []demand.Imp{imp("0", "top"), imp("1", "side")},
		Verdict: v,
		Deals: func(p string) []openrtb2.Deal {
			if p == "dsp" {
				return []openrtb2.Deal{{ID: "PG-1", BidFloor: 2, BidFloorCur: "EUR"}}
			}
			return nil
		},
	}
}

func exchange(t *testing.T, rules *privacy.Rules, ps ...marquee.DemandPartner) *demand.Exchange {
	x := demand.New(demand.Config{Currency: "EUR", Rules: rules, AllowPrivateNotices: true})
	t.Cleanup(x.Close)
	x.SetPartners(ps)
	return x
}

// TestRunAsksEachPartnerItsImpressions: a partner receives one request
// of the impressions of its placements, with the decision's objects and
// its deals; its valid bids come back adjusted, and the others are
// dropped by reason.
func TestRunAsksEachPartnerItsImpressions(t *testing.T) {
	t.Parallel()
	b := newBuyer(t, func(r *openrtb2.BidRequest, w http.ResponseWriter) {
		answerJSON(w, openrtb2.BidResponse{ID: r.ID, Cur: "EUR", SeatBid: []openrtb2.SeatBid{{Seat: "s1", Bid: []openrtb2.Bid{
			{ID: "b1", ImpID: "0", Price: 2.5, AdM: "<div>ad</div>", ADomain: []string{"brand.example"}, NURL: "https://n.example/${AUCTION_PRICE}"},
			{ID: "b2", ImpID: "1", Price: 3, AdM: "<div>not asked</div>"},
			{ID: "b3", ImpID: "0", Price: 0, AdM: "<div>free</div>"},
		}}}})
	})
	x := exchange(t, nil, marquee.DemandPartner{Name: "dsp", Endpoint: b.URL, Formats: []string{marquee.FormatBanner}, TimeoutMS: 400,
		BidAdjustment: 0.8, Placements: []string{"top"}, Headers: map[string]string{"X-Api-Key": "k"}})
	bids := x.Run(context.Background(), auction(privacy.Verdict{}))
	if len(bids) != 1 || bids[0].Imp != 0 || bids[0].Price != 2_000_000 || bids[0].Seat != "s1" || bids[0].Partner != "dsp" {
		t.Fatalf("bids = %+v; want b1 alone, 2.5 × 0.8 = 2.0 CPM", bids)
	}
	r := b.last(t)
	if len(r.Imp) != 1 || r.Imp[0].TagID != "top" || r.Imp[0].Banner == nil || r.Imp[0].Banner.Format[0].W != 300 || r.Imp[0].BidFloor != 0.5 ||
		r.Imp[0].PMP == nil || r.Imp[0].PMP.Deals[0].ID != "PG-1" {
		t.Errorf("imps = %+v; want top's alone, its banner, floor and deal", r.Imp)
	}
	if r.Site.Page != "https://news.example/a" || r.Device.IP != "203.0.113.77" || r.Device.Geo.City != "Paris" || r.User.ID != "u-1" ||
		r.Regs.GPP != "DBAA" || r.Source.SChain.Nodes[0].SID != "7" || r.TMax != 500 || r.AT != 1 || r.Cur[0] != "EUR" {
		t.Errorf("request = %+v; want the decision's site, device, user, regs, schain, tmax, at and cur", r)
	}
	if h := b.headers[0]; h.Get("X-Api-Key") != "k" || h.Get("X-Openrtb-Version") != "2.6" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v; want the partner's key, OpenRTB 2.6, JSON", h)
	}
	got := x.Health("dsp")
	if got.Requests != 1 || got.Bids != 3 || fmt.Sprint(got.Dropped) != "map[noPrice:1 unknownImp:1]" {
		t.Errorf("health = %+v; want 1 request, 3 bids, one unknown impression and one without price dropped", got)
	}
}

// TestBadAnswersAreDroppedByReason: a late answer, a malformed one,
// another request's id, a bid in another currency (no cur: USD), markup
// over 256 KiB, an error status — each dropped and counted.
func TestBadAnswersAreDroppedByReason(t *testing.T) {
	t.Parallel()
	bid := func(r *openrtb2.BidRequest, adm string) openrtb2.BidResponse {
		return openrtb2.BidResponse{ID: r.ID, SeatBid: []openrtb2.SeatBid{{Bid: []openrtb2.Bid{{ID: "b", ImpID: r.Imp[0].ID, Price: 1, AdM: adm}}}}}
	}
	answers := map[string]func(r *openrtb2.BidRequest, w http.ResponseWriter){
		demand.Timeout:     func(r *openrtb2.BidRequest, w http.ResponseWriter) { time.Sleep(300 * time.Millisecond) },
		demand.BadResponse: func(r *openrtb2.BidRequest, w http.ResponseWriter) { io.WriteString(w, `{"id":`) },
		"otherID":          func(r *openrtb2.BidRequest, w http.ResponseWriter) { answerJSON(w, openrtb2.BidResponse{ID: "other"}) },
		demand.Currency:    func(r *openrtb2.BidRequest, w http.ResponseWriter) { answerJSON(w, bid(r, "<b>x</b>")) },
		demand.TooLarge: func(r *openrtb2.BidRequest, w http.ResponseWriter) {
			b := bid(r, strings.Repeat("a", demand.MaxAdm+1))
			b.Cur = "EUR"
			answerJSON(w, b)
		},
		demand.Failed: func(r *openrtb2.BidRequest, w http.ResponseWriter) { w.WriteHeader(500) },
	}
	want := map[string]string{demand.Timeout: "timeout", demand.BadResponse: "badResponse", "otherID": "badResponse",
		demand.Currency: "currency", demand.TooLarge: "tooLarge", demand.Failed: "error"}
	for name, answer := range answers {
		b := newBuyer(t, answer)
		timeout := 2000 // a 256 KiB answer takes its time under the race detector
		if name == demand.Timeout {
			timeout = 100
		}
		x := exchange(t, nil, marquee.DemandPartner{Name: "p", Endpoint: b.URL, Formats: []string{marquee.FormatBanner}, TimeoutMS: timeout, BidAdjustment: 1})
		if bids := x.Run(context.Background(), auction(privacy.Verdict{})); len(bids) != 0 {
			t.Errorf("%s: bids = %+v; want none", name, bids)
		}
		if h := x.Health("p"); h.Dropped[want[name]] != 1 {
			t.Errorf("%s: dropped = %v; want 1 %s", name, h.Dropped, want[name])
		}
	}
}

// TestBreakerPausesAFailingPartner: 20 failed requests pause the
// partner — the next auction does not ask it, and counts it paused.
func TestBreakerPausesAFailingPartner(t *testing.T) {
	t.Parallel()
	b := newBuyer(t, func(r *openrtb2.BidRequest, w http.ResponseWriter) { w.WriteHeader(503) })
	x := exchange(t, nil, marquee.DemandPartner{Name: "p", Endpoint: b.URL, Formats: []string{marquee.FormatBanner}, TimeoutMS: 100, BidAdjustment: 1})
	for range 20 {
		x.Run(context.Background(), auction(privacy.Verdict{}))
	}
	if h := x.Health("p"); !h.Paused || h.Requests != 20 {
		t.Fatalf("after 20 failures: health = %+v; want paused", h)
	}
	x.Run(context.Background(), auction(privacy.Verdict{}))
	if n := b.hits.Load(); n != 20 {
		t.Errorf("the buyer was asked %d times; want 20: a paused partner is not asked", n)
	}
	if h := x.Health("p"); h.Dropped["paused"] != 1 {
		t.Errorf("dropped = %v; want 1 paused", h.Dropped)
	}
}

// TestQPSHeld: a partner of 2 requests a second is asked twice in a
// second, and the third auction counts overQps.
func TestQPSHeld(t *testing.T) {
	t.Parallel()
	b := newBuyer(t, func(r *openrtb2.BidRequest, w http.ResponseWriter) { w.WriteHeader(204) })
	at := time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC)
	x := demand.New(demand.Config{Currency: "EUR", Now: func() time.Time { return at }})
	t.Cleanup(x.Close)
	x.SetPartners([]marquee.DemandPartner{{Name: "p", Endpoint: b.URL, Formats: []string{marquee.FormatBanner}, TimeoutMS: 200, QPS: 2, BidAdjustment: 1}})
	for range 3 {
		x.Run(context.Background(), auction(privacy.Verdict{}))
	}
	if n, h := b.hits.Load(), x.Health("p"); n != 2 || h.Dropped["overQps"] != 1 {
		t.Errorf("asked %d times, dropped %v; want 2 and 1 overQps", n, h.Dropped)
	}
}

// TestPrivacyPerPartner: a rule that denies transmitPreciseGeo to one
// partner strips that partner's geo to the country and no other's; a
// verdict that denies every buyer the user id and the address strips
// both partners' user id, address and User-Agent; transmitUrl denied by
// a rule keeps the domain alone.
func TestPrivacyPerPartner(t *testing.T) {
	t.Parallel()
	noBid := func(r *openrtb2.BidRequest, w http.ResponseWriter) { w.WriteHeader(204) }
	geo, other := newBuyer(t, noBid), newBuyer(t, noBid)
	rules, err := privacy.ParseRules([]byte(`{"rules":[{"activity":"transmitPreciseGeo","allow":false,"components":["geo-dsp"]},
		{"activity":"transmitUrl","allow":false,"components":["geo-dsp"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	x := exchange(t, rules,
		marquee.DemandPartner{Name: "geo-dsp", Endpoint: geo.URL, Formats: []string{marquee.FormatBanner}, TimeoutMS: 400, BidAdjustment: 1},
		marquee.DemandPartner{Name: "other", Endpoint: other.URL, Formats: []string{marquee.FormatBanner}, TimeoutMS: 400, BidAdjustment: 1})
	x.Run(context.Background(), auction(privacy.Verdict{}))
	g, o := geo.last(t), other.last(t)
	if g.Device.Geo.City != "" || g.Device.Geo.Lat != nil || g.Device.Geo.Country != "FRA" || g.Site.Page != "" || g.Site.Domain != "news.example" {
		t.Errorf("geo-dsp's device %+v, site %+v; want its geo the country alone, no page", g.Device.Geo, g.Site)
	}
	if o.Device.Geo.City != "Paris" || o.Site.Page == "" || o.User.ID != "u-1" {
		t.Errorf("other's geo %+v, site %+v, user %+v; want all of them", o.Device.Geo, o.Site, o.User)
	}
	// A US opt-out of sale: no user id, no full address, to anyone.
	pol, err := privacy.NewPolicy(privacy.Balanced, []byte("0123456789abcdef0123"), 0)
	if err != nil {
		t.Fatal(err)
	}
	v := pol.Decide(privacy.Signal{USP: []byte("1YYN")})
	if v.Allows(privacy.TransmitUserID) {
		t.Fatalf("US Privacy 1YYN allows transmitUserId: %+v", v)
	}
	x.Run(context.Background(), auction(v))
	for _, r := range []openrtb2.BidRequest{geo.last(t), other.last(t)} {
		if r.User.ID != "" || r.Device.IP != "203.0.113.0" || r.Device.UA != "" {
			t.Errorf("an opted-out request's user %+v, device %+v; want no user id, the address truncated, no User-Agent", r.User, r.Device)
		}
	}
}

// TestMacros: every OpenRTB macro of a notice is filled.
func TestMacros(t *testing.T) {
	t.Parallel()
	b := demand.Bid{AuctionID: "a1", Seat: "s", Raw: openrtb2.Bid{ID: "b1", ImpID: "0", Price: 1.25, AdID: "ad"}}
	got := demand.Macros("https://x.example/?p=${AUCTION_PRICE}&a=${AUCTION_ID}&i=${AUCTION_IMP_ID}&b=${AUCTION_BID_ID}&s=${AUCTION_SEAT_ID}&c=${AUCTION_CURRENCY}&l=${AUCTION_LOSS}&ad=${AUCTION_AD_ID}", &b, "EUR", demand.LossOutbid)
	if want := "https://x.example/?p=1.25&a=a1&i=0&b=b1&s=s&c=EUR&l=102&ad=ad"; got != want {
		t.Errorf("Macros = %s; want %s", got, want)
	}
}
