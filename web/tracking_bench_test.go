package web_test

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/attribution"
	"marquee/counters"
	"marquee/delivery"
	"marquee/index"
	"marquee/serve"
	"marquee/tracking"
	"marquee/web"
)

// discard is an event sink that keeps nothing.
type discard struct{}

func (discard) Append(uint64, []byte, int) error { return nil }
func (discard) AppendID(dst []byte) []byte       { return append(dst, "id"...) }

// BenchmarkTrackingImpression measures GET /t/i/{token}, an impression's
// pixel with a user key, each fired once: checking the token, marking the
// decision counted, writing the line (-benchtime 500000x at most: each
// pixel is a new decision's) — and, with money, its cost added
// to the campaign's budgets (a CPM campaign with a daily budget) and a
// touch kept for post-view attribution.
func BenchmarkTrackingImpression(b *testing.B) {
	for _, money := range []bool{false, true} {
		b.Run(map[bool]string{false: "no money", true: "money"}[money], func(b *testing.B) {
			now := time.Now()
			ps := []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "side", Types: marquee.CreativeTypes}}}
			c := marquee.Campaign{ID: 1, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "c",
				StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Priority: marquee.PriorityStandard, Weight: 1,
				Price: &marquee.Price{Model: "cpm", Amount: 2_000_000}}}
			if money {
				c.Budget = &marquee.Budget{Daily: marquee.MaxAmount}
			}
			e := delivery.New(counters.NewMemory(counters.DefaultMemory))
			e.SetCampaigns([]marquee.Campaign{c}, ps)
			e.PutAds([]*marquee.Ad{{ID: 1, CampaignID: 1, StartAt: c.StartAt, EndAt: c.EndAt, Title: "a",
				Creative: &marquee.Creative{Type: marquee.CreativeNative, Title: "t", ClickURL: "https://a.test/"}}}, nil, true)
			var touches *attribution.Recorder
			if money {
				m := counters.NewMemoryMoney(100_000)
				e.SetBudgets(delivery.NewBudgets(m, time.Hour))
				e.Budgets().Sync(context.Background(), e.Plan(), now)
				touches = attribution.NewRecorder(m)
			}
			signer, _ := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
			h := web.NewServer(web.Config{}, web.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now, Index: index.New(time.Now),
				Serve:    service(serve.Config{Engine: e, Signer: signer, Now: time.Now, Touches: touches}, serve.LedgerConfig{Sink: discard{}}),
				Registry: prometheus.NewRegistry()}).Handler()
			// Tokens as decisions sign them, each a new decision and user.
			const n = 600_000
			paths := make([]string, n)
			for i := range paths {
				p := tracking.Payload{Ad: 1, Campaign: 1, Placement: "side", UserHash: uint64(i + 1), PriceMicros: 2_000_000, Issued: now, Expires: now.Add(time.Hour)}
				binary.LittleEndian.PutUint64(p.Decision[:], uint64(i+1))
				paths[i] = string(tracking.AppendPath(nil, tracking.Impression, signer.Append(nil, &p)))
			}
			ctx := &fasthttp.RequestCtx{}
			ctx.Request.Header.SetMethod("GET")
			ctx.Request.Header.SetUserAgent(phoneUA)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i == n {
					b.Fatalf("more than %d pixels: run with -benchtime 500000x or fewer", n)
				}
				ctx.Request.SetRequestURI(paths[i])
				ctx.Response.Reset()
				h(ctx)
				if s := ctx.Response.StatusCode(); s != 204 {
					b.Fatalf("status %d: %s", s, ctx.Response.Body())
				}
				if money && i%1000 == 999 {
					touches.Flush(context.Background())
				}
			}
		})
	}
}
