-- Verified counts (docs/api.md#verified-counts): of the impressions,
-- clicks, conversions and views a row counts, those no valid decision
-- token vouches for (beacons, tracking events not tied to a counted
-- impression). Goals, pacing and spend count the others. Rows written
-- before this version counted beacons and tracking events alike: they
-- keep 0 here, read as verified, which is what they were taken for.
ALTER TABLE report_hourly ADD COLUMN unverified_impressions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN unverified_clicks bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN unverified_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN unverified_views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN unverified_impressions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN unverified_clicks bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN unverified_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN unverified_views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN unverified_impressions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN unverified_clicks bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN unverified_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN unverified_views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN unverified_impressions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN unverified_clicks bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN unverified_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN unverified_views bigint NOT NULL DEFAULT 0;
