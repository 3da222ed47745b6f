package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stripeWebhookSecret is the webhook signing secret the tests' servers
// are given.
const stripeWebhookSecret = "whsec_marquee_test_secret"

// stripeFlags are the flags of a server whose card payments go to the
// stripe-mock of MARQUEE_TEST_STRIPE (skipped without it).
func stripeFlags(t *testing.T) []string {
	t.Helper()
	api := os.Getenv("MARQUEE_TEST_STRIPE")
	if api == "" {
		t.Skip("MARQUEE_TEST_STRIPE is not set (a stripe-mock's URL: go install github.com/stripe/stripe-mock@v0.203.0; stripe-mock -http-port 12111): card payments are not tested")
	}
	return []string{"-stripe-key", "sk_test_marquee", "-stripe-api", api, "-stripe-webhook-secret", stripeWebhookSecret}
}

// checkoutEvent is a Stripe event of type typ whose object is a paid
// Checkout Session: session, paying amount (in cents) of currency for
// top-up topUp, by payer.
func checkoutEvent(id, typ, session, topUp string, cents int64, currency, payer string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "api_version": "2025-08-27.basil", "created": time.Now().Unix(), "livemode": false,
		"data": map[string]any{"object": map[string]any{
			"id": session, "object": "checkout.session", "mode": "payment", "status": "complete", "payment_status": "paid",
			"amount_total": cents, "currency": currency, "client_reference_id": topUp, "payment_intent": "pi_" + session,
			"metadata":         map[string]string{"topUpId": topUp},
			"customer_details": map[string]any{"email": payer},
		}},
	})
	return b
}

// stripeSignature signs payload as Stripe signs a webhook at t (docs:
// "t=TIMESTAMP,v1=HEX(HMAC-SHA256(secret, TIMESTAMP.payload))"), with
// one v1 per secret, in order — written here from Stripe's documented
// scheme, not with the library the server verifies with.
func stripeSignature(payload []byte, at time.Time, secrets ...string) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := "t=" + ts
	for _, s := range secrets {
		mac := hmac.New(sha256.New, []byte(s))
		mac.Write([]byte(ts + "."))
		mac.Write(payload)
		h += ",v1=" + hex.EncodeToString(mac.Sum(nil))
	}
	return h
}

// refundEvent is a Stripe charge.refunded event of the charge of
// PaymentIntent pi: cents refunded of it in all.
func refundEvent(id, pi string, cents int64, currency string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": "charge.refunded", "api_version": "2025-08-27.basil", "created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{"id": "ch_" + pi, "object": "charge", "payment_intent": pi, "amount_refunded": cents,
			"currency": currency, "refunded": true}},
	})
	return b
}

// disputeEvent is a Stripe chargeback event of type typ (charge.dispute.
// created or .closed) of the charge of PaymentIntent pi: cents disputed,
// its status.
func disputeEvent(id, typ, pi string, cents int64, currency, status string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "api_version": "2025-08-27.basil", "created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{"id": "dp_" + pi, "object": "dispute", "charge": "ch_" + pi, "payment_intent": pi,
			"amount": cents, "currency": currency, "status": status, "reason": "fraudulent"}},
	})
	return b
}

// webhook posts a Stripe event to in's /stripe/webhook with signature.
func (in *instance) webhook(payload []byte, signature string) response {
	in.t.Helper()
	return in.doHeaders("POST", "/stripe/webhook", "application/json", string(payload), "Stripe-Signature", signature, "User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
}

type topUpAnswer struct {
	ID, CheckoutURL, StripeSessionID, Status, Kind string
	Amount                                         float64
}

// topUp creates a top-up of advertiser adv with body and returns it.
func (in *instance) topUp(adv, body string) topUpAnswer {
	in.t.Helper()
	r := in.admin("POST", "/api/v1/advertisers/"+adv+"/top-ups", body)
	var tu topUpAnswer
	if r.status != 201 || json.Unmarshal([]byte(r.body), &tu) != nil {
		in.t.Fatalf("POST top-ups %s = %d %s; want 201", body, r.status, r.body)
	}
	return tu
}

type balanceAnswer struct {
	Balance, Credited, Spent float64
	Currency                 string
	TopUps                   []struct{ ID, Status, Kind string }
}

// balance reads advertiser adv's balance.
func (in *instance) balance(adv string) balanceAnswer {
	in.t.Helper()
	r := in.admin("GET", "/api/v1/advertisers/"+adv+"/balance", "")
	var b balanceAnswer
	if r.status != 200 || json.Unmarshal([]byte(r.body), &b) != nil {
		in.t.Fatalf("GET balance = %d %s; want 200", r.status, r.body)
	}
	return b
}

// TestTopUpByCard: a prepaid advertiser's top-up opens a Checkout
// Session on stripe-mock (Stripe's API double, which checks the request
// against Stripe's API), and only Stripe's signed webhook of that
// session's payment credits the balance — once: a replayed event, a
// wrong signature, a signature older than the tolerance, a mismatched
// amount or currency, another session, and events of other kinds change
// nothing. Every signature of the header is tried (a secret being
// rolled). Refunds made in Stripe take back what they refund, once. The
// payer gets a receipt; the audit log names Stripe; a
// credit from the team adds to the balance; an advertiser's account pays
// by card but cannot credit itself.
func TestTopUpByCard(t *testing.T) {
	t.Parallel()
	mail, addr := startMailbox(t)
	in := start(t, t.TempDir(), nil, append(stripeFlags(t), "-currency", "EUR", "-smtp", "smtp://"+addr+"?tls=none", "-smtp-from", "billing@marquee.test")...)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Invoiced"}`), 201, "")
	r := in.admin("POST", "/api/v1/advertisers", `{"name":"Acme","prepaid":true}`)
	if r.status != 201 || !strings.Contains(r.body, `"prepaid":true`) {
		t.Fatalf("create a prepaid advertiser = %d %s", r.status, r.body)
	}
	if r := in.admin("POST", "/api/v1/advertisers/1/top-ups", `{"amount":50}`); r.status != 409 || !strings.Contains(r.body, "not prepaid") {
		t.Errorf("a top-up of an invoiced advertiser = %d %s; want 409", r.status, r.body)
	}
	for _, bad := range []string{`{}`, `{"amount":0}`, `{"amount":-5}`, `{"amount":"12.345"}`, `{"amount":5,"kind":"gift"}`, `{"amount":5,"kind":"credit"}`} {
		if r := in.admin("POST", "/api/v1/advertisers/2/top-ups", bad); r.status != 400 {
			t.Errorf("top-up %s = %d %s; want 400 naming the field", bad, r.status, r.body)
		}
	}
	if r := in.admin("PUT", "/api/v1/advertisers/2", `{"name":"Acme"}`); r.status != 400 || !strings.Contains(r.body, `"prepaid"`) {
		t.Errorf("turning a prepaid advertiser invoiced = %d %s; want 400 naming prepaid", r.status, r.body)
	}

	tu := in.topUp("2", `{"amount":50}`)
	if tu.Status != "pending" || !strings.HasPrefix(tu.CheckoutURL, "https://") || !strings.HasPrefix(tu.StripeSessionID, "cs_") || tu.Amount != 50 {
		t.Fatalf("top-up = %+v; want pending, with the Checkout Session's id and URL", tu)
	}
	if b := in.balance("2"); b.Balance != 0 || b.Credited != 0 || len(b.TopUps) != 1 || b.TopUps[0].Status != "pending" || b.Currency != "EUR" {
		t.Fatalf("balance before paying = %+v; want 0 EUR and a pending top-up", b)
	}

	now := time.Now()
	paid := checkoutEvent("evt_paid_1", "checkout.session.completed", tu.StripeSessionID, tu.ID, 5000, "eur", "payer@acme.test")
	for _, c := range []struct {
		name      string
		payload   []byte
		signature string
		status    int
	}{
		{"no signature", paid, "", 400},
		{"a wrong secret", paid, stripeSignature(paid, now, "whsec_someone_else"), 400},
		{"an old timestamp", paid, stripeSignature(paid, now.Add(-10*time.Minute), stripeWebhookSecret), 400},
		{"a body changed after signing", []byte(strings.Replace(string(paid), "5000", "500000", 1)), stripeSignature(paid, now, stripeWebhookSecret), 400},
		{"a smaller amount", checkoutEvent("evt_less", "checkout.session.completed", tu.StripeSessionID, tu.ID, 4999, "eur", ""), "", 200},
		{"another currency", checkoutEvent("evt_usd", "checkout.session.completed", tu.StripeSessionID, tu.ID, 5000, "usd", ""), "", 200},
		{"another session", checkoutEvent("evt_other", "checkout.session.completed", "cs_test_other", tu.ID, 5000, "eur", ""), "", 200},
		{"an unknown top-up", checkoutEvent("evt_unknown", "checkout.session.completed", tu.StripeSessionID, "99", 5000, "eur", ""), "", 200},
		{"another event", checkoutEvent("evt_expired", "checkout.session.expired", tu.StripeSessionID, tu.ID, 5000, "eur", ""), "", 200},
	} {
		sig := c.signature
		if c.status == 200 {
			sig = stripeSignature(c.payload, now, stripeWebhookSecret)
		}
		r := in.webhook(c.payload, sig)
		if r.status != c.status || strings.Contains(r.body, `"credited":true`) {
			t.Errorf("%s: webhook = %d %s; want %d, nothing credited", c.name, r.status, r.body, c.status)
		}
		if b := in.balance("2"); b.Balance != 0 || b.TopUps[0].Status != "pending" {
			t.Fatalf("%s: balance = %+v; want 0 and the top-up pending", c.name, b)
		}
	}

	// The payment, signed with a rolled secret first and the endpoint's
	// second: credited once.
	if r := in.webhook(paid, stripeSignature(paid, now, "whsec_old_secret", stripeWebhookSecret)); r.status != 200 || !strings.Contains(r.body, `"credited":true`) {
		t.Fatalf("the payment's webhook = %d %s; want 200 credited", r.status, r.body)
	}
	for _, replay := range [][]byte{paid, checkoutEvent("evt_paid_again", "checkout.session.async_payment_succeeded", tu.StripeSessionID, tu.ID, 5000, "eur", "")} {
		if r := in.webhook(replay, stripeSignature(replay, time.Now(), stripeWebhookSecret)); r.status != 200 || strings.Contains(r.body, `"credited":true`) {
			t.Errorf("a payment delivered again = %d %s; want 200, nothing credited", r.status, r.body)
		}
	}
	if b := in.balance("2"); b.Balance != 50 || b.Credited != 50 || b.TopUps[0].Status != "paid" {
		t.Errorf("balance after paying = %+v; want 50 credited once, the top-up paid", b)
	}
	eventually(t, 5*time.Second, func() string {
		mail.mu.Lock()
		defer mail.mu.Unlock()
		if len(mail.msgs) != 1 || !strings.Contains(mail.msgs[0], "payer@acme.test") || !strings.Contains(mail.msgs[0], "50 EUR") {
			return fmt.Sprintf("mails = %q; want one receipt of 50 EUR to the payer", mail.msgs)
		}
		return ""
	})

	// Refunds made in Stripe take back what they refunded, once each,
	// never more than the payment; an older event changes nothing.
	pi := "pi_" + tu.StripeSessionID
	for _, c := range []struct {
		name    string
		event   []byte
		refund  bool
		balance float64
	}{
		{"a refund of 10", refundEvent("evt_refund_1", pi, 1000, "eur"), true, 40},
		{"the same event again", refundEvent("evt_refund_1", pi, 1000, "eur"), false, 40},
		{"an older event (5 in all)", refundEvent("evt_refund_0", pi, 500, "eur"), false, 40},
		{"another payment's refund", refundEvent("evt_refund_x", "pi_other", 5000, "eur"), false, 40},
		{"a refund in another currency", refundEvent("evt_refund_usd", pi, 2000, "usd"), false, 40},
		{"another 5 (15 in all)", refundEvent("evt_refund_2", pi, 1500, "eur"), true, 35},
	} {
		r := in.webhook(c.event, stripeSignature(c.event, time.Now(), stripeWebhookSecret))
		if r.status != 200 || strings.Contains(r.body, `"refunded":true`) != c.refund {
			t.Errorf("%s: webhook = %d %s; want 200, refunded %t", c.name, r.status, r.body, c.refund)
		}
		if b := in.balance("2"); b.Balance != c.balance {
			t.Errorf("%s: balance = %+v; want %v", c.name, b, c.balance)
		}
	}

	// A chargeback takes what it disputes back from the balance, once; won,
	// it is given back.
	for _, c := range []struct {
		name     string
		event    []byte
		disputed string
		balance  float64
	}{
		{"a dispute of 20 opened", disputeEvent("evt_dp_1", "charge.dispute.created", pi, 2000, "eur", "needs_response"), "open", 15},
		{"the same event again", disputeEvent("evt_dp_1", "charge.dispute.created", pi, 2000, "eur", "needs_response"), "", 15},
		{"the dispute won", disputeEvent("evt_dp_2", "charge.dispute.closed", pi, 2000, "eur", "won"), "won", 35},
		{"closed again", disputeEvent("evt_dp_3", "charge.dispute.closed", pi, 2000, "eur", "lost"), "", 35},
	} {
		r := in.webhook(c.event, stripeSignature(c.event, time.Now(), stripeWebhookSecret))
		if r.status != 200 || c.disputed != "" && !strings.Contains(r.body, `"disputed":"`+c.disputed+`"`) || c.disputed == "" && strings.Contains(r.body, `"disputed"`) {
			t.Errorf("%s: webhook = %d %s; want 200, disputed %q", c.name, r.status, r.body, c.disputed)
		}
		if b := in.balance("2"); b.Balance != c.balance {
			t.Errorf("%s: balance = %+v; want %v", c.name, b, c.balance)
		}
	}
	// A debit by the team (a payment reversed outside Stripe), given back
	// as a credit.
	if d := in.topUp("2", `{"amount":4,"kind":"debit","reason":"a bank transfer reversed"}`); d.Status != "paid" || in.balance("2").Balance != 31 {
		t.Errorf("a debit of 4 = %+v, balance %+v; want paid at once, 31", d, in.balance("2"))
	}
	in.topUp("2", `{"amount":4,"kind":"credit","reason":"the debit undone"}`)

	// Credits from the team, refused to the advertiser's own account,
	// which pays by card.
	credit := in.topUp("2", `{"amount":"2.5","kind":"credit","reason":"refund of a misdelivered day"}`)
	if credit.Status != "paid" || credit.Kind != "credit" {
		t.Errorf("credit = %+v; want paid at once", credit)
	}
	var key struct{ Key string }
	json.Unmarshal([]byte(in.admin("POST", "/api/v1/keys", `{"name":"acme","scopes":["billing:write","reports:read"],"advertisers":["2"]}`).body), &key)
	if r := in.do("POST", "/api/v1/advertisers/2/top-ups", key.Key, "application/json", `{"amount":5,"kind":"credit","reason":"free money"}`); r.status != 403 {
		t.Errorf("an advertiser's credit to itself = %d %s; want 403", r.status, r.body)
	}
	if r := in.do("POST", "/api/v1/advertisers/2/top-ups", key.Key, "application/json", `{"amount":5,"kind":"debit","reason":"mine"}`); r.status != 403 {
		t.Errorf("an advertiser's debit = %d %s; want 403", r.status, r.body)
	}
	if r := in.do("GET", "/api/v1/advertisers/2/balance", key.Key, "", ""); r.status != 200 || !strings.Contains(r.body, `"balance":37.5`) {
		t.Errorf("the advertiser's own balance by its account = %d %s; want 200, 37.5", r.status, r.body)
	}
	if r := in.do("POST", "/api/v1/advertisers/1/top-ups", key.Key, "application/json", `{"amount":5}`); r.status != 404 {
		t.Errorf("an advertiser's top-up of another = %d %s; want 404", r.status, r.body)
	}
	if r := in.do("POST", "/api/v1/advertisers/2/top-ups", key.Key, "application/json", `{"amount":20}`); r.status != 201 || !strings.Contains(r.body, `"checkoutUrl":"https://`) {
		t.Errorf("an advertiser's own top-up by card = %d %s; want 201 with its checkout URL", r.status, r.body)
	}
	if b := in.balance("2"); b.Balance != 37.5 || len(b.TopUps) != 5 {
		t.Errorf("balance = %+v; want 37.5 (50 paid, 15 refunded, 2.5 credited, 4 debited and credited back), five top-ups", b)
	}
	r = in.admin("GET", "/api/v1/audit?entity=topUp", "")
	if !strings.Contains(r.body, `"actor":"stripe"`) || !strings.Contains(r.body, `"action":"pay"`) || strings.Count(r.body, `"action":"refund"`) != 2 ||
		!strings.Contains(r.body, `"action":"dispute open"`) || !strings.Contains(r.body, `"action":"dispute won"`) ||
		strings.Count(r.body, `"entity":"topUp"`) < 6 {
		t.Errorf("audit of top-ups = %s; want each top-up made, Stripe's payment and its two refunds", r.body)
	}
	if r := in.admin("POST", "/api/v1/campaigns", `{"advertiserId":"2","name":"flat",`+flightJSON(-time.Hour, time.Hour)+`,"price":{"model":"flat","amount":100}}`); r.status != 400 || !strings.Contains(r.body, `"price.model"`) {
		t.Errorf("a flat fee of a prepaid advertiser = %d %s; want 400 naming price.model", r.status, r.body)
	}
}

// TestPrepaidBalanceThreeInstances: three instances on one PostgreSQL,
// their spend in one Redis. A prepaid advertiser's campaign does not
// serve before its balance is paid (delivery's why names the balance);
// a card payment credited by the webhook on one instance lets it serve
// on every one; a client that collects 200 decisions and fires their
// impressions across the instances is billed exactly the balance (10
// impressions at a CPM of 10 on a balance of 0.1), never more; the
// campaign then stops, and a credit lets it serve again. The invoice of
// the day shows the payments and the balance.
func TestPrepaidBalanceThreeInstances(t *testing.T) {
	t.Parallel()
	flags := stripeFlags(t)
	ins := budgetFleet(t, append(flags, "-tracking-key", strings.Repeat("k", 32))...)
	a := ins[0]
	a.expect(a.admin("POST", "/api/v1/advertisers", `{"name":"Prepaid","prepaid":true}`), 201, "")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	a.campaign(`{"advertiserId":"2","name":"prepaid",` + flight + `,"priority":"sponsorship","price":{"model":"cpm","amount":10}}`)
	a.expect(a.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t"}}`), 201, "")
	why := func(in *instance) string {
		var d struct{ Why string }
		json.Unmarshal([]byte(in.admin("GET", "/api/v1/campaigns/1/delivery", "").body), &d)
		return d.Why
	}
	eventually(t, 5*time.Second, func() string {
		for _, in := range ins {
			if w := why(in); !strings.Contains(w, "balance") {
				return "delivery before any payment says " + w + "; want the balance"
			}
		}
		return ""
	})
	decide := func(in *instance) (string, string) {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}]}`)
		var got struct {
			Decisions map[string][]struct{ CampaignID, ImpressionURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["d"]) != 1 {
			return "", ""
		}
		return got.Decisions["d"][0].CampaignID, got.Decisions["d"][0].ImpressionURL
	}
	if c, _ := decide(ins[1]); c != "" {
		t.Fatalf("a decision before any payment served campaign %s", c)
	}

	tu := ins[1].topUp("2", `{"amount":0.1}`)
	paid := checkoutEvent("evt_three_1", "checkout.session.completed", tu.StripeSessionID, tu.ID, 10, "eur", "")
	if r := ins[2].webhook(paid, stripeSignature(paid, time.Now(), stripeWebhookSecret)); !strings.Contains(r.body, `"credited":true`) {
		t.Fatalf("the payment's webhook = %d %s", r.status, r.body)
	}
	servingEverywhere(t, ins)
	var urls []string
	for i := range 200 {
		c, u := decide(ins[i%3])
		if c != "1" {
			t.Fatalf("decision %d served %q; want the prepaid campaign (nothing fired yet)", i, c)
		}
		urls = append(urls, u)
	}
	fireElsewhere(t, ins, urls)
	now := time.Now().UTC()
	eventually(t, 10*time.Second, func() string {
		if tot, body := campaignTotals(a, now); tot.Impressions != 200 || tot.Spend != 0.1 || tot.Unbilled != 190 {
			return "the report: " + body + "; want 200 impressions, spend 0.1 (the balance), 190 unbilled"
		}
		for _, in := range ins {
			if b := in.balance("2"); b.Balance != 0 || b.Spent != 0.1 || b.Credited != 0.1 {
				return fmt.Sprintf("balance = %+v; want 0.1 credited, 0.1 spent, 0 left", b)
			}
			if w := why(in); !strings.Contains(w, "balance") {
				return "delivery once spent says " + w + "; want the balance"
			}
		}
		return ""
	})

	a.topUp("2", `{"amount":0.05,"kind":"credit","reason":"goodwill"}`)
	servingEverywhere(t, ins)
	day := now.Truncate(24 * time.Hour)
	r := a.admin("POST", "/api/v1/invoices", `{"advertiserId":"2","from":"`+day.Format(time.RFC3339)+`","to":"`+day.Add(24*time.Hour).Format(time.RFC3339)+`"}`)
	var inv struct {
		ID      string
		Total   float64
		Prepaid struct {
			Paid, Balance float64
			Payments      []struct{ Kind, Reference string }
		}
	}
	if json.Unmarshal([]byte(r.body), &inv); r.status != 201 || inv.Total != 0.1 || inv.Prepaid.Paid != 0.15 || inv.Prepaid.Balance != 0.05 ||
		len(inv.Prepaid.Payments) != 2 || inv.Prepaid.Payments[0].Reference != tu.StripeSessionID || inv.Prepaid.Payments[1].Reference != "goodwill" {
		t.Errorf("the day's invoice = %d %s; want 0.1 billed, the card payment and the credit (0.15), 0.05 left", r.status, r.body)
	}
	if r := a.admin("GET", "/api/v1/invoices/"+inv.ID+"?format=csv", ""); !strings.Contains(r.body, "payment,"+tu.ID+",card,") || !strings.Contains(r.body, "\nprepaid,0.15,0.05,0") {
		t.Errorf("the invoice's CSV = %s; want its payments and the balance", r.body)
	}
	if r := a.admin("GET", "/api/v1/invoices/"+inv.ID+"?format=pdf", ""); r.status != 200 || !strings.HasPrefix(r.body, "%PDF") {
		t.Errorf("the invoice's PDF = %d; want a PDF", r.status)
	}
}

// TestTopUpWhenStripeIsDown: a top-up whose Checkout Session Stripe does
// not open (nothing answers at -stripe-api) is a 503 and stays failed —
// nothing can pay it; without -stripe-key a card top-up is a 409 and the
// webhook a 404; -stripe-key without its webhook secret does not start.
func TestTopUpWhenStripeIsDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	in := start(t, t.TempDir(), nil, "-stripe-key", "sk_test_x", "-stripe-api", down, "-stripe-webhook-secret", stripeWebhookSecret)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme","prepaid":true}`), 201, "")
	if r := in.admin("POST", "/api/v1/advertisers/1/top-ups", `{"amount":20}`); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Errorf("a top-up with Stripe down = %d %s; want 503 with Retry-After", r.status, r.body)
	}
	if b := in.balance("1"); len(b.TopUps) != 1 || b.TopUps[0].Status != "failed" || b.Balance != 0 {
		t.Errorf("balance = %+v; want the top-up failed, nothing credited", b)
	}

	plain := start(t, t.TempDir(), nil)
	plain.expect(plain.admin("POST", "/api/v1/advertisers", `{"name":"Acme","prepaid":true}`), 201, "")
	if r := plain.admin("POST", "/api/v1/advertisers/1/top-ups", `{"amount":20}`); r.status != 409 || !strings.Contains(r.body, "-stripe-key") {
		t.Errorf("a card top-up without Stripe = %d %s; want 409 naming -stripe-key", r.status, r.body)
	}
	if r := plain.doHeaders("POST", "/stripe/webhook", "application/json", "{}"); r.status != 404 {
		t.Errorf("the webhook without Stripe = %d %s; want 404", r.status, r.body)
	}
	var stderr strings.Builder
	err = run(t.Context(), []string{"serve", "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-stripe-key", "sk_test_x"}, func(string) string { return "" }, nil, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), "-stripe-webhook-secret") {
		t.Errorf("serve -stripe-key without -stripe-webhook-secret = %v %s; want a usage error naming it", err, stderr.String())
	}
}
