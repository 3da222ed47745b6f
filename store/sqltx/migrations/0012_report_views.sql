-- Viewability and video (docs/api.md#reports): every report table also
-- counts impressions whose viewability the tag measured, viewable
-- impressions (MRC), and video plays that started and reached each
-- quartile. Existing rows count none of them (0), which is what they saw.
ALTER TABLE report_hourly ADD COLUMN measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN starts bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN first_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN midpoints bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN third_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN completes bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN starts bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN first_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN midpoints bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN third_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN completes bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN starts bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN first_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN midpoints bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN third_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN completes bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN measured bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN views bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN starts bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN first_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN midpoints bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN third_quartiles bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN completes bigint NOT NULL DEFAULT 0;
