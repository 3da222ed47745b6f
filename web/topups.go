package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/delivery"
	"marquee/payments"
)

// TopUpStore is what the routes of prepaid balances need of the store.
type TopUpStore interface {
	Advertiser(ctx context.Context, id int64) (marquee.Advertiser, error)
	CreateTopUp(ctx context.Context, t marquee.TopUp) (marquee.TopUp, error)
	AttachCheckout(ctx context.Context, id int64, sessionID, url string, failed bool) (marquee.TopUp, error)
	CreditPayment(ctx context.Context, p marquee.CardPayment) (marquee.TopUp, error)
	RefundPayment(ctx context.Context, r marquee.CardRefund) (marquee.TopUp, error)
	DisputePayment(ctx context.Context, d marquee.CardDispute) (marquee.TopUp, error)
	ListTopUps(ctx context.Context, advertiser int64, paidFrom, paidTo time.Time, limit int) ([]marquee.TopUp, error)
}

// Payments is the card payments' processor (package payments: Stripe).
type Payments interface {
	OpenCheckout(ctx context.Context, c payments.Checkout) (payments.Session, error)
	Event(payload []byte, signature string) (payments.Notice, error)
}

// MaxStripeEvent bounds a Stripe webhook's body (a Checkout Session event
// is a few KiB).
const MaxStripeEvent = 256 << 10

// balances serve prepaid balances: top-ups, the balance, and Stripe's
// webhook. pay is nil when card payments are not configured.
type balances struct {
	st       TopUpStore
	pay      Payments
	budgets  func() *delivery.Budgets
	currency string
	mailer   Mailer
	log      *slog.Logger
	now      func() time.Time
	req      requester
}

// handleCreateTopUp serves POST /api/v1/advertisers/{id}/top-ups
// {amount} (audited by the route): a pending top-up and its Stripe
// Checkout Session — 201 {id, checkoutUrl, stripeSessionId, status:
// "pending"}; the payer pays on checkoutUrl, and Stripe's webhook
// credits the balance. {amount, kind: "credit", reason}: a credit the
// team gives (not an advertiser's account), paid at once. The advertiser
// must be prepaid; a session Stripe refuses to open leaves the top-up
// failed (503: try again).
func (bl *balances) handleCreateTopUp() storeHandler {
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
		switch {
		case in.Kind != marquee.TopUpCard && p.Bounds.Bound():
			return marquee.Errorf(marquee.KindForbidden, "a credit or a debit is the team's; an advertiser's account pays by card")
		case in.Kind == marquee.TopUpCard && bl.pay == nil:
			return marquee.Errorf(marquee.KindConflict, "card payments are not configured on this server (-stripe-key, -stripe-webhook-secret)")
		}
		if in.Kind == marquee.TopUpCard {
			if _, err := payments.MinorUnits(in.Amount, bl.currency); err != nil {
				return err
			}
		}
		a, err := bl.st.Advertiser(sctx, id)
		if err != nil {
			return err
		}
		fields := []string{"amount"}
		if in.Kind != marquee.TopUpCard {
			fields = []string{"amount", "kind", "reason"}
		}
		t, err := bl.st.CreateTopUp(withFields(sctx, fields), marquee.TopUp{AdvertiserID: id, Kind: in.Kind, Amount: in.Amount, Currency: bl.currency,
			Reason: in.Reason, CreatedBy: p.Actor})
		if err != nil {
			return err
		}
		if in.Kind == marquee.TopUpCard {
			back := bl.req.consoleOrigin(ctx) + "/admin/#/advertisers/" + strconv.FormatInt(id, 10) + "?topUp=" + strconv.FormatInt(t.ID, 10)
			s, err := bl.pay.OpenCheckout(sctx, payments.Checkout{TopUp: t, Advertiser: a.Name, SuccessURL: back, CancelURL: back + "&cancelled=1"})
			if err != nil {
				if _, ferr := bl.st.AttachCheckout(withFields(sctx, []string{"status"}), t.ID, "", "", true); ferr != nil {
					bl.log.Error("top-up: mark failed", "topUp", t.ID, "err", ferr)
				}
				bl.log.Error("top-up: open checkout", "topUp", t.ID, "err", err)
				return marquee.Errorf(marquee.KindUnavailable, "Stripe did not open a checkout session; try again")
			}
			if t, err = bl.st.AttachCheckout(sctx, t.ID, s.ID, s.URL, false); err != nil {
				return err
			}
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/advertisers/"+strconv.FormatInt(id, 10)+"/balance")
		writeJSON(ctx, fasthttp.StatusCreated, t)
		return nil
	}
}

// Balance is GET /api/v1/advertisers/{id}/balance's answer: what a
// prepaid advertiser was credited, what it spent, and what is left, in
// the install's currency; its top-ups newest first.
type Balance struct {
	AdvertiserID int64           `json:"advertiserId,string"`
	Balance      marquee.Micros  `json:"balance"`
	Credited     marquee.Micros  `json:"credited"`
	Spent        marquee.Micros  `json:"spent"`
	Currency     string          `json:"currency"`
	TopUps       []marquee.TopUp `json:"topUps"`
}

// balanceOf is advertiser a's balance: what it was credited less what
// the spend counters (floored by the reports) say it spent.
func (bl *balances) balanceOf(sctx context.Context, a *marquee.Advertiser) (Balance, error) {
	if !a.Prepaid {
		return Balance{}, marquee.Errorf(marquee.KindConflict, "advertiser %d is not prepaid: it is invoiced for what it spends", a.ID)
	}
	var b *delivery.Budgets
	if bl.budgets != nil {
		b = bl.budgets()
	}
	if b == nil {
		return Balance{}, marquee.Errorf(marquee.KindUnavailable, "no spend counters: the balance is unknown")
	}
	n, err := b.AdvertiserTotal(sctx, a.ID)
	if err != nil {
		return Balance{}, &marquee.Error{Kind: marquee.KindUnavailable, Message: "the spend counters did not answer", Err: err}
	}
	spent := n.Micros()
	return Balance{AdvertiserID: a.ID, Credited: a.Credited, Spent: spent, Balance: a.Credited - spent, Currency: bl.currency}, nil
}

// handleBalance serves GET /api/v1/advertisers/{id}/balance.
func (bl *balances) handleBalance() storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return err
		}
		a, err := bl.st.Advertiser(sctx, id)
		if err != nil {
			return err
		}
		out, err := bl.balanceOf(sctx, &a)
		if err != nil {
			return err
		}
		if out.TopUps, err = bl.st.ListTopUps(sctx, id, time.Time{}, time.Time{}, 200); err != nil {
			return err
		}
		if out.TopUps == nil {
			out.TopUps = []marquee.TopUp{}
		}
		writeJSON(ctx, fasthttp.StatusOK, out)
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
// is the credential, checked before anything else is read). A body whose
// Stripe-Signature does not verify — no v1 signature made with the
// endpoint's secret, or a timestamp older than the tolerance — is a 400
// and changes nothing. A verified payment of a top-up credits its
// balance once, and a verified refund of one takes what it refunded back
// (both audited as "stripe"); an event seen before, a payment or refund
// that does not match its top-up, and every other event are acknowledged
// (200) and change nothing. A store that cannot be reached is a 503:
// Stripe delivers the event again.
func (bl *balances) handleStripeWebhook() storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if bl.pay == nil {
			return marquee.Errorf(marquee.KindNotFound, "card payments are not configured on this server")
		}
		if n := len(ctx.PostBody()); n > MaxStripeEvent {
			return marquee.Errorf(marquee.KindTooLarge, "request body is %d bytes; the limit is %d", n, MaxStripeEvent)
		}
		nt, err := bl.pay.Event(ctx.PostBody(), string(ctx.Request.Header.Peek("Stripe-Signature")))
		switch {
		case errors.Is(err, payments.ErrSignature):
			return marquee.Invalid("invalid webhook", marquee.Problems{"Stripe-Signature": err.Error()})
		case err != nil:
			return marquee.Invalid("invalid webhook", marquee.Problems{"body": err.Error()})
		}
		ack := stripeAck{Received: true}
		audit := marquee.Audit{Actor: "stripe", IP: bl.req.ip(ctx), Fields: []string{"balance"}}
		var t marquee.TopUp
		switch {
		case nt.Paid != nil:
			audit.Action = "pay"
			ack.TopUpID = strconv.FormatInt(nt.Paid.TopUpID, 10)
			t, err = bl.st.CreditPayment(marquee.WithAudit(sctx, audit), nt.Paid.CardPayment)
		case nt.Refunded != nil:
			audit.Action = "refund"
			t, err = bl.st.RefundPayment(marquee.WithAudit(sctx, audit), *nt.Refunded)
		case nt.Disputed != nil:
			audit.Action = "dispute " + cmp.Or(nt.Disputed.Outcome, marquee.DisputeOpen)
			t, err = bl.st.DisputePayment(marquee.WithAudit(sctx, audit), *nt.Disputed)
		default:
			writeJSON(ctx, fasthttp.StatusOK, ack)
			return nil
		}
		switch k := marquee.KindOf(err); {
		case errors.Is(err, marquee.ErrPaymentSeen):
			ack.Ignored = err.Error()
		case k == marquee.KindConflict || k == marquee.KindNotFound:
			ack.Ignored = err.Error()
			bl.log.Warn("stripe: an event changed no balance", "type", audit.Action, "topUp", ack.TopUpID, "why", err.Error())
		case err != nil:
			return err
		case nt.Paid != nil:
			ack.Credited = true
			bl.receipt(sctx, t, nt.Paid.Email)
		case nt.Disputed != nil:
			ack.Disputed, ack.TopUpID = t.Dispute, strconv.FormatInt(t.ID, 10)
		default:
			ack.Refunded, ack.TopUpID = true, strconv.FormatInt(t.ID, 10)
		}
		writeJSON(ctx, fasthttp.StatusOK, ack)
		return nil
	}
}

// receipt mails the payer of top-up t a receipt, when mail is configured
// and Stripe gave an address; a failure is logged (the credit stands).
func (bl *balances) receipt(sctx context.Context, t marquee.TopUp, to string) {
	if bl.mailer == nil || to == "" {
		return
	}
	a, err := bl.st.Advertiser(sctx, t.AdvertiserID)
	if err != nil {
		bl.log.Error("top-up receipt", "topUp", t.ID, "err", err)
		return
	}
	text := fmt.Sprintf("Thank you: your payment of %s %s was added to the advertising balance of %s.\n\n"+
		"Top-up: %d\nPaid: %s\nStripe Checkout Session: %s\nCredited in all: %s %s\n",
		t.Amount, t.Currency, a.Name, t.ID, marquee.FormatTime(t.PaidAt), t.SessionID, a.Credited, t.Currency)
	if err := bl.mailer.SendText(sctx, to, "Receipt: "+t.Amount.String()+" "+t.Currency+" added to "+a.Name+"'s balance", text); err != nil {
		bl.log.Error("top-up receipt", "topUp", t.ID, "err", err)
	}
}
