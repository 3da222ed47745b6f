-- A video or audio player's error events (VAST's Error URL), counted in
-- every report (errors) and by code in report_dims (dim errorCode:
-- docs/api.md#vast). Rows written before this version counted none: 0.
ALTER TABLE report_hourly ADD COLUMN errors bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN errors bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN errors bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN errors bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube ADD COLUMN errors bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_cp ADD COLUMN errors bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_geo ADD COLUMN errors bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_kv ADD COLUMN errors bigint NOT NULL DEFAULT 0;
