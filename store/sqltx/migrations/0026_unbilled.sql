-- Events billed nothing (docs/api.md#budgets): in every report table, the
-- events of the type their campaign's price bills that were billed
-- nothing — past a spent budget on a person's row, invalid traffic on a
-- bot's — and what they would have cost (nano-units). Rows written before
-- this version hold 0 of each.
ALTER TABLE report_hourly ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_hourly ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_daily ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_totals ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_dims ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_cp ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_cp ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_geo ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_geo ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_kv ADD COLUMN unbilled bigint NOT NULL DEFAULT 0;
ALTER TABLE report_cube_kv ADD COLUMN unbilled_nanos bigint NOT NULL DEFAULT 0;
