package web

import (
	"context"
	"strconv"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/billing"
)

// MaxStripeEvent bounds a Stripe webhook's body (a Checkout Session event
// is a few KiB).
const MaxStripeEvent = 256 << 10

// handleCreateTopUp serves POST /api/v1/advertisers/{id}/top-ups
// {amount} or {amount, kind: "credit" | "debit", reason} (audited by the
// route): 201 with the top-up (billing.Service.TopUp) — a card's pending,
// with its checkoutUrl, which comes back to the advertiser's page of the
// console.
func handleCreateTopUp(bs *billing.Service, rq requester) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if err := checkJSONBody(ctx, 4<<10); err != nil {
			return err
		}
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return err
		}
		in, err := marquee.ParseTopUpInput(ctx.PostBody())
		if err != nil {
			return err
		}
		p := principal(ctx)
		back := rq.consoleOrigin(ctx) + "/admin/#/advertisers/" + strconv.FormatInt(id, 10) + "?topUp="
		t, err := bs.TopUp(sctx, id, in, billing.Payer{Actor: p.Actor, Bound: p.Bounds.Bound(), ReturnURL: back})
		if err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/advertisers/"+strconv.FormatInt(id, 10)+"/balance")
		writeJSON(ctx, fasthttp.StatusCreated, t)
		return nil
	}
}

// handleBalance serves GET /api/v1/advertisers/{id}/balance
// (billing.Service.Balance).
func handleBalance(bs *billing.Service) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return err
		}
		b, err := bs.Balance(sctx, id)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, b)
		return nil
	}
}

// stripeAck is the webhook's answer to an event it verified.
type stripeAck struct {
	Received bool   `json:"received"`
	Credited bool   `json:"credited"`
	Refunded bool   `json:"refunded,omitempty"` // a refund was taken back from the balance
	Disputed string `json:"disputed,omitempty"` // a chargeback's state, applied to the balance (open, won, lost)
	TopUpID  string `json:"topUpId,omitempty"`
	Ignored  string `json:"ignored,omitempty"` // why a payment or refund changed nothing
}

// handleStripeWebhook serves POST /stripe/webhook (public: the signature
// is the credential, checked before anything else is read;
// billing.Service.Paid): a notice that does not verify is a 400 and
// changes nothing; a verified one is acknowledged (200) with what it did;
// a store that cannot be reached is a 503, and Stripe delivers it again.
func handleStripeWebhook(bs *billing.Service, rq requester) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if !bs.CardPayments() {
			return marquee.Errorf(marquee.KindNotFound, "card payments are not configured on this server")
		}
		if n := len(ctx.PostBody()); n > MaxStripeEvent {
			return marquee.Errorf(marquee.KindTooLarge, "request body is %d bytes; the limit is %d", n, MaxStripeEvent)
		}
		nt, err := bs.Paid(sctx, ctx.PostBody(), string(ctx.Request.Header.Peek("Stripe-Signature")), rq.ip(ctx))
		if err != nil {
			return err
		}
		ack := stripeAck{Received: true, Credited: nt.Credited, Refunded: nt.Refunded, Disputed: nt.Disputed, Ignored: nt.Ignored}
		if nt.TopUpID != 0 {
			ack.TopUpID = strconv.FormatInt(nt.TopUpID, 10)
		}
		writeJSON(ctx, fasthttp.StatusOK, ack)
		return nil
	}
}
