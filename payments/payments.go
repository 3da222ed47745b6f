// Package payments takes card payments into prepaid balances through
// Stripe (github.com/stripe/stripe-go): it opens Checkout Sessions for
// top-ups, and verifies and reads the webhook events by which Stripe says
// one was paid (docs/api.md#prepaid-balances). No card data ever reaches
// Marquee: the payer types it on Stripe's page.
package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"marquee"
)

// Config is how to reach Stripe.
type Config struct {
	// Key is the secret API key (sk_live_…, sk_test_…, or a restricted
	// key that may write Checkout Sessions).
	Key string
	// API is the API's base URL ("": Stripe's, https://api.stripe.com);
	// tests point it at stripe-mock.
	API string
	// WebhookSecret is the webhook endpoint's signing secret (whsec_…).
	WebhookSecret string
	// Tolerance is how old a webhook's signed timestamp may be (0:
	// webhook.DefaultTolerance, five minutes): an older one is refused,
	// so a captured event cannot be replayed later.
	Tolerance time.Duration
	// Log receives the client's errors (nil: none).
	Log *slog.Logger
}

// Stripe opens Checkout Sessions and reads webhook events. It is safe
// for concurrent use.
type Stripe struct {
	client    *stripe.Client
	secret    string
	tolerance time.Duration
}

// New returns the Stripe client cfg describes; a key without a webhook
// secret is an error (no payment could ever be credited).
func New(cfg Config) (*Stripe, error) {
	if cfg.Key == "" || cfg.WebhookSecret == "" {
		return nil, errors.New("payments need both a Stripe API key and the webhook endpoint's signing secret")
	}
	bc := &stripe.BackendConfig{
		HTTPClient:        &http.Client{Timeout: 30 * time.Second},
		MaxNetworkRetries: stripe.Int64(2),
		LeveledLogger:     leveled{cfg.Log},
	}
	if cfg.API != "" {
		bc.URL = stripe.String(strings.TrimRight(cfg.API, "/"))
	}
	c := stripe.NewClient(cfg.Key, stripe.WithBackends(stripe.NewBackendsWithConfig(bc)))
	tol := cfg.Tolerance
	if tol <= 0 {
		tol = webhook.DefaultTolerance
	}
	return &Stripe{client: c, secret: cfg.WebhookSecret, tolerance: tol}, nil
}

// Checkout is a top-up's Checkout Session request.
type Checkout struct {
	TopUp      marquee.TopUp
	Advertiser string // its name, on Stripe's page
	// SuccessURL and CancelURL are where Stripe sends the payer back.
	SuccessURL, CancelURL string
}

// A Session is an opened Checkout Session: its id and the page the payer
// goes to.
type Session struct {
	ID, URL string
}

// OpenCheckout opens a Checkout Session in payment mode for the top-up:
// one line of its amount in its currency, the top-up's id in the
// session's metadata (topUpId, advertiserId) and client_reference_id, so
// that the webhook names what it paid.
func (s *Stripe) OpenCheckout(ctx context.Context, c Checkout) (Session, error) {
	minor, err := MinorUnits(c.TopUp.Amount, c.TopUp.Currency)
	if err != nil {
		return Session{}, err
	}
	id := strconv.FormatInt(c.TopUp.ID, 10)
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		SuccessURL:        stripe.String(c.SuccessURL),
		CancelURL:         stripe.String(c.CancelURL),
		ClientReferenceID: stripe.String(id),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:   stripe.String(strings.ToLower(c.TopUp.Currency)),
				UnitAmount: stripe.Int64(minor),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{
					Name: stripe.String("Advertising balance: " + c.Advertiser),
				},
			},
		}},
		Metadata: map[string]string{"topUpId": id, "advertiserId": strconv.FormatInt(c.TopUp.AdvertiserID, 10)},
	}
	// Retries of this request open one session; a store restored from a
	// backup that gives the id again makes another key.
	params.SetIdempotencyKey("marquee-top-up-" + id + "-" + strconv.FormatInt(c.TopUp.CreatedAt.UnixMilli(), 10))
	cs, err := s.client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return Session{}, marquee.Errorf(marquee.KindUnavailable, "stripe: open a checkout session: %v", err)
	}
	return Session{ID: cs.ID, URL: cs.URL}, nil
}

// A Payment is what a verified webhook event says was paid, and the
// payer's email for a receipt ("": none given).
type Payment struct {
	marquee.CardPayment
	Email string
}

// A Notice is what a verified webhook event says: a payment, a refund,
// or neither (an event Marquee does not act on).
type Notice struct {
	Paid     *Payment
	Refunded *marquee.CardRefund
	Disputed *marquee.CardDispute
}

// ErrSignature is a webhook whose Stripe-Signature does not verify: no
// signature, none made with the secret, or a timestamp past the
// tolerance.
var ErrSignature = errors.New("stripe-signature does not verify")

// Event verifies payload's Stripe-Signature header (its timestamp within
// the tolerance, any of its v1 signatures made with the secret) and reads
// it: Paid when the event says a Checkout Session was paid
// (checkout.session.completed with payment_status paid, or
// checkout.session.async_payment_succeeded), Refunded when a charge was
// refunded (charge.refunded: its PaymentIntent and amount_refunded),
// Disputed when a chargeback opened (charge.dispute.created) or was won or
// lost (charge.dispute.closed: its PaymentIntent, amount and status), and
// none for any other event (acknowledged and ignored). An event that
// verifies but names no top-up, or an amount it cannot read, is an
// error.
func (s *Stripe) Event(payload []byte, signature string) (Notice, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, signature, s.secret, webhook.ConstructEventOptions{
		Tolerance: s.tolerance,
		// The fields read below are the same in every API version; the
		// endpoint's pinned version need not be the library's.
		IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		if errors.Is(err, webhook.ErrNotSigned) || errors.Is(err, webhook.ErrInvalidHeader) || errors.Is(err, webhook.ErrNoValidSignature) || errors.Is(err, webhook.ErrTooOld) {
			return Notice{}, fmt.Errorf("%w: %v", ErrSignature, err)
		}
		return Notice{}, err
	}
	if ev.Data == nil {
		return Notice{}, errors.New("the event has no data")
	}
	switch ev.Type {
	case stripe.EventTypeCheckoutSessionCompleted, stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded:
		p, ok, err := paid(ev)
		if !ok {
			return Notice{}, err
		}
		return Notice{Paid: &p}, nil
	case stripe.EventTypeChargeRefunded:
		var ch stripe.Charge
		if ch.UnmarshalJSON(ev.Data.Raw) != nil {
			return Notice{}, errors.New("the event's data is not a charge")
		}
		r := marquee.CardRefund{EventID: ev.ID, Currency: strings.ToUpper(string(ch.Currency))}
		if ch.PaymentIntent != nil {
			r.PaymentIntent = ch.PaymentIntent.ID
		}
		if r.Refunded, err = FromMinorUnits(ch.AmountRefunded, r.Currency); err != nil {
			return Notice{}, err
		}
		return Notice{Refunded: &r}, nil
	case stripe.EventTypeChargeDisputeCreated, stripe.EventTypeChargeDisputeClosed:
		var dp stripe.Dispute
		if dp.UnmarshalJSON(ev.Data.Raw) != nil {
			return Notice{}, errors.New("the event's data is not a dispute")
		}
		d := marquee.CardDispute{EventID: ev.ID, Currency: strings.ToUpper(string(dp.Currency))}
		if ev.Type == stripe.EventTypeChargeDisputeClosed {
			switch dp.Status {
			case stripe.DisputeStatusWon:
				d.Outcome = marquee.DisputeWon
			case stripe.DisputeStatusLost:
				d.Outcome = marquee.DisputeLost
			default: // an inquiry's warning closed: no money moved
				return Notice{}, nil
			}
		}
		if dp.PaymentIntent != nil {
			d.PaymentIntent = dp.PaymentIntent.ID
		}
		if d.Amount, err = FromMinorUnits(dp.Amount, d.Currency); err != nil {
			return Notice{}, err
		}
		return Notice{Disputed: &d}, nil
	}
	return Notice{}, nil
}

// paid reads a Checkout Session event: ok false (and no error) while its
// payment is still processing.
func paid(ev stripe.Event) (p Payment, ok bool, err error) {
	var cs stripe.CheckoutSession
	if cs.UnmarshalJSON(ev.Data.Raw) != nil {
		return p, false, errors.New("the event's data is not a Checkout Session")
	}
	if cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid {
		return p, false, nil // completed, the payment still processing: async_payment_succeeded credits it
	}
	p = Payment{CardPayment: marquee.CardPayment{EventID: ev.ID, SessionID: cs.ID, Currency: strings.ToUpper(string(cs.Currency))}, Email: cs.CustomerEmail}
	if cs.PaymentIntent != nil {
		p.PaymentIntent = cs.PaymentIntent.ID
	}
	if cs.CustomerDetails != nil && cs.CustomerDetails.Email != "" {
		p.Email = cs.CustomerDetails.Email
	}
	if p.TopUpID, err = strconv.ParseInt(cs.Metadata["topUpId"], 10, 64); err != nil || p.TopUpID <= 0 {
		return p, false, errors.New("the Checkout Session's metadata names no topUpId")
	}
	if p.Amount, err = FromMinorUnits(cs.AmountTotal, p.Currency); err != nil {
		return p, false, err
	}
	return p, true, nil
}

// zeroDecimal and threeDecimal are the currencies Stripe counts in whole
// units and in thousandths (docs.stripe.com/currencies); every other in
// hundredths.
var (
	zeroDecimal  = "BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF"
	threeDecimal = "BHD JOD KWD OMR TND"
)

// decimalsOf is how many decimals Stripe's amounts of currency have.
func decimalsOf(currency string) int {
	c := strings.ToUpper(currency)
	switch {
	case len(c) == 3 && strings.Contains(zeroDecimal, c):
		return 0
	case len(c) == 3 && strings.Contains(threeDecimal, c):
		return 3
	}
	return 2
}

// unitOf is the currency's smallest unit in micro-units (a cent: 10,000)
// and its number of decimals.
func unitOf(currency string) (unit int64, decimals int) {
	d := decimalsOf(currency)
	unit = 1_000_000
	for range d {
		unit /= 10
	}
	return unit, d
}

// MinorUnits is m in the currency's smallest unit, as Stripe's amounts
// are; an amount finer than that unit is a KindInvalid error naming
// amount.
func MinorUnits(m marquee.Micros, currency string) (int64, error) {
	unit, d := unitOf(currency)
	if int64(m)%unit != 0 {
		return 0, marquee.Invalid("invalid top-up", marquee.Problems{"amount": fmt.Sprintf("must be a whole number of %s's smallest unit (%d decimals)", currency, d)})
	}
	return int64(m) / unit, nil
}

// FromMinorUnits is a Stripe amount of currency in micro-units.
func FromMinorUnits(n int64, currency string) (marquee.Micros, error) {
	unit, _ := unitOf(currency)
	if n < 0 || n > int64(marquee.MaxAmount)/unit {
		return 0, fmt.Errorf("amount %d %s out of range", n, currency)
	}
	return marquee.Micros(n * unit), nil
}

// leveled is the client's logger: its errors and warnings into slog;
// nothing that could carry a key (the library never logs one).
type leveled struct{ log *slog.Logger }

func (l leveled) Debugf(string, ...any) {}
func (l leveled) Infof(string, ...any)  {}
func (l leveled) Warnf(format string, v ...any) {
	if l.log != nil {
		l.log.Warn("stripe", "msg", fmt.Sprintf(format, v...))
	}
}
func (l leveled) Errorf(format string, v ...any) {
	if l.log != nil {
		l.log.Error("stripe", "msg", fmt.Sprintf(format, v...))
	}
}
