-- Prepaid balances (docs/api.md#prepaid-balances). credited_micros is what
-- an advertiser's balance was given in all (its paid top-ups), raised in
-- the transaction that marks a top-up paid; the balance is that less
-- what the advertiser spent (the spend counters, floored by the reports).
ALTER TABLE advertisers ADD COLUMN credited_micros bigint NOT NULL DEFAULT 0;
-- Top-ups: a card payment through a Stripe Checkout Session (pending until
-- its webhook says it was paid) or a credit the team gives (paid when
-- made). session_id is Stripe's Checkout Session ('': none yet, or a
-- credit), event_id the webhook event that credited it, payment_intent the
-- card payment (what Stripe's refunds name), refunded_micros what Stripe
-- refunded of it (taken back from credited_micros). Times unix ms.
CREATE TABLE top_ups (
	id            {{id}},
	advertiser_id bigint NOT NULL,
	kind          {{str16}} NOT NULL,
	amount_micros bigint NOT NULL,
	currency      {{str16}} NOT NULL,
	status        {{str16}} NOT NULL,
	reason        text NOT NULL,
	checkout_url  text NOT NULL,
	session_id    {{str255}} NOT NULL DEFAULT '',
	event_id      {{str255}} NOT NULL DEFAULT '',
	payment_intent {{str255}} NOT NULL DEFAULT '',
	refunded_micros bigint NOT NULL DEFAULT 0,
	created_by    {{str255}} NOT NULL,
	created_at    bigint NOT NULL,
	paid_at       bigint NOT NULL DEFAULT 0
){{table}};
CREATE INDEX top_ups_advertiser ON top_ups (advertiser_id, id);
CREATE INDEX top_ups_payment_intent ON top_ups (payment_intent);
-- The Stripe events that credited (or refunded) a balance, by Stripe's
-- event id: an event delivered again (Stripe retries; an attacker
-- replays) finds its id here and changes nothing.
CREATE TABLE stripe_events (
	id         {{str255}} NOT NULL PRIMARY KEY,
	top_up_id  bigint NOT NULL,
	at         bigint NOT NULL
){{table}};
