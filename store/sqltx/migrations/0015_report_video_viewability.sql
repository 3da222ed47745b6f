-- Video viewability (docs/api.md#verified-counts), apart from the tag's
-- display viewability: of video impressions, those the player measured
-- (VAST's Viewable or NotViewable fired, vouched for by a decision) and
-- those it found viewable. Rows written before this version counted
-- neither: 0, no video viewability then.
ALTER TABLE report_hourly ADD COLUMN video_measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN video_views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN video_measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN video_views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN video_measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN video_views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN video_measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN video_views bigint NOT NULL DEFAULT 0;
