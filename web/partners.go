package web

import (
	"context"

	"github.com/valyala/fasthttp"

	"marquee"
)

// PartnerStore is what the routes of demand partners need of the store.
type PartnerStore interface {
	CreateDemandPartner(ctx context.Context, p marquee.DemandPartner) (marquee.DemandPartner, error)
	DemandPartner(ctx context.Context, name string) (marquee.DemandPartner, error)
	ListDemandPartners(ctx context.Context) ([]marquee.DemandPartner, error)
	ReplaceDemandPartner(ctx context.Context, name string, p marquee.DemandPartner, keepHeaders bool) (marquee.DemandPartner, error)
	DeleteDemandPartner(ctx context.Context, name string) error
}

// MaxPartnerBody bounds a demand partner's body.
const MaxPartnerBody = 32 << 10

// partnerFields are a partner body's fields (audited: the headers' names,
// never their values).
var partnerFields = []string{"name", "endpoint", "formats", "timeoutMs", "qps", "bidAdjustment", "placements", "headers", "gzip", "test"}

// readPartner reads a partner's body, and whether it gave headers.
func readPartner(ctx *fasthttp.RequestCtx) (marquee.DemandPartner, bool, error) {
	var given bool
	p, err := readJSON(ctx, MaxPartnerBody, func(body []byte) (marquee.DemandPartner, error) {
		p, has, err := marquee.ParseDemandPartnerInput(body)
		given = has
		return p, err
	})
	return p, given, err
}

// handleCreatePartner serves POST /api/v1/demand-partners: 201 with the
// partner (its headers' names, never their values); its name is
// required, and one taken is a 409.
func handleCreatePartner(st PartnerStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		p, _, err := readPartner(ctx)
		if err != nil {
			return err
		}
		if p.Name == "" {
			return marquee.Invalid("invalid demand partner", marquee.Problems{"name": "is required: the partner's name, a bidder code"})
		}
		p, err = st.CreateDemandPartner(marquee.WithAuditFields(sctx, partnerFields), p)
		if err := wr.visible(sctx, err, "demand partner"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusCreated, p)
		return nil
	}
}

// handleListPartners serves GET /api/v1/demand-partners: {"partners":
// […]}, by name, each with its health on this instance when the
// exchange keeps one (health nil: none).
func handleListPartners(st PartnerStore, health func(name string) any) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		ps, err := st.ListDemandPartners(sctx)
		if err != nil {
			return err
		}
		type withHealth struct {
			marquee.DemandPartner
			Health any `json:"health,omitempty"`
		}
		out := make([]withHealth, len(ps))
		for i := range ps {
			out[i].DemandPartner = ps[i]
			if health != nil {
				out[i].Health = health(ps[i].Name)
			}
		}
		writeJSON(ctx, fasthttp.StatusOK, struct {
			Partners []withHealth `json:"partners"`
		}{out})
		return nil
	}
}

// partnerHealth is partner name's health on this instance (nil: none).
func (s *Server) partnerHealth(name string) any {
	if x := s.serve.Demand(); x != nil {
		if h := x.Health(name); h != nil {
			return h
		}
	}
	return nil
}

// handleGetPartner serves GET /api/v1/demand-partners/{name}.
func handleGetPartner(st PartnerStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		p, err := st.DemandPartner(sctx, string(pathParam(ctx, 0)))
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, p)
		return nil
	}
}

// handleReplacePartner serves PUT /api/v1/demand-partners/{name}: the
// partner's terms replaced (a name in the body must be the path's); a
// body without headers keeps the stored ones (they are write-only).
func handleReplacePartner(st PartnerStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		name := string(pathParam(ctx, 0))
		p, given, err := readPartner(ctx)
		if err != nil {
			return err
		}
		if p.Name != "" && p.Name != name {
			return marquee.Invalid("invalid demand partner", marquee.Problems{"name": "must be the path's name, " + name + " (a partner's name cannot change)"})
		}
		p, err = st.ReplaceDemandPartner(marquee.WithAuditFields(sctx, partnerFields), name, p, !given)
		if err := wr.visible(sctx, err, "demand partner"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, p)
		return nil
	}
}

// handleDeletePartner serves DELETE /api/v1/demand-partners/{name}: 204;
// no request goes to it after.
func handleDeletePartner(st PartnerStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		err := st.DeleteDemandPartner(sctx, string(pathParam(ctx, 0)))
		if err := wr.visible(sctx, err, "demand partner"); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}
