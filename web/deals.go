package web

import (
	"context"

	"github.com/valyala/fasthttp"

	"marquee"
)

// DealStore is what the routes of deals need of the store.
type DealStore interface {
	CreateDeal(ctx context.Context, d marquee.Deal) (marquee.Deal, error)
	Deal(ctx context.Context, id string) (marquee.Deal, error)
	ListDeals(ctx context.Context) ([]marquee.Deal, error)
	ReplaceDeal(ctx context.Context, id string, d marquee.Deal) (marquee.Deal, error)
	DeleteDeal(ctx context.Context, id string) error
}

// MaxDealBody bounds a deal's body.
const MaxDealBody = 8 << 10

// dealFields are a deal body's fields (audited).
var dealFields = []string{"id", "name", "bidders", "floor", "tier", "advertiserId", "startAt", "endAt"}

// handleCreateDeal serves POST /api/v1/deals: 201 with the deal; its id
// is required, and one taken is a 409.
func handleCreateDeal(st DealStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		d, err := readJSON(ctx, MaxDealBody, marquee.ParseDealInput)
		if err != nil {
			return err
		}
		if d.ID == "" {
			return marquee.Invalid("invalid deal", marquee.Problems{"id": "is required: the deal id bids name"})
		}
		d, err = st.CreateDeal(marquee.WithAuditFields(sctx, dealFields), d)
		if err := wr.visible(sctx, err, "deal"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusCreated, d)
		return nil
	}
}

// handleListDeals serves GET /api/v1/deals: {"deals": […]}, by id.
func handleListDeals(st DealStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		ds, err := st.ListDeals(sctx)
		if err != nil {
			return err
		}
		if ds == nil {
			ds = []marquee.Deal{}
		}
		writeJSON(ctx, fasthttp.StatusOK, struct {
			Deals []marquee.Deal `json:"deals"`
		}{ds})
		return nil
	}
}

// handleGetDeal serves GET /api/v1/deals/{id}.
func handleGetDeal(st DealStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		d, err := st.Deal(sctx, string(pathParam(ctx, 0)))
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, d)
		return nil
	}
}

// handleReplaceDeal serves PUT /api/v1/deals/{id}: the deal's terms
// replaced (an id in the body must be the path's).
func handleReplaceDeal(st DealStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id := string(pathParam(ctx, 0))
		d, err := readJSON(ctx, MaxDealBody, marquee.ParseDealInput)
		if err != nil {
			return err
		}
		if d.ID != "" && d.ID != id {
			return marquee.Invalid("invalid deal", marquee.Problems{"id": "must be the path's deal id, " + id + " (a deal id cannot change)"})
		}
		d, err = st.ReplaceDeal(marquee.WithAuditFields(sctx, dealFields), id, d)
		if err := wr.visible(sctx, err, "deal"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, d)
		return nil
	}
}

// handleDeleteDeal serves DELETE /api/v1/deals/{id}: 204; bids naming it
// compete in the open auction.
func handleDeleteDeal(st DealStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		err := st.DeleteDeal(sctx, string(pathParam(ctx, 0)))
		if err := wr.visible(sctx, err, "deal"); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}
