package payments_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"

	"marquee"
	"marquee/payments"
)

func sign(payload []byte, at time.Time, secret string) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(payload)))
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// TestEvent: what a verified event says — a paid session (its top-up,
// amount in micro-units, PaymentIntent and payer), a session still
// processing (nothing), a refund, another event (nothing) — and what
// refuses: a bad signature, a session without a topUpId.
func TestEvent(t *testing.T) {
	s, err := payments.New(payments.Config{Key: "sk_test_x", WebhookSecret: "whsec_x"})
	if err != nil {
		t.Fatal(err)
	}
	session := func(status, metadata string) []byte {
		return []byte(`{"id":"evt_1","object":"event","type":"checkout.session.completed","api_version":"2020-08-27","data":{"object":{"id":"cs_1","object":"checkout.session",` +
			`"payment_status":"` + status + `","amount_total":1250,"currency":"jpy","payment_intent":"pi_1","customer_details":{"email":"a@b.test"},"metadata":` + metadata + `}}}`)
	}
	paid := session("paid", `{"topUpId":"7"}`)
	n, err := s.Event(paid, sign(paid, time.Now(), "whsec_x"))
	want := payments.Payment{CardPayment: marquee.CardPayment{EventID: "evt_1", SessionID: "cs_1", PaymentIntent: "pi_1", TopUpID: 7, Amount: 1250_000_000, Currency: "JPY"}, Email: "a@b.test"}
	if err != nil || n.Paid == nil || *n.Paid != want || n.Refunded != nil {
		t.Errorf("Event(paid) = %+v, %v; want %+v", n, err, want)
	}
	if _, err := s.Event(paid, sign(paid, time.Now(), "whsec_y")); !errors.Is(err, payments.ErrSignature) {
		t.Errorf("Event(another secret's) = %v; want ErrSignature", err)
	}
	if _, err := s.Event(paid, sign(paid, time.Now().Add(-6*time.Minute), "whsec_x")); !errors.Is(err, payments.ErrSignature) {
		t.Errorf("Event(six minutes old) = %v; want ErrSignature", err)
	}
	unpaid := session("unpaid", `{"topUpId":"7"}`)
	if n, err := s.Event(unpaid, sign(unpaid, time.Now(), "whsec_x")); err != nil || n.Paid != nil {
		t.Errorf("Event(processing) = %+v, %v; want nothing", n, err)
	}
	none := session("paid", `{}`)
	if _, err := s.Event(none, sign(none, time.Now(), "whsec_x")); err == nil {
		t.Error("Event(no topUpId) = nil; want an error")
	}
	refund := []byte(`{"id":"evt_2","object":"event","type":"charge.refunded","data":{"object":{"id":"ch_1","object":"charge","payment_intent":"pi_1","amount_refunded":499,"currency":"eur"}}}`)
	if n, err := s.Event(refund, sign(refund, time.Now(), "whsec_x")); err != nil || n.Refunded == nil ||
		*n.Refunded != (marquee.CardRefund{EventID: "evt_2", PaymentIntent: "pi_1", Refunded: 4_990_000, Currency: "EUR"}) {
		t.Errorf("Event(refund) = %+v, %v", n.Refunded, err)
	}
	dispute := func(id, typ, status string) []byte {
		return []byte(`{"id":"` + id + `","object":"event","type":"` + typ + `","data":{"object":{"id":"dp_1","object":"dispute","charge":"ch_1",` +
			`"payment_intent":"pi_1","amount":1500,"currency":"eur","status":"` + status + `","reason":"fraudulent"}}}`)
	}
	for _, c := range []struct {
		name  string
		event []byte
		want  *marquee.CardDispute
	}{
		{"opened", dispute("evt_4", "charge.dispute.created", "needs_response"), &marquee.CardDispute{EventID: "evt_4", PaymentIntent: "pi_1", Amount: 15_000_000, Currency: "EUR"}},
		{"won", dispute("evt_5", "charge.dispute.closed", "won"), &marquee.CardDispute{EventID: "evt_5", PaymentIntent: "pi_1", Amount: 15_000_000, Currency: "EUR", Outcome: marquee.DisputeWon}},
		{"lost", dispute("evt_6", "charge.dispute.closed", "lost"), &marquee.CardDispute{EventID: "evt_6", PaymentIntent: "pi_1", Amount: 15_000_000, Currency: "EUR", Outcome: marquee.DisputeLost}},
		{"an inquiry's warning closed", dispute("evt_7", "charge.dispute.closed", "warning_closed"), nil},
	} {
		n, err := s.Event(c.event, sign(c.event, time.Now(), "whsec_x"))
		if err != nil || (n.Disputed == nil) != (c.want == nil) || c.want != nil && *n.Disputed != *c.want {
			t.Errorf("Event(dispute %s) = %+v, %v; want %+v", c.name, n.Disputed, err, c.want)
		}
	}
	other := []byte(`{"id":"evt_3","object":"event","type":"customer.created","data":{"object":{"id":"cus_1"}}}`)
	if n, err := s.Event(other, sign(other, time.Now(), "whsec_x")); err != nil || n.Paid != nil || n.Refunded != nil {
		t.Errorf("Event(customer.created) = %+v, %v; want nothing", n, err)
	}
}

// TestMinorUnits: amounts in the currency's smallest unit, as Stripe
// counts them; a finer amount is refused.
func TestMinorUnits(t *testing.T) {
	for _, c := range []struct {
		m        marquee.Micros
		currency string
		want     int64
		ok       bool
	}{
		{12_500_000, "EUR", 1250, true}, {12_345_000, "usd", 0, false}, {12_000_000, "JPY", 12, true}, {12_500_000, "JPY", 0, false},
		{1_234_000, "KWD", 1234, true}, {1_234_500, "KWD", 0, false},
	} {
		got, err := payments.MinorUnits(c.m, c.currency)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("MinorUnits(%s %s) = %d, %v; want %d (ok %t)", c.m, c.currency, got, err, c.want, c.ok)
		}
		if c.ok {
			if back, err := payments.FromMinorUnits(got, c.currency); err != nil || back != c.m {
				t.Errorf("FromMinorUnits(%d %s) = %s, %v; want %s", got, c.currency, back, err, c.m)
			}
		}
	}
}
