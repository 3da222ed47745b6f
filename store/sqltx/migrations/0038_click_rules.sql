-- Two more reasons of invalid traffic (docs/ivt.md): clicks past a
-- campaign's clicks an hour from one address, and clicks of an address
-- whose click rate is not a person's. Rows written before hold 0.
ALTER TABLE report_requests ADD COLUMN i_clicklimit bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_clickrate bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_clicklimit bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_clickrate bigint NOT NULL DEFAULT 0;
