package web

import (
	"context"
	"strconv"

	"github.com/valyala/fasthttp"

	"marquee"
)

// WebhookStore is what the webhook routes need of the store.
type WebhookStore interface {
	CreateWebhook(ctx context.Context, in marquee.WebhookInput, nonce string) (marquee.Webhook, error)
	Webhook(ctx context.Context, id int64) (marquee.Webhook, error)
	Webhooks(ctx context.Context) ([]marquee.Webhook, error)
	SetWebhookState(ctx context.Context, id int64, state, reason string) (marquee.Webhook, error)
	DeleteWebhook(ctx context.Context, id int64) error
	WebhookDeliveries(ctx context.Context, id int64, limit int) ([]marquee.WebhookDelivery, error)
}

// Webhooks is what the webhook routes need of the deliverer (package
// webhooks): a new secret's nonce, the secret of a nonce, and a test
// delivery.
type Webhooks interface {
	NewNonce() string
	Secret(nonce string) string
	Test(ctx context.Context, id int64) (marquee.WebhookDelivery, error)
}

const maxWebhookBody = 16 << 10

// webhooksOn wraps a webhook route: without a store and a deliverer (a
// server built without them) the routes answer 404.
func webhooksOn(st WebhookStore, hooks Webhooks, h storeHandler) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if st == nil || hooks == nil {
			return marquee.Errorf(marquee.KindNotFound, "webhooks are not configured on this server")
		}
		return h(sctx, ctx)
	}
}

// webhookCreated is a created webhook and its signing secret, shown only
// in this answer.
type webhookCreated struct {
	marquee.Webhook
	Secret string `json:"secret"`
}

// handleCreateWebhook serves POST /api/v1/webhooks (audited: the route
// gives sctx the request's audit). allowHTTP lets a URL be plain http
// (-webhooks-allow-http).
func handleCreateWebhook(st WebhookStore, hooks Webhooks, allowHTTP bool, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, maxWebhookBody, func(b []byte) (marquee.WebhookInput, error) { return marquee.ParseWebhookInput(b, allowHTTP) })
		if err != nil {
			return err
		}
		nonce := hooks.NewNonce()
		w, err := st.CreateWebhook(marquee.WithAuditFields(sctx, []string{"url", "events", "link", "adId", "campaignId"}), in, nonce)
		if err := wr.visible(sctx, err, "webhook"); err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/webhooks/"+strconv.FormatInt(w.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, webhookCreated{Webhook: w, Secret: hooks.Secret(nonce)})
		return nil
	}
}

// webhookResource is what the generic get and delete need of a webhook:
// its name and its id's place in the path (it is created by
// handleCreateWebhook, never replaced).
var webhookResource = resource[int64, marquee.WebhookInput]{what: "webhook", key: webhookID}

// webhookID reads the {id} of /api/v1/webhooks/{id}[/test|/enable|…].
func webhookID(ctx *fasthttp.RequestCtx) (int64, error) {
	return pathID(ctx, "webhook")
}

// handleWebhookState serves POST /api/v1/webhooks/{id}/enable and
// /disable: a disabled webhook delivers nothing until enabled again
// (audited as state by the route).
func handleWebhookState(st WebhookStore, state string, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := webhookID(ctx)
		if err != nil {
			return err
		}
		reason := ""
		if state == marquee.WebhookDisabled {
			reason = "disabled by " + principal(ctx).Actor
		}
		w, err := st.SetWebhookState(marquee.WithAuditFields(sctx, []string{"state"}), id, state, reason)
		if err := wr.visible(sctx, err, "webhook"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, w)
		return nil
	}
}

// handleTestWebhook serves POST /api/v1/webhooks/{id}/test: one test
// event delivered now, and how it went.
func handleTestWebhook(hooks Webhooks) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := webhookID(ctx)
		if err != nil {
			return err
		}
		d, err := hooks.Test(sctx, id)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, d)
		return nil
	}
}

// handleWebhookDeliveries serves GET /api/v1/webhooks/{id}/deliveries:
// the last attempts (limit, 1–500, default 50), newest first.
func handleWebhookDeliveries(st WebhookStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := webhookID(ctx)
		if err != nil {
			return err
		}
		limit := 50
		if v, ok := param(ctx.QueryArgs(), "limit"); ok {
			if limit, err = strconv.Atoi(string(v)); err != nil || limit < 1 || limit > 500 {
				return marquee.Invalid("invalid query", marquee.Problems{"limit": "must be an integer from 1 to 500"})
			}
		}
		if _, err := st.Webhook(sctx, id); err != nil {
			return err
		}
		ds, err := st.WebhookDeliveries(sctx, id, limit)
		if err != nil {
			return err
		}
		if ds == nil {
			ds = []marquee.WebhookDelivery{}
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"deliveries": ds})
		return nil
	}
}
