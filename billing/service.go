package billing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"marquee"
	"marquee/payments"
	"marquee/reports"
)

// Store is what the back office keeps in the store: advertisers' top-ups
// and balances, and the documents. IssueInvoice numbers and keeps one,
// and refuses (a KindConflict error) an invoice or statement whose period
// overlaps one of the same advertiser's or site's.
type Store interface {
	Advertiser(ctx context.Context, id int64) (marquee.Advertiser, error)
	CreateTopUp(ctx context.Context, t marquee.TopUp) (marquee.TopUp, error)
	AttachCheckout(ctx context.Context, id int64, sessionID, url string, failed bool) (marquee.TopUp, error)
	CreditPayment(ctx context.Context, p marquee.CardPayment) (marquee.TopUp, error)
	RefundPayment(ctx context.Context, r marquee.CardRefund) (marquee.TopUp, error)
	DisputePayment(ctx context.Context, d marquee.CardDispute) (marquee.TopUp, error)
	ListTopUps(ctx context.Context, advertiser int64, paidFrom, paidTo time.Time, limit int) ([]marquee.TopUp, error)
	IssueInvoice(ctx context.Context, inv marquee.Invoice) (marquee.Invoice, error)
}

// Payments is the card payments' processor (package payments: Stripe).
type Payments interface {
	OpenCheckout(ctx context.Context, c payments.Checkout) (payments.Session, error)
	Event(payload []byte, signature string) (payments.Notice, error)
}

// Spend is what advertisers spent in all, in nano-units: the shared
// spend counters (*delivery.Budgets).
type Spend interface {
	AdvertiserTotal(ctx context.Context, id int64) (marquee.Nanos, error)
}

// Mailer sends a plain-text email.
type Mailer interface {
	SendText(ctx context.Context, to, subject, text string) error
}

// Config is what a Service works with. Store, Reports and Catalogs are
// required; a nil Payments takes no card, a nil Spend knows no balance, a
// nil Mailer sends no receipt.
type Config struct {
	Store    Store
	Payments Payments
	Spend    Spend
	Reports  *reports.Reporter
	Catalogs *reports.Catalogs
	Currency string
	Mailer   Mailer
	Log      *slog.Logger
	Now      func() time.Time
}

// Service is the back office's money: prepaid balances, top-ups and
// their card payments, and the documents — invoices (with a prepaid
// advertiser's payments and balance), credit notes and statements. It
// speaks no HTTP: the edge reads requests and writes its answers. It is
// safe for concurrent use.
type Service struct{ cfg Config }

// New returns the service cfg describes.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// Currency is the install's currency.
func (s *Service) Currency() string { return s.cfg.Currency }

// CardPayments says whether card payments are configured.
func (s *Service) CardPayments() bool { return s.cfg.Payments != nil }

// Balance is prepaid advertiser id's balance and its top-ups (the 200
// newest); an advertiser that is not prepaid is a conflict.
func (s *Service) Balance(ctx context.Context, id int64) (marquee.Balance, error) {
	a, err := s.cfg.Store.Advertiser(ctx, id)
	if err != nil {
		return marquee.Balance{}, err
	}
	b, err := s.balanceOf(ctx, &a)
	if err != nil {
		return b, err
	}
	if b.TopUps, err = s.cfg.Store.ListTopUps(ctx, id, time.Time{}, time.Time{}, 200); err != nil {
		return b, err
	}
	if b.TopUps == nil {
		b.TopUps = []marquee.TopUp{}
	}
	return b, nil
}

// balanceOf is advertiser a's balance: what it was credited less what
// the spend counters (floored by the reports) say it spent.
func (s *Service) balanceOf(ctx context.Context, a *marquee.Advertiser) (marquee.Balance, error) {
	if !a.Prepaid {
		return marquee.Balance{}, marquee.Errorf(marquee.KindConflict, "advertiser %d is not prepaid: it is invoiced for what it spends", a.ID)
	}
	if s.cfg.Spend == nil {
		return marquee.Balance{}, marquee.Errorf(marquee.KindUnavailable, "no spend counters: the balance is unknown")
	}
	n, err := s.cfg.Spend.AdvertiserTotal(ctx, a.ID)
	if err != nil {
		return marquee.Balance{}, &marquee.Error{Kind: marquee.KindUnavailable, Message: "the spend counters did not answer", Err: err}
	}
	spent := n.Micros()
	return marquee.Balance{AdvertiserID: a.ID, Credited: a.Credited, Spent: spent, Balance: a.Credited - spent, Currency: s.cfg.Currency}, nil
}

// A Payer is who asks for a top-up: its actor (for the audit log),
// whether its account is bound to advertisers (an advertiser's account
// pays by card only), and, for a card, the page the payer comes back to:
// ReturnURL followed by the top-up's id (and &cancelled=1 when it
// cancels).
type Payer struct {
	Actor     string
	Bound     bool
	ReturnURL string
}

// TopUp adds to advertiser id's prepaid balance: by card, a pending
// top-up and its Stripe Checkout Session (the payer pays on the
// session's URL, and Stripe's notice credits it: Paid); a credit or a
// debit the team gives, at once (refused to a bound account). A session
// Stripe refuses to open leaves the top-up failed (unavailable: try
// again). The context's audit records it.
func (s *Service) TopUp(ctx context.Context, id int64, in marquee.TopUpInput, by Payer) (marquee.TopUp, error) {
	switch {
	case in.Kind != marquee.TopUpCard && by.Bound:
		return marquee.TopUp{}, marquee.Errorf(marquee.KindForbidden, "a credit or a debit is the team's; an advertiser's account pays by card")
	case in.Kind == marquee.TopUpCard && s.cfg.Payments == nil:
		return marquee.TopUp{}, marquee.Errorf(marquee.KindConflict, "card payments are not configured on this server (-stripe-key, -stripe-webhook-secret)")
	}
	if in.Kind == marquee.TopUpCard {
		if _, err := payments.MinorUnits(in.Amount, s.cfg.Currency); err != nil {
			return marquee.TopUp{}, err
		}
	}
	a, err := s.cfg.Store.Advertiser(ctx, id)
	if err != nil {
		return marquee.TopUp{}, err
	}
	fields := []string{"amount"}
	if in.Kind != marquee.TopUpCard {
		fields = []string{"amount", "kind", "reason"}
	}
	t, err := s.cfg.Store.CreateTopUp(marquee.WithAuditFields(ctx, fields), marquee.TopUp{AdvertiserID: id, Kind: in.Kind, Amount: in.Amount,
		Currency: s.cfg.Currency, Reason: in.Reason, CreatedBy: by.Actor})
	if err != nil || in.Kind != marquee.TopUpCard {
		return t, err
	}
	back := by.ReturnURL + strconv.FormatInt(t.ID, 10)
	sess, err := s.cfg.Payments.OpenCheckout(ctx, payments.Checkout{TopUp: t, Advertiser: a.Name, SuccessURL: back, CancelURL: back + "&cancelled=1"})
	if err != nil {
		if _, ferr := s.cfg.Store.AttachCheckout(marquee.WithAuditFields(ctx, []string{"status"}), t.ID, "", "", true); ferr != nil {
			s.cfg.Log.Error("top-up: mark failed", "topUp", t.ID, "err", ferr)
		}
		s.cfg.Log.Error("top-up: open checkout", "topUp", t.ID, "err", err)
		return t, marquee.Errorf(marquee.KindUnavailable, "Stripe did not open a checkout session; try again")
	}
	return s.cfg.Store.AttachCheckout(ctx, t.ID, sess.ID, sess.URL, false)
}

// A Notice is what a payment processor's verified notice did: a
// payment credited (Credited), a refund taken back (Refunded), a
// chargeback's state applied (Disputed: open, won, lost), or nothing
// (Ignored says why, when it was about a top-up).
type Notice struct {
	Credited bool
	Refunded bool
	Disputed string
	TopUpID  int64
	Ignored  string
}

// Paid applies a payment processor's notice (Stripe's webhook): payload
// and its signature, from ip. A notice whose signature does not verify, or
// a malformed one, is an invalid request naming Stripe-Signature or body,
// and changes nothing. A verified payment of a top-up credits its balance once
// (and mails the payer a receipt), a refund takes what it refunded back,
// a dispute takes the disputed amount and a won one gives it back — each
// audited as "stripe". A notice seen before, one that does not match its
// top-up, and every other kind change nothing. A store that cannot be
// reached is an error: the processor sends the notice again.
func (s *Service) Paid(ctx context.Context, payload []byte, signature, ip string) (Notice, error) {
	if s.cfg.Payments == nil {
		return Notice{}, marquee.Errorf(marquee.KindNotFound, "card payments are not configured on this server")
	}
	nt, err := s.cfg.Payments.Event(payload, signature)
	switch {
	case errors.Is(err, payments.ErrSignature):
		return Notice{}, marquee.Invalid("invalid webhook", marquee.Problems{"Stripe-Signature": err.Error()})
	case err != nil:
		return Notice{}, marquee.Invalid("invalid webhook", marquee.Problems{"body": err.Error()})
	}
	var out Notice
	audit := marquee.Audit{Actor: "stripe", IP: ip, Fields: []string{"balance"}}
	var t marquee.TopUp
	switch {
	case nt.Paid != nil:
		audit.Action = "pay"
		out.TopUpID = nt.Paid.TopUpID
		t, err = s.cfg.Store.CreditPayment(marquee.WithAudit(ctx, audit), nt.Paid.CardPayment)
	case nt.Refunded != nil:
		audit.Action = "refund"
		t, err = s.cfg.Store.RefundPayment(marquee.WithAudit(ctx, audit), *nt.Refunded)
	case nt.Disputed != nil:
		audit.Action = "dispute " + cmp.Or(nt.Disputed.Outcome, marquee.DisputeOpen)
		t, err = s.cfg.Store.DisputePayment(marquee.WithAudit(ctx, audit), *nt.Disputed)
	default:
		return out, nil
	}
	switch k := marquee.KindOf(err); {
	case errors.Is(err, marquee.ErrPaymentSeen):
		out.Ignored = err.Error()
	case k == marquee.KindConflict || k == marquee.KindNotFound:
		out.Ignored = err.Error()
		s.cfg.Log.Warn("stripe: an event changed no balance", "type", audit.Action, "topUp", out.TopUpID, "why", err.Error())
	case err != nil:
		return Notice{}, err
	case nt.Paid != nil:
		out.Credited = true
		s.receipt(ctx, t, nt.Paid.Email)
	case nt.Disputed != nil:
		out.Disputed, out.TopUpID = t.Dispute, t.ID
	default:
		out.Refunded, out.TopUpID = true, t.ID
	}
	return out, nil
}

// receipt mails the payer of top-up t a receipt, when mail is configured
// and the processor gave an address; a failure is logged (the credit
// stands).
func (s *Service) receipt(ctx context.Context, t marquee.TopUp, to string) {
	if s.cfg.Mailer == nil || to == "" {
		return
	}
	a, err := s.cfg.Store.Advertiser(ctx, t.AdvertiserID)
	if err != nil {
		s.cfg.Log.Error("top-up receipt", "topUp", t.ID, "err", err)
		return
	}
	text := fmt.Sprintf("Thank you: your payment of %s %s was added to the advertising balance of %s.\n\n"+
		"Top-up: %d\nPaid: %s\nStripe Checkout Session: %s\nCredited in all: %s %s\n",
		t.Amount, t.Currency, a.Name, t.ID, marquee.FormatTime(t.PaidAt), t.SessionID, a.Credited, t.Currency)
	if err := s.cfg.Mailer.SendText(ctx, to, "Receipt: "+t.Amount.String()+" "+t.Currency+" added to "+a.Name+"'s balance", text); err != nil {
		s.cfg.Log.Error("top-up receipt", "topUp", t.ID, "err", err)
	}
}

// IssueInvoice issues advertiser's numbered invoice of its billed spend
// over [from, to) (Invoice), with its prepayment when it is prepaid: an
// unknown advertiser is an invalid request naming advertiserId; a period
// that overlaps one of its invoices not credited is a conflict.
func (s *Service) IssueInvoice(ctx context.Context, advertiser int64, from, to time.Time) (marquee.Invoice, error) {
	adv, err := s.cfg.Store.Advertiser(ctx, advertiser)
	if err != nil {
		if marquee.KindOf(err) == marquee.KindNotFound {
			return marquee.Invoice{}, marquee.Invalid("invalid invoice", marquee.Problems{"advertiserId": "is not an advertiser's id"})
		}
		return marquee.Invoice{}, err
	}
	cat, err := s.cfg.Catalogs.Catalog(ctx)
	if err != nil {
		return marquee.Invoice{}, err
	}
	inv, err := Invoice(ctx, s.cfg.Reports, cat, advertiser, from, to)
	if err != nil {
		return inv, err
	}
	if inv.Prepaid, err = s.prepayment(ctx, &adv, inv.From, inv.To); err != nil {
		return inv, err
	}
	return s.cfg.Store.IssueInvoice(ctx, inv)
}

// addPrepayment sets what invoice inv shows of its advertiser's
// prepaid balance over its period (nil when it is not prepaid), reading
// the advertiser (monthly billing knows only its id).
func (s *Service) addPrepayment(ctx context.Context, inv *marquee.Invoice) error {
	adv, err := s.cfg.Store.Advertiser(ctx, inv.AdvertiserID)
	if err != nil {
		return err
	}
	inv.Prepaid, err = s.prepayment(ctx, &adv, inv.From, inv.To)
	return err
}

// prepayment is what advertiser adv's invoice over [from, to) shows
// besides its lines when it is prepaid (nil when not): the top-ups paid
// in the period (a debit negative), and the balance now.
func (s *Service) prepayment(ctx context.Context, adv *marquee.Advertiser, from, to time.Time) (*marquee.Prepayment, error) {
	if !adv.Prepaid {
		return nil, nil
	}
	bal, err := s.balanceOf(ctx, adv)
	if err != nil {
		return nil, err
	}
	paid, err := s.cfg.Store.ListTopUps(ctx, adv.ID, from, to, 10_000)
	if err != nil {
		return nil, err
	}
	pp := &marquee.Prepayment{Payments: []marquee.Payment{}, Balance: bal.Balance}
	for i := len(paid) - 1; i >= 0; i-- { // oldest first
		t := paid[i]
		ref, amount := t.SessionID, t.Amount
		if t.Kind != marquee.TopUpCard {
			ref = t.Reason
		}
		if t.Kind == marquee.TopUpDebit { // taken from the balance
			amount = -amount
		}
		pp.Payments = append(pp.Payments, marquee.Payment{TopUpID: t.ID, Kind: t.Kind, Amount: amount, PaidAt: t.PaidAt, Reference: ref})
		pp.Paid += amount
	}
	return pp, nil
}

// Credit issues the credit note that cancels invoice inv (every amount
// negated); its period may then be invoiced again. A credit note, or an
// invoice credited already, is a conflict.
func (s *Service) Credit(ctx context.Context, inv marquee.Invoice) (marquee.Invoice, error) {
	if inv.Kind != marquee.KindInvoice || inv.CreditedBy != "" {
		return marquee.Invoice{}, marquee.Errorf(marquee.KindConflict, "%s is a credit note, or was credited already (%s)", inv.Number, inv.CreditedBy)
	}
	return s.cfg.Store.IssueInvoice(ctx, CreditNote(inv))
}

// IssueStatement issues site's numbered statement of what its publisher
// is owed over [from, to) (Statement): a site without a revenue share is
// an invalid request naming site; a period that overlaps one of the
// site's statements is a conflict.
func (s *Service) IssueStatement(ctx context.Context, site string, from, to time.Time) (marquee.Invoice, error) {
	cat, err := s.cfg.Catalogs.Catalog(ctx)
	if err != nil {
		return marquee.Invoice{}, err
	}
	if _, ok := cat.Shares[site]; !ok {
		return marquee.Invoice{}, marquee.Invalid("invalid statement", marquee.Problems{"site": "is not a site's name (POST /api/v1/sites gives a site its revenue share)"})
	}
	st, err := Statement(ctx, s.cfg.Reports, cat, site, from, to)
	if err != nil {
		return st, err
	}
	return s.cfg.Store.IssueInvoice(ctx, st)
}
