package web

import (
	"context"

	"github.com/valyala/fasthttp"

	"marquee"
)

// The approval of ads (docs/api.md#approval): an advertiser's account
// writes the creatives of its own campaigns, which wait for approval;
// whoever may approve campaigns approves or rejects them.

// byBounds serves a bound account's request with bound, and anyone
// else's with team.
func byBounds(team, bound storeHandler) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if boundsOf(ctx).Bound() {
			return bound(sctx, ctx)
		}
		return team(sctx, ctx)
	}
}

// handleAdByAdvertiser serves POST /api/v1/ad (replace false) and PUT
// /api/v1/ad/{id} (its ownership checked before, by owned) for an
// advertiser's account: the ad is of one of the account's campaigns
// (campaignId, a 400 naming it otherwise), not a trusted tag (only the ad
// team vouches for one), and is stored pending approval, as it is again
// after the account changes it.
func handleAdByAdvertiser(r resource[int64, marquee.AdInput], ads AdStore, campaigns CampaignStore, w *writer, replace bool) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, r.limit, r.parse)
		if err != nil {
			return err
		}
		if in.CampaignID == 0 || campaignOf(sctx, campaigns, in.CampaignID, boundsOf(ctx)) != nil {
			return marquee.Invalid("invalid ad", marquee.Problems{"campaignId": "must be one of your campaigns: an advertiser's ad waits in one for approval"})
		}
		if in.Creative != nil && in.Creative.Trusted {
			// A trusted tag runs in the publisher's page: only the ad team
			// may vouch for one.
			return marquee.Invalid("invalid ad", marquee.Problems{"creative.trusted": "only the ad team marks a tag trusted: leave it out"})
		}
		if !replace {
			a, err := ads.CreateAdAs(marquee.WithAuditFields(sctx, changed(nil, &in)), in, marquee.StatePending)
			if err := w.visible(sctx, err, "ad"); err != nil {
				return err
			}
			writeCreated(ctx, adCreated, a)
			return nil
		}
		id, err := r.key(ctx)
		if err != nil {
			return err
		}
		old, err := adInput(ads, sctx, id)
		if err != nil {
			return err
		}
		a, err := ads.ReplaceAdAs(marquee.WithAuditFields(sctx, changed(&old, &in)), id, in, marquee.StatePending)
		if err := w.visible(sctx, err, "ad"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, a)
		return nil
	}
}
