-- Chargebacks of card top-ups (docs/api.md#prepaid-balances): the state
-- of a payment's dispute as Stripe last said ('': none, open, won, lost)
-- and what it holds back from the balance (taken from credited_micros
-- when it opened, given back when it was won).
ALTER TABLE top_ups ADD COLUMN dispute {{str16}} NOT NULL DEFAULT '';
ALTER TABLE top_ups ADD COLUMN disputed_micros bigint NOT NULL DEFAULT 0;
