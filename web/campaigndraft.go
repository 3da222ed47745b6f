package web

import (
	"context"
	"encoding/json"

	"github.com/valyala/fasthttp"

	"marquee"
)

// teamFields are the fields of a campaign only the ad team sets: how it
// competes with the network's other campaigns (tier, weight, competitive
// labels, roadblock, rotation, slots of a page). An advertiser's draft
// keeps the team's (defaults at first).
var teamFields = []string{"priority", "weight", "labels", "roadblock", "rotation", "maxPerPage"}

// handleCampaignByAdvertiser serves POST /api/v1/campaigns (replace
// false) and PUT /api/v1/campaigns/{id} (its ownership checked before, by
// owned) for an advertiser's account: a draft of one of the account's
// advertisers, which it submits for approval (POST …/submit). It may not
// set teamFields (a 400 naming each): a new draft takes the defaults, a
// changed one keeps what the team set. Only a draft changes (409
// otherwise: a campaign under review or running changes through the team).
func handleCampaignByAdvertiser(r resource[int64, marquee.CampaignInput], campaigns CampaignStore, w *writer, replace bool) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, r.limit, r.parse)
		p := marquee.Problems{}
		if e := marquee.AsError(err); err == nil || e != nil && e.Kind == marquee.KindInvalid { // a body read, if not valid
			var fields map[string]json.RawMessage
			json.Unmarshal(ctx.PostBody(), &fields) // parse has refused what is not an object
			for _, f := range teamFields {
				if _, ok := fields[f]; ok {
					p[f] = "is set by the ad team: leave it out"
				}
			}
			if _, given := fields["advertiserId"]; given && in.AdvertiserID != 0 && !boundsOf(ctx).HasAdvertiser(in.AdvertiserID) {
				p["advertiserId"] = "must be one of your advertisers"
			}
		}
		if err := withProblems(err, r.what, p); err != nil {
			return err
		}
		if !replace {
			c, err := campaigns.CreateCampaign(marquee.WithAuditFields(sctx, changed(nil, &in)), in, marquee.StateDraft)
			if err := w.visible(sctx, err, "campaign"); err != nil {
				return err
			}
			writeCreated(ctx, campaignCreated, c)
			return nil
		}
		id, err := r.key(ctx)
		if err != nil {
			return err
		}
		old, err := campaigns.Campaign(sctx, id)
		if err != nil {
			return err
		}
		if old.State != marquee.StateDraft {
			return marquee.Errorf(marquee.KindConflict, "campaign is %s: its advertiser changes a draft only (the ad team rejects one under review back to draft)", old.State)
		}
		in.Priority, in.Weight, in.Labels, in.Roadblock, in.Rotation, in.MaxPerPage = old.Priority, old.Weight, old.Labels, old.Roadblock, old.Rotation, old.MaxPerPage
		c, err := campaigns.ReplaceCampaign(marquee.WithAuditFields(sctx, changed(&old.CampaignInput, &in)), id, in)
		if err := w.visible(sctx, err, "campaign"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, c)
		return nil
	}
}
