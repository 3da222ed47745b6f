package web

import (
	"context"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/reports"
	"marquee/supply"
)

// sellersEvery is how long an instance answers the sellers.json it built
// before it reads the sites again: the route is public, and a crawler's
// requests must not each read every site.
const sellersEvery = time.Minute

// handleSellersJSON serves GET /sellers.json (public): the network's
// sellers.json, an entry for every site (docs/api.md#sellers-and-adstxt);
// 404 while the network has no identity (-seller-domain).
func handleSellersJSON(st SiteStore, n supply.Network, now func() time.Time) storeHandler {
	var mu sync.Mutex
	var body []byte
	var built time.Time
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if !n.Known() {
			return marquee.Errorf(marquee.KindNotFound, "this network publishes no sellers.json: its operator has not set -seller-domain")
		}
		mu.Lock()
		defer mu.Unlock()
		if body == nil || now().Sub(built) >= sellersEvery {
			sites, err := st.ListSites(sctx)
			if err != nil {
				return err
			}
			body, built = n.SellersJSON(sites).Marshal(), now()
		}
		ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
		ctx.SetContentType("application/json")
		ctx.SetBody(body)
		return nil
	}
}

// handleAdsTxtLine serves GET /api/v1/sites/{name}/ads.txt (the team, and
// the site's publisher): what its publisher adds to the ads.txt of each
// of its domains (supply.Network.AdsTxt), as text/plain; 409 while the network has no
// identity (-seller-domain).
func handleAdsTxtLine(st SiteStore, n supply.Network) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		s, err := ownSite(sctx, ctx, st)
		if err != nil {
			return err
		}
		if !n.Known() {
			return marquee.Errorf(marquee.KindConflict, "this network has no ads.txt line to give: its operator has not set -seller-domain")
		}
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString(n.AdsTxt(s))
		return nil
	}
}

// AdsTxtChecker checks a site's ads.txt at once (supply.Watcher).
type AdsTxtChecker interface {
	CheckNow(ctx context.Context, name string) (marquee.Site, error)
}

// handleCheckAdsTxt serves POST /api/v1/sites/{name}/ads-txt/check (the
// team, and the site's publisher): its domains' ads.txt checked now,
// answered with the site and its check; 429 with Retry-After within a
// minute of its last check; 409 while the network has no identity.
func handleCheckAdsTxt(c AdsTxtChecker, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		name, err := ownSiteName(ctx)
		if err != nil {
			return err
		}
		if c == nil {
			return marquee.Errorf(marquee.KindConflict, "this network checks no ads.txt: its operator has not set -seller-domain")
		}
		s, err := c.CheckNow(sctx, name)
		if err := w.visible(sctx, err, "ads.txt check"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, s)
		return nil
	}
}

// placementLister lists placements (the store).
type placementLister interface {
	ListPlacements(ctx context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error)
}

// handleSiteQuality serves GET /api/v1/sites/{name}/quality?from=&to=
// (reports:read; the site's publisher, its own): its placements'
// decisions' requests, people's and invalid by reason, and the invalid
// rate (reports.Reporter.Qualities); from and to as reports read them (default the
// last 7 days).
func handleSiteQuality(st SiteStore, pls placementLister, rep *reports.Reporter) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		p := marquee.Problems{}
		from, to, _, _ := reports.ParamWindow(ctx.QueryArgs(), rep, p)
		s, err := ownSite(sctx, ctx, st)
		if err != nil {
			return err
		}
		if err := marquee.Invalid("invalid quality request", p); err != nil {
			return err
		}
		name := s.Name
		all, err := marquee.ListAll(sctx, marquee.ListFilter{}, pls.ListPlacements)
		if err != nil {
			return err
		}
		qs, err := rep.Qualities(sctx, map[string][]int64{name: marquee.SitePlacements(all)[name]}, from, to)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, qs[name])
		return nil
	}
}
