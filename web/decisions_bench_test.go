package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
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
	"marquee/tracking"
	"marquee/web"
)

// counting is what a benchmark's server counts of its decisions: the
// requests (nil: none) and the forecasts' sample of them (nil: none).
type counting struct {
	reqs    *reports.Requests
	samples *reports.Samples
	bids    *reports.Bids
}

// countingOf is mode's counting: uncounted, counted (requests), sampled
// (requests and the sample, as serve runs by default), budgeted (counted).
func countingOf(mode string) counting {
	switch mode {
	case "uncounted":
		return counting{}
	case "sampled":
		return counting{reqs: reports.NewRequests(), samples: reports.NewSamples(20)}
	case "bids":
		return counting{reqs: reports.NewRequests(), samples: reports.NewSamples(20), bids: reports.NewBids()}
	}
	return counting{reqs: reports.NewRequests()}
}

// decisionServer decides over 1,000 campaigns of 10 ads each (two
// placements), with signed tracking URLs.
func decisionServer(tb testing.TB, c counting) fasthttp.RequestHandler {
	return budgetedServer(tb, c, false)
}

// budgetedServer is decisionServer, every campaign with a daily budget
// (never reached) when budgeted.
func budgetedServer(tb testing.TB, c counting, budgeted bool) fasthttp.RequestHandler {
	ps := []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "side", Sizes: []string{"300x250"}, Types: marquee.CreativeTypes}},
		{ID: 2, PlacementInput: marquee.PlacementInput{Name: "top", Sizes: []string{"728x90"}, Types: marquee.CreativeTypes}}}
	return planServer(tb, ps, c, func(i, _ int) *marquee.Creative {
		w, h := 300, 250
		if i%2 == 1 {
			w, h = 728, 90
		}
		return &marquee.Creative{Type: marquee.CreativeHTML, Width: w, Height: h, HTML: "<b>x</b>", ClickURL: "https://a.test/?p={placement}"}
	}, budgeted)
}

// planServer decides over 1,000 campaigns of 10 ads each, ad j of
// campaign i showing creative(i, j), in placements ps; reqs (when set)
// counts the slots.
func planServer(tb testing.TB, ps []marquee.Placement, c counting, creative func(i, j int) *marquee.Creative, budgeted bool) fasthttp.RequestHandler {
	now := time.Now()
	var cs []marquee.Campaign
	var ads []*marquee.Ad
	for i := range 1000 {
		cs = append(cs, marquee.Campaign{ID: int64(i + 1), State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "c",
			StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Priority: marquee.Priorities[i%4], Weight: 1 + i%100,
			FrequencyCap: &marquee.FrequencyCap{Count: 5, Window: "24h"}, Price: &marquee.Price{Model: "cpm", Amount: 2_500_000}}})
		for j := range 10 {
			ads = append(ads, &marquee.Ad{ID: int64(i*10 + j + 1), CampaignID: int64(i + 1), StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour),
				Title: fmt.Sprintf("Video %d", i*10+j+1), Creative: creative(i, j)})
		}
	}
	if budgeted {
		for i := range cs {
			cs[i].Budget = &marquee.Budget{Daily: 1_000_000_000_000}
			cs[i].TimeZone = "America/New_York"
		}
	}
	e := delivery.New(counters.NewMemory(counters.DefaultMemory))
	e.SetCampaigns(cs, ps)
	e.PutAds(ads, nil, true)
	if budgeted {
		e.SetBudgets(delivery.NewBudgets(counters.NewMemoryMoney(10), time.Hour))
		if err := e.Budgets().Sync(context.Background(), e.Plan(), now); err != nil {
			tb.Fatal(err)
		}
	}
	signer, _ := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := web.NewServer(web.Config{}, web.Deps{Log: log, Now: time.Now, Index: index.New(time.Now), Registry: prometheus.NewRegistry(),
		Serve: service(serve.Config{Engine: e, Signer: signer, Now: time.Now}, serve.LedgerConfig{Requests: c.reqs, Samples: c.samples, Bids: c.bids})})
	return srv.Handler()
}

// BenchmarkDecisionGet measures GET /api/v1/decisions for one slot with a
// user key — parsing, the decision, three signed URLs, the JSON answer —
// without the network; counted, with its slot counted as a request.
func BenchmarkDecisionGet(b *testing.B) {
	for _, mode := range []string{"uncounted", "counted", "sampled"} {
		b.Run(mode, func(b *testing.B) {
			h := decisionServer(b, countingOf(mode))
			ctx := &fasthttp.RequestCtx{}
			ctx.Request.Header.SetMethod("GET")
			ctx.Request.Header.SetUserAgent(phoneUA)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ctx.Request.SetRequestURI(fmt.Sprintf("/api/v1/decisions?placement=side&user=u%06d&country=TW", i%100_000))
				ctx.Response.Reset()
				h(ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
		})
	}
}

// phoneUA is a phone's User-Agent (a request's device type).
const phoneUA = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"

// BenchmarkDecisionPost measures the request — POST
// /api/v1/decisions of three slots with a user key — without the network:
// JSON parsing, three decisions, nine signed URLs, the answer; counted,
// with its three slots counted as requests.
//
// budgeted: every campaign has a daily budget in a time zone, which each
// candidate campaign checks (what it spent today).
func BenchmarkDecisionPost(b *testing.B) {
	for _, mode := range []string{"uncounted", "counted", "sampled", "budgeted", "bids"} {
		b.Run(mode, func(b *testing.B) {
			h := budgetedServer(b, countingOf(mode), mode == "budgeted")
			bids := ""
			if mode == "bids" { // five header-bidding bids a slot, as marquee bench -bids 5
				bids = `,"bids":[{"bidder":"appnexus","cpm":1.2,"adId":"a1"},{"bidder":"rubicon","cpm":0.8,"adId":"a2"},{"bidder":"ix","cpm":2.5,"adId":"a3"},` +
					`{"bidder":"openx","cpm":0.4,"adId":"a4"},{"bidder":"criteo","cpm":1.9,"adId":"a5"}]`
			}
			ctx := &fasthttp.RequestCtx{}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ctx.Request.Reset()
				ctx.Request.Header.SetMethod("POST")
				ctx.Request.Header.SetUserAgent(phoneUA)
				ctx.Request.SetRequestURI("/api/v1/decisions")
				ctx.Request.Header.SetContentType("application/json")
				ctx.Request.SetBodyString(fmt.Sprintf(`{"placements":[{"div":"a","placement":"side"%[2]s},{"div":"b","placement":"top"%[2]s},{"div":"c","placement":"side"%[2]s}],"user":{"key":"u%06[1]d"},"country":"TW","platform":"ios"}`, i%100_000, bids))
				ctx.Response.Reset()
				h(ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
		})
	}
}

// BenchmarkVAST measures GET /vast for one video slot with a user key —
// parsing, the decision, one signed token, the document from its
// template — without the network.
func BenchmarkVAST(b *testing.B) {
	ps := []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "preroll", Types: []string{marquee.CreativeVideo}}}}
	h := planServer(b, ps, counting{}, func(i, j int) *marquee.Creative {
		return &marquee.Creative{Type: marquee.CreativeVideo, Width: 1280, Height: 720, MediaURL: fmt.Sprintf("https://cdn.test/v/%d-%d.mp4", i, j),
			MimeType: "video/mp4", DurationMs: 15_000, ClickURL: "https://a.test/?p={placement}"}
	}, false)
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.Header.SetMethod("GET")
	ctx.Request.Header.SetHost("ads.test")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ctx.Request.SetRequestURI(fmt.Sprintf("/vast?placement=preroll&user=u%06d&country=TW", i%100_000))
		ctx.Response.Reset()
		h(ctx)
		if ctx.Response.StatusCode() != 200 || !bytes.Contains(ctx.Response.Body(), []byte("<InLine>")) {
			b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
