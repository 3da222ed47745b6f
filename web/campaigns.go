package web

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/delivery"
)

// CampaignStore is what the routes of advertisers, campaigns and
// placements need of a store.
type CampaignStore interface {
	CreateAdvertiser(ctx context.Context, in marquee.AdvertiserInput) (marquee.Advertiser, error)
	Advertiser(ctx context.Context, id int64) (marquee.Advertiser, error)
	ReplaceAdvertiser(ctx context.Context, id int64, in marquee.AdvertiserInput) (marquee.Advertiser, error)
	ArchiveAdvertiser(ctx context.Context, id int64) error
	SetConversionNonce(ctx context.Context, id int64, nonce string) error
	ListAdvertisers(ctx context.Context, f marquee.ListFilter) ([]marquee.Advertiser, int, error)
	CreateCampaign(ctx context.Context, in marquee.CampaignInput, state string) (marquee.Campaign, error)
	Campaign(ctx context.Context, id int64) (marquee.Campaign, error)
	ReplaceCampaign(ctx context.Context, id int64, in marquee.CampaignInput) (marquee.Campaign, error)
	MoveCampaign(ctx context.Context, id int64, action, reason string) (marquee.Campaign, error)
	ListCampaigns(ctx context.Context, f marquee.ListFilter) ([]marquee.Campaign, int, error)
	CreatePlacement(ctx context.Context, in marquee.PlacementInput) (marquee.Placement, error)
	Placement(ctx context.Context, name string) (marquee.Placement, error)
	ReplacePlacement(ctx context.Context, name string, in marquee.PlacementInput) (marquee.Placement, error)
	DeletePlacement(ctx context.Context, name string) error
	ListPlacements(ctx context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error)
}

const (
	advertiserPrefix = "/api/v1/advertisers/"
	campaignPrefix   = "/api/v1/campaigns/"
	placementPrefix  = "/api/v1/placements/"
	// MaxCampaignBody bounds the bodies of advertisers, campaigns and
	// placements.
	MaxCampaignBody = 16 << 10
)

var (
	advertiserResource = resource[int64, marquee.AdvertiserInput]{"advertiser",
		func(ctx *fasthttp.RequestCtx) (int64, error) { return pathID(ctx, "advertiser") },
		MaxCampaignBody, marquee.ParseAdvertiserInput}
	campaignResource  = resource[int64, marquee.CampaignInput]{"campaign", campaignID, MaxCampaignBody, marquee.ParseCampaignInput}
	placementResource = resource[string, marquee.PlacementInput]{"placement", placementName, MaxCampaignBody,
		func(b []byte) (marquee.PlacementInput, error) { return marquee.ParsePlacementInput(b) }}
)

// campaignID reads the {id} of /api/v1/campaigns/{id}[/pause|/resume|…].
func campaignID(ctx *fasthttp.RequestCtx) (int64, error) {
	return pathID(ctx, "campaign")
}

// placementName reads the {name} of /api/v1/placements/{name}.
func placementName(ctx *fasthttp.RequestCtx) (string, error) {
	seg := string(pathParam(ctx, 0))
	if marquee.CheckPlacementName(seg) != "" {
		return "", marquee.NoPlacement(seg)
	}
	return seg, nil
}

// Answers of creates: the entity, and where to read it.
func advertiserCreated(a marquee.Advertiser) (string, any) {
	return advertiserPrefix + strconv.FormatInt(a.ID, 10), a
}
func campaignCreated(c marquee.Campaign) (string, any) {
	return campaignPrefix + strconv.FormatInt(c.ID, 10), c
}
func placementCreated(p marquee.Placement) (string, any) { return placementPrefix + p.Name, p }

// Priors of replaces: what the entity is now, for the audit log.
func advertiserInput(st CampaignStore, ctx context.Context, id int64) (marquee.AdvertiserInput, error) {
	a, err := st.Advertiser(ctx, id)
	return a.Input(), err
}
func campaignInput(st CampaignStore, ctx context.Context, id int64) (marquee.CampaignInput, error) {
	c, err := st.Campaign(ctx, id)
	return c.CampaignInput, err
}
func placementInput(st CampaignStore, ctx context.Context, name string) (marquee.PlacementInput, error) {
	p, err := st.Placement(ctx, name)
	return p.PlacementInput, err
}

// handleGet serves GET of one entity by its key.
func handleGet[S, K, In, Out any](r resource[K, In], store S, get func(S, context.Context, K) (Out, error)) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		k, err := r.key(ctx)
		if err != nil {
			return err
		}
		v, err := get(store, sctx, k)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, v)
		return nil
	}
}

// listFilter reads a list's query: q (a name prefix), state (one of
// states, when given), the parent (advertiserId, for campaigns) and the
// page.
func listFilter(args *fasthttp.Args, states []string, parent bool) (marquee.ListFilter, error) {
	p := marquee.Problems{}
	var f marquee.ListFilter
	f.Query = string(args.Peek("q"))
	if n := utf8.RuneCountInString(f.Query); n > marquee.MaxNameLen || !utf8.ValidString(f.Query) {
		p["q"] = fmt.Sprintf("must be valid UTF-8 of at most %d characters", marquee.MaxNameLen)
	}
	if s, ok := param(args, "state"); ok {
		if f.State = string(s); states == nil || !slices.Contains(states, f.State) {
			p["state"] = "must be one of " + strings.Join(states, ", ")
		}
	}
	if parent {
		if s, ok := param(args, "advertiserId"); ok {
			id, err := strconv.ParseInt(string(s), 10, 64)
			if err != nil || id < 1 {
				p["advertiserId"] = "must be an advertiser's id"
			}
			f.Parent = id
		}
	}
	f.Offset, f.Limit = pageArgs(args, p)
	return f, marquee.Invalid("invalid query", p)
}

// handleList serves GET of a list of advertisers, campaigns or
// placements: {"items","total","offset","limit"}; to a bound account,
// those keep says are its own.
func handleList[S, T any](store S, list func(S, context.Context, marquee.ListFilter) ([]T, int, error), states []string, parent bool,
	keep func(marquee.Bounds, T) bool) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		f, err := listFilter(ctx.QueryArgs(), states, parent)
		if err != nil {
			return err
		}
		if boundsOf(ctx).Bound() {
			return boundList(sctx, ctx, store, list, f, keep)
		}
		items, total, err := list(store, sctx, f)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, newAdminPage(items, total, f.Offset, f.Limit, false))
		return nil
	}
}

// handleListAll serves a list that is never paged (keys, users,
// webhooks): 200 with {name: [every item]}.
func handleListAll[S, T any](name string, store S, list func(S, context.Context) ([]T, error)) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		items, err := list(store, sctx)
		if err != nil {
			return err
		}
		if items == nil {
			items = []T{}
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{name: items})
		return nil
	}
}

// createDraft is POST /api/v1/campaigns: a new campaign is a draft, and
// serves once approved.
func createDraft(st CampaignStore, ctx context.Context, in marquee.CampaignInput) (marquee.Campaign, error) {
	return st.CreateCampaign(ctx, in, marquee.StateDraft)
}

// handleMove serves POST /api/v1/campaigns/{id}/ACTION (submit,
// approve, reject, pause, resume) and POST /api/v1/ad/{id}/ACTION
// (approve, reject, pause, resume) by move, a method expression of the
// store (CampaignStore.MoveCampaign), of what key reads from the path: 200 with the entity once the change is visible
// here; 409 when its state does not allow the action. A rejection's body
// says why: {"reason": "…"}.
func handleMove[S, T any](what string, key func(*fasthttp.RequestCtx) (int64, error), store S, move func(S, context.Context, int64, string, string) (T, error),
	action string, w *writer) storeHandler {
	fields := []string{"state"}
	if action != marquee.ActionPause && action != marquee.ActionResume {
		fields = append(fields, "review")
	}
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := key(ctx)
		if err != nil {
			return err
		}
		var reason string
		if action == marquee.ActionReject {
			if reason, err = readJSON(ctx, MaxCampaignBody, marquee.ParseReason); err != nil {
				return err
			}
		}
		v, err := move(store, marquee.WithAuditFields(sctx, fields), id, action, reason)
		if err := w.visible(sctx, err, what); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, v)
		return nil
	}
}

// archiveCampaign is DELETE /api/v1/campaigns/{id}: the campaign is
// archived, not deleted (its ads and reports stay).
func archiveCampaign(st CampaignStore, ctx context.Context, id int64) error {
	_, err := st.MoveCampaign(marquee.WithAuditFields(ctx, []string{"state"}), id, marquee.ActionArchive, "")
	return err
}

// handleCampaignDelivery serves GET /api/v1/campaigns/{id}/delivery: the
// campaign's delivery as this instance sees it (delivery.Delivery) — its
// decisions and the caps they filled, and pacing's view of every
// instance's delivery.
func handleCampaignDelivery(store CampaignStore, e *delivery.Engine, now func() time.Time) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := campaignID(ctx)
		if err != nil {
			return err
		}
		if _, err := store.Campaign(sctx, id); err != nil {
			return err
		}
		d, _ := e.Delivery(id, now())
		writeJSON(ctx, fasthttp.StatusOK, struct {
			CampaignID int64 `json:"campaignId,string"`
			delivery.Delivery
		}{id, d})
		return nil
	}
}
