package web

import (
	"cmp"
	"context"
	"slices"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/reports"
)

// Accounts of advertisers and publishers (docs/api.md#accounts): a
// credential bound to advertisers or to sites. The gate lets it call only
// the routes open to it (allow(scope, kind) on routes.go's lines), each of which answers only what
// is the account's: an advertiser's campaigns, ads and reports, a
// publisher's placements and theirs. What is not the account's is "not
// found", as if it did not exist.

// Who a bound route is open to.
type boundKind uint8

const (
	anyBound        boundKind = iota // advertisers' and publishers' accounts
	advertiserBound                  // advertisers' accounts only
	publisherBound                   // publishers' accounts only
)

// allows says whether a credential bound by b may call a route open to k.
func (k boundKind) allows(b marquee.Bounds) bool {
	switch k {
	case advertiserBound:
		return len(b.Advertisers) > 0
	case publisherBound:
		return len(b.Sites) > 0
	}
	return true
}

// boundsOf is the bounds of a guarded route's principal (none: unbound).
func boundsOf(ctx *fasthttp.RequestCtx) marquee.Bounds { return principal(ctx).Bounds }

// owned is h behind check for a bound principal: check says (a not-found
// error) when what the request names is not the account's.
func owned(check func(sctx context.Context, ctx *fasthttp.RequestCtx, b marquee.Bounds) error, h storeHandler) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if b := boundsOf(ctx); b.Bound() {
			if err := check(sctx, ctx, b); err != nil {
				return err
			}
		}
		return h(sctx, ctx)
	}
}

// ownAdvertiser checks the {id} of an advertiser's route.
func ownAdvertiser(_ context.Context, ctx *fasthttp.RequestCtx, b marquee.Bounds) error {
	id, err := pathID(ctx, "advertiser")
	if err == nil && !b.HasAdvertiser(id) {
		err = marquee.Errorf(marquee.KindNotFound, "advertiser not found")
	}
	return err
}

// ownCampaign checks the {id} of a campaign's route.
func ownCampaign(store CampaignStore) func(context.Context, *fasthttp.RequestCtx, marquee.Bounds) error {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx, b marquee.Bounds) error {
		id, err := campaignID(ctx)
		if err != nil {
			return err
		}
		return campaignOf(sctx, store, id, b)
	}
}

// campaignOf says (not found) when campaign id is not one of b's
// advertisers'.
func campaignOf(sctx context.Context, store CampaignStore, id int64, b marquee.Bounds) error {
	c, err := store.Campaign(sctx, id)
	if err == nil && !b.HasAdvertiser(c.AdvertiserID) {
		err = marquee.Errorf(marquee.KindNotFound, "campaign not found")
	}
	return err
}

// ownAd checks the {id} of an ad's route: an ad of one of the account's
// campaigns.
func ownAd(ads AdStore, store CampaignStore) func(context.Context, *fasthttp.RequestCtx, marquee.Bounds) error {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx, b marquee.Bounds) error {
		id, err := adID(ctx)
		if err != nil {
			return err
		}
		a, err := ads.Ad(sctx, id)
		if err != nil {
			return err
		}
		if a.CampaignID == 0 || campaignOf(sctx, store, a.CampaignID, b) != nil {
			return marquee.Errorf(marquee.KindNotFound, "ad not found")
		}
		return nil
	}
}

// ownPlacement checks the {name} of a placement's route: one of the
// account's sites'.
func ownPlacement(store CampaignStore) func(context.Context, *fasthttp.RequestCtx, marquee.Bounds) error {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx, b marquee.Bounds) error {
		name := string(pathParam(ctx, 0))
		if marquee.CheckPlacementName(name) != "" {
			return marquee.NoPlacement(name)
		}
		pl, err := store.Placement(sctx, name)
		if err == nil && !b.HasSite(pl.Site) {
			err = marquee.NoPlacement(name)
		}
		return err
	}
}

// boundList is a list's answer for a bound principal: every item of f
// (all pages) that keep says is the account's, paged by f.
func boundList[S, T any](sctx context.Context, ctx *fasthttp.RequestCtx, store S, list func(S, context.Context, marquee.ListFilter) ([]T, int, error),
	f marquee.ListFilter, keep func(marquee.Bounds, T) bool) error {
	b := boundsOf(ctx)
	all, err := marquee.ListAll(sctx, marquee.ListFilter{State: f.State, Parent: f.Parent, Query: f.Query},
		func(c context.Context, lf marquee.ListFilter) ([]T, int, error) { return list(store, c, lf) })
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(t T) bool { return !keep(b, t) })
	writeJSON(ctx, fasthttp.StatusOK, newAdminPage(pageOf(all, f.Offset, f.Limit), len(all), f.Offset, f.Limit, false))
	return nil
}

// pageOf is the page of items at offset, of at most limit.
func pageOf[T any](items []T, offset, limit int) []T {
	offset = min(offset, len(items))
	out := items[offset : offset+min(limit, len(items)-offset)]
	if out == nil {
		out = []T{}
	}
	return out
}

// What of each list is a bound account's.
func advertiserKept(b marquee.Bounds, a marquee.Advertiser) bool { return b.HasAdvertiser(a.ID) }
func campaignKept(b marquee.Bounds, c marquee.Campaign) bool     { return b.HasAdvertiser(c.AdvertiserID) }
func placementKept(b marquee.Bounds, p marquee.Placement) bool   { return b.HasSite(p.Site) }

// boundAds answers the ad list of an advertiser's account: the ads of its
// campaigns (of f.CampaignID, when it is one of them), by id, paged by f.
func boundAds(sctx context.Context, ctx *fasthttp.RequestCtx, store AdStore, campaigns CampaignStore, f marquee.AdFilter) error {
	b := boundsOf(ctx)
	var ids []int64
	for _, adv := range b.Advertisers {
		cs, err := reports.AllCampaigns(sctx, campaigns, adv)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if f.CampaignID == 0 || f.CampaignID == c.ID {
				ids = append(ids, c.ID)
			}
		}
	}
	var all []marquee.Ad
	for _, id := range ids {
		af := f
		af.CampaignID, af.Limit = id, 1000
		for af.Offset = 0; ; af.Offset += af.Limit {
			got, _, err := store.ListAds(sctx, af)
			if err != nil {
				return err
			}
			if all = append(all, got...); len(got) < af.Limit {
				break
			}
		}
	}
	slices.SortFunc(all, func(a, b marquee.Ad) int { return cmp.Compare(a.ID, b.ID) })
	writeJSON(ctx, fasthttp.StatusOK, newAdminPage(pageOf(all, f.Offset, f.Limit), len(all), f.Offset, f.Limit, false))
	return nil
}
