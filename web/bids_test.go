package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/index"
	"marquee/reports"
	"marquee/serve"
	"marquee/store/sqlite"
	"marquee/tracking"
	"marquee/web"
)

// bidServer decides placement home (300×250, a floor of 1.00) where a
// remnant campaign pays a CPM of 2.00; bidder "halved"'s bids count half.
// Its tally counts what the sink's lines say when told (bidWorld.flush).
type bidWorld struct {
	h     fasthttp.RequestHandler
	sink  *flakySink
	tally *reports.Tally
}

// flush tells the tally every line written so far and flushes it.
func (w *bidWorld) flush(t *testing.T) {
	w.sink.mu.Lock()
	var lines []byte
	for _, l := range w.sink.lines {
		lines = append(append(lines, l...), '\n')
	}
	w.sink.mu.Unlock()
	// The collector stamps a line when it writes it; the test's sink does
	// not: stamped now.
	lines = bytes.ReplaceAll(lines, []byte(`"receivedAt":"0001-01-01T00:00:00.000000000Z"`),
		[]byte(`"receivedAt":"`+time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z")+`"`))
	w.tally.Written("events-1.ndjson", 0, lines)
	if err := w.tally.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func bidServer(t *testing.T) *bidWorld {
	now := time.Now()
	ps := []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "home", Sizes: []string{"300x250"}, Types: marquee.CreativeTypes, Floor: 1_000_000}}}
	cs := []marquee.Campaign{{ID: 1, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "remnant",
		StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Priority: marquee.PriorityRemnant, Weight: 1, Price: &marquee.Price{Model: "cpm", Amount: 2_000_000}}}}
	ads := []*marquee.Ad{{ID: 1, CampaignID: 1, Title: "a", StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour),
		Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "x", Width: 300, Height: 250}}}
	e := delivery.New(counters.NewMemory(counters.DefaultMemory))
	e.SetCampaigns(cs, ps)
	e.PutAds(ads, nil, true)
	bidding, err := delivery.ParseBidding("halved=0.5", "USD")
	if err != nil {
		t.Fatal(err)
	}
	e.SetBidding(bidding)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.CreatePlacement(context.Background(), ps[0].PlacementInput); err != nil { // the tally finds it by name
		t.Fatal(err)
	}
	signer, _ := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	bids := reports.NewBids()
	w := &bidWorld{sink: &flakySink{}}
	w.tally = reports.New(reports.Config{Store: st, Resolver: storeResolver{st}, Slot: "a", Log: quiet, Bids: bids}, nil)
	if err := w.tally.Recover(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	reporter := reports.NewReporter(st, 0)
	reporter.Bids = st
	w.h = web.NewServer(web.Config{InsecureAdmin: true}, web.Deps{Log: quiet, Now: time.Now, Index: index.New(time.Now),
		Serve:    service(serve.Config{Engine: e, Signer: signer, Now: time.Now}, serve.LedgerConfig{Sink: w.sink, Bids: bids}),
		Registry: prometheus.NewRegistry(), Store: st, Reports: reporter}).Handler()
	return w
}

type bidAnswer struct {
	Decisions map[string][]struct {
		AdID, CampaignID, Bidder, Size, DealID string
		CPM                                    float64
		ImpressionURL, ClickURL, ViewURL       string
	}
	Explain map[string][]struct {
		Bidder, Status string
	}
}

// TestBidsOverHTTP: a slot's bids in the decision request — one above the
// remnant campaign's eCPM fills the slot, answered with its bidder,
// Prebid's ad id and signed tracking URLs; its impression, fired twice,
// is written once as the bidder's with what it earns (its CPM ÷ 1,000)
// and no ad of Marquee's; its click is a pixel; a bid under the
// campaign's eCPM leaves the slot to the campaign; explain says why
// each bid won or lost; malformed bids are a 400 naming them; the
// bidders' report counts each bid and win, and each win's impression
// once, with its revenue.
func TestBidsOverHTTP(t *testing.T) {
	w := bidServer(t)
	h, sink := w.h, w.sink
	decide := func(body string) (int, bidAnswer, string) {
		status, raw := post(h, "/api/v1/decisions", body)
		var a bidAnswer
		json.Unmarshal(raw, &a)
		return status, a, string(raw)
	}
	status, a, raw := decide(`{"placements":[{"div":"d","placement":"home","bids":[` +
		`{"bidder":"appnexus","cpm":3,"currency":"USD","adId":"pb-1","size":"300x250"},{"bidder":"rubicon","cpm":2.5,"adId":"pb-2"}]}]}`)
	if status != 200 || len(a.Decisions["d"]) != 1 {
		t.Fatalf("decision with bids = %d %s", status, raw)
	}
	got := a.Decisions["d"][0]
	if got.Bidder != "appnexus" || got.AdID != "pb-1" || got.CPM != 3 || got.Size != "300x250" || got.CampaignID != "" || got.ImpressionURL == "" || got.ClickURL == "" {
		t.Fatalf("the slot = %+v; want appnexus's bid pb-1 at 3 with its tracking URLs", got)
	}
	path := func(u string) string { return u[strings.Index(u, "/t/"):] }
	for range 2 {
		if status, _ := send(h, "GET", path(got.ImpressionURL)); status != 204 {
			t.Fatalf("the bid's impression = %d; want 204", status)
		}
	}
	if status, _ := send(h, "GET", path(got.ClickURL)); status != 204 {
		t.Errorf("the bid's click = %d; want a pixel (204), not a redirect", status)
	}
	var impressions, clicks []map[string]any
	sink.mu.Lock()
	for _, l := range sink.lines {
		var m map[string]any
		json.Unmarshal([]byte(l), &m)
		switch m["type"] {
		case "impression":
			impressions = append(impressions, m)
		case "click":
			clicks = append(clicks, m)
		}
	}
	sink.mu.Unlock()
	if len(impressions) != 1 || impressions[0]["bidder"] != "appnexus" || impressions[0]["placement"] != "home" || impressions[0]["cost"] != "3000000" ||
		impressions[0]["ad"] != nil || impressions[0]["campaign"] != nil || impressions[0]["verified"] != "1" {
		t.Errorf("impression lines %v; want one, appnexus's in home, verified, earning 0.003 (3,000,000 nano-units), no ad", impressions)
	}
	if len(clicks) != 1 || clicks[0]["bidder"] != "appnexus" || clicks[0]["cost"] != nil {
		t.Errorf("click lines %v; want one, appnexus's, costing nothing", clicks)
	}

	// Under the campaign's eCPM (after the bidder's adjustment): the
	// campaign; explain says why.
	_, a, raw = decide(`{"placements":[{"div":"d","placement":"home","bids":[{"bidder":"halved","cpm":3,"adId":"pb-3"},` +
		`{"bidder":"low","cpm":0.5,"adId":"pb-4"},{"bidder":"euro","cpm":9,"currency":"EUR","adId":"pb-5"}]}],"explain":true}`)
	if len(a.Decisions["d"]) != 1 || a.Decisions["d"][0].CampaignID != "1" {
		t.Fatalf("a bid of 1.50 after adjustment against a CPM of 2.00: %s; want the campaign", raw)
	}
	why := map[string]string{}
	for _, c := range a.Explain["d"] {
		if c.Bidder != "" {
			why[c.Bidder] = c.Status
		}
	}
	if !strings.Contains(why["halved"], "lost to campaign 1") || why["low"] != delivery.BidUnderFloor || !strings.Contains(why["euro"], "EUR is not the install's USD") {
		t.Errorf("explain's bids %q; want halved lost to campaign 1, low under the floor, euro in the wrong currency", why)
	}

	w.flush(t)
	status, body := send(h, "GET", "/api/v1/bidders/stats?placement=home")
	var stats struct {
		Rows []struct {
			Placement, Bidder       string
			Bids, Wins, Impressions int64
			WinRate, Revenue, ECPM  float64
		}
	}
	if json.Unmarshal(body, &stats); status != 200 {
		t.Fatalf("bidders' report = %d %s", status, body)
	}
	want := map[string]string{"appnexus": "1 1 1 0.003 3", "rubicon": "1 0 0 0 0", "halved": "1 0 0 0 0", "low": "1 0 0 0 0", "euro": "1 0 0 0 0"}
	report := map[string]string{}
	for _, r := range stats.Rows {
		report[r.Bidder] = fmt.Sprint(r.Bids, r.Wins, r.Impressions, r.Revenue, r.ECPM)
	}
	if !maps.Equal(report, want) {
		t.Errorf("bidders' report %s;\n got %q\nwant %q (bids wins impressions revenue eCPM)", body, report, want)
	}
	// The same by bidder in the reports by several dimensions, with the
	// placement (the bids' own dimensions), as JSON and CSV; a bidder
	// does not go with a campaign (bids are not counted by campaign).
	status, body = send(h, "GET", "/api/v1/reports?by=bidder,placement&granularity=total")
	var multi struct {
		Rows []struct {
			Dims map[string]struct{ ID, Name, Value string }
			reports.Metrics
			Spend float64
		}
	}
	if json.Unmarshal(body, &multi); status != 200 {
		t.Fatalf("report by bidder = %d %s", status, body)
	}
	byBidder := map[string]string{}
	for _, r := range multi.Rows {
		byBidder[r.Dims["bidder"].Value] = fmt.Sprint(r.Dims["placement"].Name, " ", *r.Bids, " ", *r.Wins, " ", *r.WinRate, " ", r.Impressions, " ", r.Spend)
	}
	wantMulti := map[string]string{"appnexus": "home 1 1 1 1 0.003", "rubicon": "home 1 0 0 0 0", "halved": "home 1 0 0 0 0", "low": "home 1 0 0 0 0", "euro": "home 1 0 0 0 0"}
	if !maps.Equal(byBidder, wantMulti) {
		t.Errorf("report by bidder and placement %s;\n got %q\nwant %q (placement bids wins win-rate impressions spend)", body, byBidder, wantMulti)
	}
	if status, body := send(h, "GET", "/api/v1/reports?by=bidder,placement&granularity=total&format=csv"); status != 200 ||
		!strings.Contains(string(body), ",bids,wins,win rate\n") || !strings.Contains(string(body), "appnexus,") {
		t.Errorf("report by bidder as CSV = %d %s; want the bids' columns", status, body)
	}
	if status, body := send(h, "GET", "/api/v1/reports?by=bidder,campaign"); status != 400 || !strings.Contains(string(body), `does not go with bidder`) {
		t.Errorf("report by bidder and campaign = %d %s; want 400", status, body)
	}

	// A string valid in one field (a deal's "a b") stays invalid in another
	// (each field's strings are kept apart, and checked when first seen).
	if status, _, raw := decide(`{"placements":[{"div":"d","placement":"home","bids":[{"bidder":"a","cpm":1,"adId":"é","dealId":"a b"}]}]}`); status != 200 {
		t.Fatalf("a bid with the deal \"a b\" and a non-ASCII ad id = %d %s; want 200", status, raw)
	}
	for _, bad := range []struct{ bids, field string }{
		{`[{"cpm":1,"adId":"x"}]`, "placements[0].bids[0].bidder"},
		{`[{"bidder":"a","cpm":1,"adId":"x","size":"a b"}]`, "placements[0].bids[0].size"},
		{`[{"bidder":"a","cpm":1,"adId":"x","size":"0300x250"}]`, "placements[0].bids[0].size"},
		{`[{"bidder":"a","cpm":1,"adId":"x","size":"4001x250"}]`, "placements[0].bids[0].size"},
		{`[{"bidder":"a","cpm":1,"adId":"x\u0001"}]`, "placements[0].bids[0].adId"},
		{`[{"bidder":"a","cpm":1,"adId":"x\u007f"}]`, "placements[0].bids[0].adId"},
		{`[{"bidder":"a b","cpm":1,"adId":"x"}]`, "placements[0].bids[0].bidder"},
		{`[{"bidder":"a","cpm":-1,"adId":"x"}]`, "placements[0].bids[0].cpm"},
		{`[{"bidder":"a","cpm":"1","adId":"x"}]`, "placements[0].bids[0].cpm"},
		{`[{"bidder":"a","cpm":1}]`, "placements[0].bids[0].adId"},
		{`[{"bidder":"a","cpm":1,"adId":"x","size":"300 by 250"}]`, "placements[0].bids[0].size"},
		{`[{"bidder":"a","cpm":1,"adId":"x","currency":"usd"}]`, "placements[0].bids[0].currency"},
		{`{"bidder":"a"}`, "placements[0].bids"},
	} {
		status, _, raw := decide(`{"placements":[{"div":"d","placement":"home","bids":` + bad.bids + `}]}`)
		if status != 400 || !strings.Contains(raw, `"`+bad.field+`"`) {
			t.Errorf("bids %s = %d %s; want 400 naming %s", bad.bids, status, raw, bad.field)
		}
	}
}

// TestFloors: GET /api/v1/floors tells a page each placement's floor it
// names (its Prebid.js glue offers them to Prebid's floors module), for
// any origin, cached a minute; an unknown placement is left out, and a
// request naming none or too many is refused naming the field.
func TestFloors(t *testing.T) {
	w := bidServer(t)
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/api/v1/floors?placements=home,nowhere")
	w.h(&ctx)
	var got struct {
		Currency string
		Floors   map[string]float64
	}
	if err := json.Unmarshal(ctx.Response.Body(), &got); ctx.Response.StatusCode() != 200 || err != nil ||
		got.Currency != "USD" || len(got.Floors) != 1 || got.Floors["home"] != 1 {
		t.Errorf("GET /api/v1/floors?placements=home,nowhere = %d %s; want 200, USD and home's floor 1 alone", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if h := &ctx.Response.Header; string(h.Peek("Access-Control-Allow-Origin")) != "*" || string(h.Peek("Cache-Control")) != "public, max-age=60" {
		t.Errorf("the floors' headers = %s; want any origin, cached a minute", h.Header())
	}
	for _, path := range []string{"/api/v1/floors", "/api/v1/floors?placements=" + strings.Repeat("p,", 50) + "p"} {
		if code, body := send(w.h, "GET", path); code != 400 || !strings.Contains(string(body), `"placements"`) {
			t.Errorf("GET %s = %d %s; want 400 naming placements", path, code, body)
		}
	}
}
