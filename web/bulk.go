package web

import (
	"context"
	"strconv"

	"github.com/valyala/fasthttp"

	"marquee"
)

// Bulk work on campaigns (docs/api.md#bulk-work): one action or one
// targeting for many, and a campaign cloned with its ads.

// bulkResult is what became of one campaign of a bulk change: the
// campaign, or the error (its status and message) that left it as it was.
type bulkResult struct {
	ID       int64             `json:"id,string"`
	Status   int               `json:"status"`
	Campaign *marquee.Campaign `json:"campaign,omitempty"`
	Error    string            `json:"error,omitempty"`
	Problems marquee.Problems  `json:"problems,omitempty"`
}

// handleBulkCampaigns serves POST /api/v1/campaigns/bulk: an action of
// marquee.BulkActions or a targeting, on each campaign named, each its own
// change (audited, checked as one at a time would be: the action's scope,
// the state it moves from, the targeting's rules by check). 200 with
// {"results": [...]} in the order named, each with its own status; the
// changes are visible here once it answers.
func handleBulkCampaigns(store CampaignStore, check func(*marquee.CampaignInput) marquee.Problems, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxCampaignBody, marquee.ParseBulkInput)
		if err != nil {
			return err
		}
		need := map[string]marquee.Scope{marquee.ActionSubmit: marquee.ScopeCampaignsSubmit, marquee.ActionApprove: marquee.ScopeCampaignsApprove}[in.Action]
		if need != "" && !principal(ctx).Scopes.Has(need) {
			return &marquee.Error{Kind: marquee.KindForbidden, Message: "forbidden", Missing: need}
		}
		out := make([]bulkResult, 0, len(in.IDs))
		for _, id := range in.IDs {
			c, err := bulkOne(sctx, store, check, in, id)
			res := bulkResult{ID: id, Status: fasthttp.StatusOK, Campaign: &c}
			if err != nil {
				e := marquee.AsError(err)
				if e == nil || statusOf[e.Kind] >= 500 {
					return err // the store failed: stop (the changes before stand)
				}
				res.Status, res.Error, res.Problems, res.Campaign = statusOf[e.Kind], e.Message, e.Problems, nil
			}
			out = append(out, res)
		}
		_ = w.visible(sctx, nil, "campaigns")
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"results": out})
		return nil
	}
}

// bulkOne makes in's change to campaign id.
func bulkOne(sctx context.Context, store CampaignStore, check func(*marquee.CampaignInput) marquee.Problems, in marquee.BulkInput, id int64) (marquee.Campaign, error) {
	if in.Action != "" {
		fields := []string{"state"}
		if in.Action == marquee.ActionSubmit || in.Action == marquee.ActionApprove {
			fields = append(fields, "review")
		}
		return store.MoveCampaign(withAction(marquee.WithAuditFields(sctx, fields), in.Action), id, in.Action, "")
	}
	c, err := store.Campaign(sctx, id)
	if err != nil {
		return c, err
	}
	ci := c.CampaignInput
	ci.Targeting = in.Targeting
	if p := check(&ci); len(p) > 0 {
		return c, marquee.Invalid("invalid campaign", p)
	}
	return store.ReplaceCampaign(withAction(marquee.WithAuditFields(sctx, []string{"targeting"}), "replace"), id, ci)
}

// withAction sets the action of the audit sctx carries.
func withAction(sctx context.Context, action string) context.Context {
	a, ok := marquee.AuditFrom(sctx)
	if !ok {
		return sctx
	}
	a.Action = action
	return marquee.WithAudit(sctx, a)
}

// handleCloneCampaign serves POST /api/v1/campaigns/{id}/clone: a new
// draft campaign with the original's settings (and a name of the body's,
// or the original's with " (copy)") and a copy of each of its ads; 201
// with the new campaign and the ids of its ads.
func handleCloneCampaign(store CampaignStore, ads AdStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := campaignID(ctx)
		if err != nil {
			return err
		}
		name, err := readJSON(ctx, MaxCampaignBody, marquee.ParseCloneName)
		if err != nil {
			return err
		}
		orig, err := store.Campaign(sctx, id)
		if err != nil {
			return err
		}
		in := orig.CampaignInput
		if in.Name = name; name == "" {
			in.Name = marquee.CopyName(orig.Name)
		}
		c, err := store.CreateCampaign(marquee.WithAuditFields(sctx, changed(nil, &in)), in, marquee.StateDraft)
		if err != nil {
			return err
		}
		var made []string
		for f := (marquee.AdFilter{CampaignID: id, State: marquee.AdsAll, Limit: 1000}); ; f.Offset += f.Limit {
			page, _, err := ads.ListAds(sctx, f)
			if err != nil {
				return err
			}
			for _, a := range page {
				ai := a.Input()
				ai.CampaignID = c.ID
				na, err := ads.CreateAd(withAction(marquee.WithAuditFields(sctx, changed(nil, &ai)), "create"), ai)
				if err != nil {
					return err
				}
				made = append(made, strconv.FormatInt(na.ID, 10))
			}
			if len(page) < f.Limit {
				break
			}
		}
		_ = w.visible(sctx, nil, "campaign")
		ctx.Response.Header.Set(fasthttp.HeaderLocation, campaignPrefix+strconv.FormatInt(c.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, map[string]any{"campaign": c, "ads": made})
		return nil
	}
}
