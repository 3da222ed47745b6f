package sqltx

import (
	"cmp"
	"context"
	"errors"
	"time"

	"marquee"
)

// Top-ups of prepaid balances: a row each (top_ups); a paid one raises
// its advertiser's credited_micros in the transaction that marks it paid,
// with a changelog entry of the advertiser, so that every instance's
// budgets read the new balance; a Stripe event that credited one is
// recorded (stripe_events) so that it credits nothing again.

const topUpCols = `id, advertiser_id, kind, amount_micros, currency, status, reason, checkout_url, session_id, event_id, created_by, created_at, paid_at,
	payment_intent, refunded_micros, dispute, disputed_micros`

func scanTopUp(r Row) (marquee.TopUp, error) {
	var t marquee.TopUp
	var created, paid, amount, refunded, disputed int64
	if err := r.Scan(&t.ID, &t.AdvertiserID, &t.Kind, &amount, &t.Currency, &t.Status, &t.Reason, &t.CheckoutURL, &t.SessionID, &t.EventID,
		&t.CreatedBy, &created, &paid, &t.PaymentIntent, &refunded, &t.Dispute, &disputed); err != nil {
		return t, err
	}
	t.Amount, t.Refunded, t.Disputed, t.CreatedAt = marquee.Micros(amount), marquee.Micros(refunded), marquee.Micros(disputed), time.UnixMilli(created).UTC()
	if paid != 0 {
		t.PaidAt = time.UnixMilli(paid).UTC()
	}
	return t, nil
}

// prepaidAdvertiser locks advertiser id for a change of its balance: it
// must exist, be active and be prepaid.
func (s *Store) prepaidAdvertiser(ctx context.Context, tx Tx, id int64) (marquee.Advertiser, error) {
	a, err := scanAdvertiser(tx.QueryRow(ctx, `SELECT `+advertiserCols+` FROM advertisers WHERE id = ?`+s.cfg.ForUpdate, id))
	switch {
	case errors.Is(err, ErrNoRows):
		return a, marquee.NoAdvertiser(id)
	case err != nil:
		return a, err
	case !a.Prepaid:
		return a, marquee.Errorf(marquee.KindConflict, "advertiser %d is not prepaid: it is invoiced for what it spends", id)
	case a.State != marquee.StateActive:
		return a, marquee.Errorf(marquee.KindConflict, "advertiser %d is archived", id)
	}
	return a, nil
}

// CreateTopUp keeps t, a new top-up of a prepaid advertiser: a card
// payment pending its Checkout Session (AttachCheckout), or a credit,
// paid at once — its amount added to the advertiser's balance, its
// advertiser's changelog entry written (and audited) in the same
// transaction.
func (s *Store) CreateTopUp(ctx context.Context, t marquee.TopUp) (marquee.TopUp, error) {
	return write(ctx, s, "create top-up", func(tx Tx, now time.Time) (marquee.TopUp, error) {
		if _, err := s.prepaidAdvertiser(ctx, tx, t.AdvertiserID); err != nil {
			return t, err
		}
		t.CreatedAt, t.Status, t.PaidAt = now, marquee.TopUpPending, time.Time{}
		var paid int64
		if t.Kind != marquee.TopUpCard {
			t.Status, t.PaidAt, paid = marquee.TopUpPaid, now, now.UnixMilli()
		}
		var err error
		t.ID, err = s.insertID(ctx, tx, `INSERT INTO top_ups (advertiser_id, kind, amount_micros, currency, status, reason, checkout_url, created_by, created_at, paid_at)
			VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?)`, "", t.AdvertiserID, t.Kind, int64(t.Amount), t.Currency, t.Status, t.Reason, t.CreatedBy, now.UnixMilli(), paid)
		if err != nil {
			return t, err
		}
		switch t.Kind {
		case marquee.TopUpCredit:
			return t, s.credit(ctx, tx, t, now)
		case marquee.TopUpDebit:
			return t, s.addCredit(ctx, tx, t, -t.Amount, now)
		}
		return t, withChange(tx, nil, t).LogChange(ctx, marquee.EntityTopUp, t.ID, "", marquee.OpPut)
	})
}

// credit adds paid top-up t to its advertiser's balance: every instance
// reads it again (its changelog entry, audited as the top-up's).
func (s *Store) credit(ctx context.Context, tx Tx, t marquee.TopUp, now time.Time) error {
	return s.addCredit(ctx, tx, t, t.Amount, now)
}

// addCredit adds n (negative: takes it back) to the balance of top-up t's
// advertiser, and logs both.
func (s *Store) addCredit(ctx context.Context, tx Tx, t marquee.TopUp, n marquee.Micros, now time.Time) error {
	var before int64
	if err := tx.QueryRow(ctx, `SELECT credited_micros FROM advertisers WHERE id = ?`+s.cfg.ForUpdate, t.AdvertiserID).Scan(&before); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE advertisers SET credited_micros = credited_micros + ?, updated_at = ? WHERE id = ?`,
		int64(n), now.UnixMilli(), t.AdvertiserID); err != nil {
		return err
	}
	// Audited with what the advertiser was credited in all before and
	// after, and the top-up as it is now.
	type credited struct {
		Credited marquee.Micros `json:"credited"`
		TopUp    *marquee.TopUp `json:"topUp,omitempty"`
	}
	if err := withChange(tx, credited{Credited: marquee.Micros(before)}, credited{marquee.Micros(before) + n, &t}).
		LogChange(ctx, marquee.EntityTopUp, t.ID, "", marquee.OpPut); err != nil {
		return err
	}
	return tx.LogChange(ctx, marquee.EntityAdvertiser, t.AdvertiserID, "", marquee.OpPut)
}

// AttachCheckout records the Checkout Session Stripe opened for pending
// top-up id (its id and the URL the payer goes to); with failed, that
// none could be opened (the top-up is then failed: nothing can pay it).
func (s *Store) AttachCheckout(ctx context.Context, id int64, sessionID, url string, failed bool) (marquee.TopUp, error) {
	return write(ctx, s, "attach checkout", func(tx Tx, now time.Time) (marquee.TopUp, error) {
		status := marquee.TopUpPending
		if failed {
			status = marquee.TopUpFailed
		}
		n, err := tx.Exec(ctx, `UPDATE top_ups SET session_id = ?, checkout_url = ?, status = ? WHERE id = ? AND status = ? AND session_id = ''`,
			sessionID, url, status, id, marquee.TopUpPending)
		if err != nil {
			return marquee.TopUp{}, err
		}
		t, err := scanTopUp(tx.QueryRow(ctx, `SELECT `+topUpCols+` FROM top_ups WHERE id = ?`, id))
		switch {
		case errors.Is(err, ErrNoRows):
			return t, marquee.NoTopUp(id)
		case err == nil && n == 0:
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d has its Checkout Session already", id)
		case err != nil || !failed:
			return t, err
		}
		return t, tx.LogChange(ctx, marquee.EntityTopUp, id, "", marquee.OpPut) // audited: failed
	})
}

// CreditPayment credits the top-up p names, once: when p's event was
// seen before it changes nothing (marquee.ErrPaymentSeen); when the top-up is not
// pending, or its Checkout Session, amount or currency are not p's, it
// changes nothing and says why (a KindConflict error). Else, in one
// transaction, the event is recorded, the top-up is paid and its
// advertiser's balance raised (a changelog entry, audited as ctx says).
func (s *Store) CreditPayment(ctx context.Context, p marquee.CardPayment) (marquee.TopUp, error) {
	return write(ctx, s, "credit payment", func(tx Tx, now time.Time) (marquee.TopUp, error) {
		n, err := tx.Exec(ctx, `INSERT INTO stripe_events (id, top_up_id, at) VALUES (?, ?, ?)`+s.upsert("stripe_events", "id", nil, nil),
			p.EventID, p.TopUpID, now.UnixMilli())
		if err != nil {
			return marquee.TopUp{}, err
		}
		if n == 0 {
			return marquee.TopUp{}, marquee.ErrPaymentSeen
		}
		t, err := scanTopUp(tx.QueryRow(ctx, `SELECT `+topUpCols+` FROM top_ups WHERE id = ?`+s.cfg.ForUpdate, p.TopUpID))
		switch {
		case errors.Is(err, ErrNoRows):
			return t, marquee.NoTopUp(p.TopUpID)
		case err != nil:
			return t, err
		case t.Kind != marquee.TopUpCard || t.Status != marquee.TopUpPending:
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d is %s, not a pending card payment", t.ID, t.Status)
		case t.SessionID != p.SessionID:
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d is paid through Checkout Session %q, not %q", t.ID, t.SessionID, p.SessionID)
		case t.Amount != p.Amount || t.Currency != p.Currency:
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d is %s %s; the payment is %s %s", t.ID, t.Amount, t.Currency, p.Amount, p.Currency)
		}
		if _, err := s.prepaidAdvertiser(ctx, tx, t.AdvertiserID); err != nil {
			return t, err
		}
		if _, err := tx.Exec(ctx, `UPDATE top_ups SET status = ?, event_id = ?, payment_intent = ?, paid_at = ? WHERE id = ?`,
			marquee.TopUpPaid, p.EventID, p.PaymentIntent, now.UnixMilli(), t.ID); err != nil {
			return t, err
		}
		t.Status, t.EventID, t.PaymentIntent, t.PaidAt = marquee.TopUpPaid, p.EventID, p.PaymentIntent, now
		return t, s.credit(ctx, tx, t, now)
	})
}

// RefundPayment takes back from the balance what Stripe refunded of the
// card payment r names, once: an event seen before changes nothing
// (marquee.ErrPaymentSeen); a payment no paid top-up made, a currency
// not its, or an event that refunds no more than was taken back already
// (an older one, delivered late) is a KindConflict error. r.Refunded is
// the payment's refunds in all: only what it adds to what was taken back
// before is taken (never more than the top-up), in one transaction with the event's id
// and the advertiser's changelog entry. The balance may fall below what
// was spent: its campaigns then stop.
func (s *Store) RefundPayment(ctx context.Context, r marquee.CardRefund) (marquee.TopUp, error) {
	return write(ctx, s, "refund payment", func(tx Tx, now time.Time) (marquee.TopUp, error) {
		if r.PaymentIntent == "" {
			return marquee.TopUp{}, marquee.Errorf(marquee.KindConflict, "the refund names no payment")
		}
		t, err := scanTopUp(tx.QueryRow(ctx, `SELECT `+topUpCols+` FROM top_ups WHERE payment_intent = ? AND status = ?`+s.cfg.ForUpdate, r.PaymentIntent, marquee.TopUpPaid))
		switch {
		case errors.Is(err, ErrNoRows):
			return t, marquee.Errorf(marquee.KindConflict, "no paid top-up was made by payment %q", r.PaymentIntent)
		case err != nil:
			return t, err
		case t.Currency != r.Currency:
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d is in %s; the refund in %s", t.ID, t.Currency, r.Currency)
		}
		n, err := tx.Exec(ctx, `INSERT INTO stripe_events (id, top_up_id, at) VALUES (?, ?, ?)`+s.upsert("stripe_events", "id", nil, nil), r.EventID, t.ID, now.UnixMilli())
		if err != nil {
			return t, err
		}
		if n == 0 {
			return t, marquee.ErrPaymentSeen
		}
		refunded := min(r.Refunded, t.Amount)
		if refunded <= t.Refunded { // an older event, delivered late
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d has %s refunded already; this event says %s in all", t.ID, t.Refunded, r.Refunded)
		}
		if _, err := tx.Exec(ctx, `UPDATE top_ups SET refunded_micros = ? WHERE id = ?`, int64(refunded), t.ID); err != nil {
			return t, err
		}
		took := refunded - t.Refunded
		t.Refunded = refunded
		return t, s.addCredit(ctx, tx, t, -took, now)
	})
}

// DisputePayment applies a chargeback of the card payment d names, once
// per event (an event seen before changes nothing: marquee.ErrPaymentSeen).
// A dispute opened takes what it disputes (never more than what is left
// of the payment after its refunds) from the balance; won, that is given
// back; lost, it stays taken (and is taken when Stripe's closing event
// came first). A payment no paid top-up made, a currency not its, or an
// event its dispute's state has passed (an opening after it closed, a
// second closing) is a KindConflict error. In one transaction with the
// event's id and the advertiser's changelog entry; audited as ctx says.
func (s *Store) DisputePayment(ctx context.Context, d marquee.CardDispute) (marquee.TopUp, error) {
	return write(ctx, s, "dispute payment", func(tx Tx, now time.Time) (marquee.TopUp, error) {
		if d.PaymentIntent == "" {
			return marquee.TopUp{}, marquee.Errorf(marquee.KindConflict, "the dispute names no payment")
		}
		t, err := scanTopUp(tx.QueryRow(ctx, `SELECT `+topUpCols+` FROM top_ups WHERE payment_intent = ? AND status = ?`+s.cfg.ForUpdate, d.PaymentIntent, marquee.TopUpPaid))
		switch {
		case errors.Is(err, ErrNoRows):
			return t, marquee.Errorf(marquee.KindConflict, "no paid top-up was made by payment %q", d.PaymentIntent)
		case err != nil:
			return t, err
		case t.Currency != d.Currency:
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d is in %s; the dispute in %s", t.ID, t.Currency, d.Currency)
		}
		n, err := tx.Exec(ctx, `INSERT INTO stripe_events (id, top_up_id, at) VALUES (?, ?, ?)`+s.upsert("stripe_events", "id", nil, nil), d.EventID, t.ID, now.UnixMilli())
		if err != nil {
			return t, err
		}
		if n == 0 {
			return t, marquee.ErrPaymentSeen
		}
		held := min(d.Amount, t.Amount-t.Refunded)
		var move marquee.Micros // what the balance gains
		switch {
		case d.Outcome == "" && t.Dispute == "":
			t.Dispute, t.Disputed, move = marquee.DisputeOpen, held, -held
		case d.Outcome == marquee.DisputeWon && t.Dispute == marquee.DisputeOpen:
			t.Dispute, t.Disputed, move = marquee.DisputeWon, 0, t.Disputed
		case d.Outcome == marquee.DisputeWon && t.Dispute == "":
			t.Dispute = marquee.DisputeWon
		case d.Outcome == marquee.DisputeLost && t.Dispute == marquee.DisputeOpen:
			t.Dispute = marquee.DisputeLost
		case d.Outcome == marquee.DisputeLost && t.Dispute == "":
			t.Dispute, t.Disputed, move = marquee.DisputeLost, held, -held
		default:
			return t, marquee.Errorf(marquee.KindConflict, "top-up %d's dispute is %s already; this event says %s", t.ID, t.Dispute, cmp.Or(d.Outcome, "opened"))
		}
		if _, err := tx.Exec(ctx, `UPDATE top_ups SET dispute = ?, disputed_micros = ? WHERE id = ?`, t.Dispute, int64(t.Disputed), t.ID); err != nil {
			return t, err
		}
		return t, s.addCredit(ctx, tx, t, move, now)
	})
}

// TopUp returns top-up id, or marquee.NoTopUp.
func (s *Store) TopUp(ctx context.Context, id int64) (marquee.TopUp, error) {
	return withDB(ctx, s, "get top-up", func(db DB) (marquee.TopUp, error) {
		t, err := scanTopUp(db.QueryRow(ctx, `SELECT `+topUpCols+` FROM top_ups WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return t, marquee.NoTopUp(id)
		}
		return t, err
	})
}

// ListTopUps returns advertiser's top-ups, newest first, at most limit;
// with paidFrom and paidTo set, only those paid in [paidFrom, paidTo).
func (s *Store) ListTopUps(ctx context.Context, advertiser int64, paidFrom, paidTo time.Time, limit int) ([]marquee.TopUp, error) {
	return withDB(ctx, s, "list top-ups", func(db DB) ([]marquee.TopUp, error) {
		q, args := `SELECT `+topUpCols+` FROM top_ups WHERE advertiser_id = ?`, []any{advertiser}
		if !paidTo.IsZero() {
			q, args = q+` AND status = ? AND paid_at >= ? AND paid_at < ?`, append(args, marquee.TopUpPaid, paidFrom.UnixMilli(), paidTo.UnixMilli())
		}
		return query(ctx, db, func(r Rows) (marquee.TopUp, error) { return scanTopUp(r) }, q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	})
}
