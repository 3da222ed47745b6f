-- Money (docs/api.md#money): an advertiser's budget and time zone (a JSON
-- document, marquee.AdvertiserSettings; NULL: none); in every report
-- table, the post-view share of conversions, the attributed conversions'
-- value (micro-units) and what the verified events cost (nano-units).
-- Rows written before this version hold 0 of each.
ALTER TABLE advertisers ADD COLUMN settings text;
ALTER TABLE report_hourly ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_cp ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_cp ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_cp ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_geo ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_geo ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_geo ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_kv ADD COLUMN post_view_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_kv ADD COLUMN conversion_value_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_kv ADD COLUMN spend_nanos bigint NOT NULL DEFAULT 0;
-- Conversions counted (docs/api.md#conversions): one row per advertiser
-- and order id (or, without one, per click or impression converted), so
-- that the same order counts once whatever the instances and retries.
CREATE TABLE conversions (
	advertiser_id bigint NOT NULL,
	dedupe        {{str255}} NOT NULL,
	campaign_id   bigint NOT NULL,
	ad_id         bigint NOT NULL,
	attribution   {{str16}} NOT NULL,
	value         bigint NOT NULL,
	at            bigint NOT NULL,
	PRIMARY KEY (advertiser_id, dedupe)
){{table}};
