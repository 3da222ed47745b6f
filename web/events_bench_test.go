package web_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee/collector"
	"marquee/index"
	"marquee/serve"
	"marquee/web"
)

const beacon = "/e?type=impression&ad=12345&campaign=summer-sale&placement=home-top&country=TW&platform=ios&session=8f14e45fceea167a&uid=visitor-000042"

func eventServer(tb testing.TB) (fasthttp.RequestHandler, *collector.Collector) {
	c, err := collector.New(collector.Config{Dir: tb.TempDir(), Instance: "bench", MaxPending: 256 << 20, FlushEvery: 5 * time.Millisecond}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(context.Background()) })
	srv := web.NewServer(web.Config{}, web.Deps{Now: time.Now, Index: index.New(time.Now), Serve: service(serve.Config{Now: time.Now}, serve.LedgerConfig{Sink: c}), Registry: prometheus.NewRegistry()})
	return srv.Handler(), c
}

func beaconCtx() *fasthttp.RequestCtx {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.SetRequestURI(beacon)
	ctx.Request.Header.SetMethod("GET")
	ctx.Request.Header.SetUserAgent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15")
	return ctx
}

// BenchmarkEventGet measures GET /e with a ~100-byte query string — routing,
// parsing, validation, encoding, and the append into the collector's shard
// (compression runs in the shard's writer goroutine) — without the network.
func BenchmarkEventGet(b *testing.B) {
	h, _ := eventServer(b)
	benchServe(b, h, beaconCtx(), fasthttp.StatusNoContent)
}

// A beacon allocates nothing in the default privacy mode (balanced): its
// address truncated, its uid made a pseudonym.
func TestEventGetAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	h, _ := eventServer(t)
	ctx := beaconCtx()
	h(ctx)
	if n := testing.AllocsPerRun(1000, func() { ctx.Response.Reset(); h(ctx) }); n != 0 {
		t.Errorf("GET /e allocates %v times per request; want 0", n)
	}
}
