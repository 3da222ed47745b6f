package web

import (
	"context"
	"slices"

	"github.com/valyala/fasthttp"

	"marquee"
)

// SiteStore is what the routes of sites need of the store.
type SiteStore interface {
	CreateSite(ctx context.Context, s marquee.Site) (marquee.Site, error)
	Site(ctx context.Context, name string) (marquee.Site, error)
	ListSites(ctx context.Context) ([]marquee.Site, error)
	ReplaceSite(ctx context.Context, name string, s marquee.Site) (marquee.Site, error)
	DeleteSite(ctx context.Context, name string) error
}

// MaxSiteBody bounds a site's body.
const MaxSiteBody = 8 << 10

var siteFields = []string{"name", "domains", "revenueShare", "sellerType", "confidential"}

// handleCreateSite serves POST /api/v1/sites: 201 with the site; a name
// taken is a 409.
func handleCreateSite(st SiteStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxSiteBody, marquee.ParseSiteInput)
		if err != nil {
			return err
		}
		s, err := st.CreateSite(marquee.WithAuditFields(sctx, siteFields), in)
		if err := w.visible(sctx, err, "site"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusCreated, s)
		return nil
	}
}

// handleListSites serves GET /api/v1/sites: {"sites": […]} by name — a
// publisher's account, its own only.
func handleListSites(st SiteStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		ss, err := st.ListSites(sctx)
		if err != nil {
			return err
		}
		if b := boundsOf(ctx); b.Bound() {
			ss = slices.DeleteFunc(ss, func(s marquee.Site) bool { return !b.HasSite(s.Name) })
		}
		if ss == nil {
			ss = []marquee.Site{}
		}
		writeJSON(ctx, fasthttp.StatusOK, struct {
			Sites []marquee.Site `json:"sites"`
		}{ss})
		return nil
	}
}

// ownSiteName is the site a /api/v1/sites/{name}/… route names, when the
// caller may see it: the team any, a publisher's account its own (else
// marquee.NoSite, as for a site that does not exist).
func ownSiteName(ctx *fasthttp.RequestCtx) (string, error) {
	name := string(pathParam(ctx, 0))
	if b := boundsOf(ctx); b.Bound() && !b.HasSite(name) {
		return name, marquee.NoSite(name)
	}
	return name, nil
}

// ownSite reads the site the route names, when the caller may see it
// (ownSiteName).
func ownSite(sctx context.Context, ctx *fasthttp.RequestCtx, st SiteStore) (marquee.Site, error) {
	name, err := ownSiteName(ctx)
	if err != nil {
		return marquee.Site{}, err
	}
	return st.Site(sctx, name)
}

// handleGetSite serves GET /api/v1/sites/{name} (a publisher's account:
// its own, else 404).
func handleGetSite(st SiteStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		s, err := ownSite(sctx, ctx, st)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, s)
		return nil
	}
}

// handleReplaceSite serves PUT /api/v1/sites/{name}: its domains and
// revenue share (the name is its placements': it cannot change).
func handleReplaceSite(st SiteStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		name := string(pathParam(ctx, 0))
		in, err := readJSON(ctx, MaxSiteBody, marquee.ParseSiteInput)
		if err != nil {
			return err
		}
		if in.Name != name {
			return marquee.Invalid("invalid site", marquee.Problems{"name": "must be the path's site name, " + name + " (its placements name it)"})
		}
		s, err := st.ReplaceSite(marquee.WithAuditFields(sctx, siteFields), name, in)
		if err := w.visible(sctx, err, "site"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, s)
		return nil
	}
}

// handleDeleteSite serves DELETE /api/v1/sites/{name}: 204.
func handleDeleteSite(st SiteStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if err := w.visible(sctx, st.DeleteSite(sctx, string(pathParam(ctx, 0))), "site"); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}
