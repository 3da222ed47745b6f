package marquee

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// A TopUp is money put into a prepaid advertiser's balance
// (docs/api.md#prepaid-balances): a card payment through a Stripe
// Checkout Session (Kind TopUpCard), pending until Stripe's signed
// webhook says it was paid, or a credit the team gives (Kind
// TopUpCredit: a refund, a goodwill credit), paid when it is made. Only
// paid top-ups count in the balance; each is credited once.
type TopUp struct {
	ID           int64  `json:"id,string"`
	AdvertiserID int64  `json:"advertiserId,string"`
	Kind         string `json:"kind"`
	Amount       Micros `json:"amount"`
	Currency     string `json:"currency"`
	Status       string `json:"status"`
	Reason       string `json:"reason,omitempty"` // a credit's
	CheckoutURL  string `json:"checkoutUrl,omitempty"`
	SessionID    string `json:"stripeSessionId,omitempty"`
	EventID      string `json:"stripeEventId,omitempty"` // the webhook event that credited it
	// PaymentIntent is the card payment's Stripe PaymentIntent (what its
	// refunds name); Refunded what Stripe refunded of it, taken back from
	// the balance.
	PaymentIntent string `json:"stripePaymentIntent,omitempty"`
	Refunded      Micros `json:"refunded,omitempty"`
	// Dispute is the card payment's chargeback, as Stripe last said
	// (DisputeOpen, DisputeWon, DisputeLost; "": none), and Disputed what
	// it holds back from the balance (taken when the dispute opened, given
	// back when it is won).
	Dispute   string    `json:"dispute,omitempty"`
	Disputed  Micros    `json:"disputed,omitempty"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	PaidAt    time.Time `json:"paidAt,omitzero"`
}

// The kinds and states of top-ups.
const (
	TopUpCard   = "card"   // paid by card through Stripe Checkout
	TopUpCredit = "credit" // given by the team (a refund, a goodwill credit)
	TopUpDebit  = "debit"  // taken by the team (a correction, a payment reversed outside Stripe): its amount leaves the balance

	DisputeOpen = "open" // a chargeback opened: its amount is held back
	DisputeWon  = "won"  // decided for the network: what was held is given back
	DisputeLost = "lost" // decided for the cardholder: what was held stays taken

	TopUpPending = "pending" // a Checkout Session is open
	TopUpPaid    = "paid"    // credited to the balance
	TopUpFailed  = "failed"  // Stripe refused to open a session: nothing can pay it
)

// MaxTopUp is the most one top-up may put into a balance.
const MaxTopUp Micros = 1_000_000 * 1_000_000

// MaxCreditReason is the longest reason a credit may give.
const MaxCreditReason = 500

// TopUpInput is POST /api/v1/advertisers/{id}/top-ups's body: an amount
// to pay by card; or, with Kind TopUpCredit, a credit the team gives
// (Reason required).
type TopUpInput struct {
	Amount Micros
	Kind   string
	Reason string
}

// ParseTopUpInput decodes and validates a top-up body.
func ParseTopUpInput(body []byte) (TopUpInput, error) {
	in := TopUpInput{Kind: TopUpCard}
	p := Problems{}
	fields, ok := object(body, p, "amount", "kind", "reason")
	if !ok {
		return in, Invalid("invalid top-up", p)
	}
	if raw, ok := present(fields, "kind"); ok {
		if json.Unmarshal(raw, &in.Kind) != nil || (in.Kind != TopUpCard && in.Kind != TopUpCredit && in.Kind != TopUpDebit) {
			p["kind"] = "must be card (paid through Stripe Checkout), credit (given by the team) or debit (taken by the team)"
		}
	}
	raw, ok := present(fields, "amount")
	if !ok {
		p["amount"] = "is required: what to add to the balance (e.g. 50 or 12.50)"
	} else if m, err := ParseAmount(raw); err != nil {
		p["amount"] = err.Error()
	} else if m <= 0 || m > MaxTopUp {
		p["amount"] = "must be more than 0 and at most " + MaxTopUp.String()
	} else {
		in.Amount = m
	}
	if raw, ok := present(fields, "reason"); ok && json.Unmarshal(raw, &in.Reason) != nil {
		p["reason"] = "must be a string"
	}
	in.Reason = strings.TrimSpace(in.Reason)
	switch {
	case in.Kind == TopUpCredit && in.Reason == "":
		p["reason"] = "is required for a credit: why it is given (a refund of …)"
	case in.Kind == TopUpDebit && in.Reason == "":
		p["reason"] = "is required for a debit: why it is taken (a payment reversed …)"
	case len(in.Reason) > MaxCreditReason:
		p["reason"] = "must be at most " + strconv.Itoa(MaxCreditReason) + " bytes"
	}
	return in, Invalid("invalid top-up", p)
}

// A Payment is what paid a prepaid advertiser's balance during an
// invoice's period (a paid top-up), as the invoice shows it.
type Payment struct {
	TopUpID   int64     `json:"topUpId,string"`
	Kind      string    `json:"kind"`
	Amount    Micros    `json:"amount"`
	PaidAt    time.Time `json:"paidAt"`
	Reference string    `json:"reference"` // the Stripe Checkout Session, or a credit's reason
}

// Prepayment is what an invoice of a prepaid advertiser shows beside what
// was billed: the payments into its balance during the period, and its
// balance when the invoice was issued. The invoice's total was paid from
// the balance: nothing is due.
type Prepayment struct {
	Payments []Payment `json:"payments"`
	Paid     Micros    `json:"paid"`    // the payments' sum
	Balance  Micros    `json:"balance"` // when the invoice was issued
}

// A CardPayment is what Stripe's signed webhook says was paid: its event
// id, the Checkout Session, the top-up the session's metadata names, and
// the amount and currency paid (upper case, as the install's).
type CardPayment struct {
	EventID, SessionID string
	PaymentIntent      string
	TopUpID            int64
	Amount             Micros
	Currency           string
}

// A CardRefund is what Stripe's signed webhook says was refunded of a
// card payment: its event id, the payment's PaymentIntent, and how much
// of it is refunded in all (Stripe's amount_refunded, which grows with
// each partial refund).
type CardRefund struct {
	EventID, PaymentIntent string
	Refunded               Micros
	Currency               string
}

// CardDispute is what a verified Stripe webhook says of a chargeback of
// a card payment: the event, the payment (its PaymentIntent), the amount
// disputed and its currency, and Outcome — "" when it opened
// (charge.dispute.created), DisputeWon or DisputeLost when it closed
// (charge.dispute.closed).
type CardDispute struct {
	EventID, PaymentIntent string
	Amount                 Micros
	Currency               string
	Outcome                string
}

// ErrPaymentSeen is a store's answer to a payment whose event credited a
// balance before: nothing changed.
var ErrPaymentSeen = errors.New("this Stripe event credited its top-up already")

// NoTopUp is the error of a top-up that does not exist.
func NoTopUp(id int64) *Error { return Errorf(KindNotFound, "top-up %d not found", id) }

// Balance is a prepaid advertiser's balance: what it was credited, what
// it spent (the spend counters, floored by the reports), and what is
// left, in the install's currency; its top-ups newest first.
type Balance struct {
	AdvertiserID int64   `json:"advertiserId,string"`
	Balance      Micros  `json:"balance"`
	Credited     Micros  `json:"credited"`
	Spent        Micros  `json:"spent"`
	Currency     string  `json:"currency"`
	TopUps       []TopUp `json:"topUps"`
}
