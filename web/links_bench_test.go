package web_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/cache"
	"marquee/clicks"
	"marquee/collector"
	"marquee/fixture"
	"marquee/index"
	"marquee/serve"
	"marquee/store/sqlite"
	"marquee/web"
)

// synced stands in for the feed: the benchmark changes nothing.
type synced struct{}

func (synced) Sync(context.Context) error { return nil }

// redirectServer serves one link, "promo", through the link cache, the
// click counter and the event collector.
func redirectServer(tb testing.TB) fasthttp.RequestHandler {
	return redirectServerOf(tb, marquee.LinkInput{Code: "promo", URL: "https://example.com/p/123456", Redirect: 302})
}

// redirectServerOf serves the link in (code "promo").
func redirectServerOf(tb testing.TB, in marquee.LinkInput) fasthttp.RequestHandler {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "m.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if _, err := st.CreateLink(ctx, in); err != nil {
		tb.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := collector.New(collector.Config{Dir: tb.TempDir(), Instance: "bench", MaxPending: 256 << 20, FlushEvery: 5 * time.Millisecond}, log, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(context.Background()) })
	srv := web.NewServer(web.Config{}, web.Deps{Log: log, Now: time.Now, Index: index.New(time.Now), Serve: service(serve.Config{Now: time.Now}, serve.LedgerConfig{Sink: c}),
		Store: st, Caches: web.Caches{Links: web.NewLinkCache(st, cache.Capacity{Entries: 1000}, nil)},
		Clicks: clicks.New(st, synced{}, log, nil), Registry: prometheus.NewRegistry()})
	return srv.Handler()
}

func redirectCtx() *fasthttp.RequestCtx {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.SetRequestURI("/r/promo")
	ctx.Request.Header.SetMethod("GET")
	ctx.Request.Header.SetUserAgent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15")
	ctx.Request.Header.SetReferer("https://news.example/article")
	return ctx
}

// BenchmarkRedirect measures a cached GET /r/{code} — routing, the cache
// hit, the click count, the click event into the collector's shard — without
// the network.
func BenchmarkRedirect(b *testing.B) {
	benchServe(b, redirectServer(b), redirectCtx(), fasthttp.StatusFound)
}

// BenchmarkRedirectRules is BenchmarkRedirect through a link with 5 rules
// and 2 weighted destinations (fixture.RuledLink), which the request (an
// iPhone's User-Agent would match the first; this one is a desktop's)
// meets none of.
func BenchmarkRedirectRules(b *testing.B) {
	in := fixture.RuledLink(0)
	in.Code = "promo"
	ctx := redirectCtx()
	ctx.Request.Header.SetUserAgent("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	benchServe(b, redirectServerOf(b, in), ctx, fasthttp.StatusFound)
}

func TestRedirectAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	h := redirectServer(t)
	ctx := redirectCtx()
	h(ctx) // the miss that caches the link
	if n := testing.AllocsPerRun(1000, func() { ctx.Response.Reset(); h(ctx) }); n > 1 {
		t.Errorf("a cached GET /r/{code} allocates %v times; want at most 1 (the code as the cache's string key)", n)
	}
}
