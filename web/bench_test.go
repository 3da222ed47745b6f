package web_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/index"
	"marquee/web"
)

// BenchmarkListAds measures the whole GET /api/v1/ad handler — routing,
// parameter parsing, the index query and metrics — without the network,
// over the query mix of scripts/ads.lua on 1,000 ads.
func BenchmarkListAds(b *testing.B) {
	now := time.Now()
	ix := index.New(func() time.Time { return now })
	r := rand.New(rand.NewPCG(1, 1))
	var ads []*marquee.Ad
	for id := int64(1); id <= 1000; id++ {
		a := &marquee.Ad{ID: id, Title: fmt.Sprintf("AD %d", id), StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Duration(1+r.IntN(1000)) * time.Hour)}
		if r.IntN(2) == 0 {
			a.Conditions = []marquee.Condition{{AgeStart: 20, AgeEnd: 40, Country: []string{"TW", "JP"}, Platform: []string{"ios"}}}
		}
		ads = append(ads, a)
	}
	ix.Put(ads...)
	srv := web.NewServer(web.Config{}, web.Deps{Now: func() time.Time { return now }, Index: ix, Registry: prometheus.NewRegistry()})
	h := srv.Handler()
	paths := make([]string, 1024)
	for i := range paths {
		p := fmt.Sprintf("/api/v1/ad?offset=%d&limit=%d", r.IntN(100), 1+r.IntN(100))
		if r.IntN(2) == 0 {
			p += fmt.Sprintf("&age=%d", 1+r.IntN(100))
		}
		if r.IntN(2) == 0 {
			p += "&gender=F"
		}
		if r.IntN(2) == 0 {
			p += "&country=TW"
		}
		if r.IntN(2) == 0 {
			p += "&platform=ios"
		}
		paths[i] = p
	}
	reqs := make([]fasthttp.RequestCtx, len(paths))
	for i, p := range paths {
		reqs[i].Request.SetRequestURI(p)
		reqs[i].Request.Header.SetMethod("GET")
	}
	if h(&reqs[0]); len(reqs[0].Response.Body()) < 20 {
		b.Fatalf("%s answered %s; the benchmark would measure nothing", paths[0], reqs[0].Response.Body())
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ctx := &reqs[i&1023]
		ctx.Response.Reset()
		ctx.Request.URI().QueryArgs() // parsed once, as fasthttp would per request
		h(ctx)
		i++
	}
}

// benchServe serves ctx with h for the benchmark's loop, and checks the
// last answer's status, so that a benchmark cannot measure an error page.
func benchServe(b *testing.B, h fasthttp.RequestHandler, ctx *fasthttp.RequestCtx, status int) {
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		h(ctx)
	}
	if got := ctx.Response.StatusCode(); got != status {
		b.Fatalf("status %d; want %d", got, status)
	}
}
