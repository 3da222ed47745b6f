-- Webhooks (docs/api.md#webhooks): where events are POSTed. events is a
-- JSON array of event types; link, ad_id and campaign_id the one target
-- ("" and 0s: every event). The signing secret is not stored: it is
-- derived from nonce and a key of the server's. Times are unix ms.
CREATE TABLE webhooks (
	id              {{id}},
	url             text NOT NULL,
	events          text NOT NULL,
	link            text NOT NULL,
	ad_id           bigint NOT NULL,
	campaign_id     bigint NOT NULL,
	nonce           text NOT NULL,
	state           {{str16}} NOT NULL,
	disabled_reason text NOT NULL,
	created_at      bigint NOT NULL,
	updated_at      bigint NOT NULL
){{table}};
-- Every attempt to deliver a batch, by any instance: the delivery log.
CREATE TABLE webhook_deliveries (
	id          {{id}},
	webhook_id  bigint NOT NULL,
	message_id  text NOT NULL,
	at          bigint NOT NULL,
	status      integer NOT NULL,
	latency_ms  bigint NOT NULL,
	attempt     integer NOT NULL,
	events      integer NOT NULL,
	error       text NOT NULL
){{table}};
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, at);
