-- Invalid traffic's requests (docs/ivt.md): the slots of decisions for
-- invalid traffic, by reason, apart from the outcomes (people's requests).
-- The bot column of the other report tables holds the reason (an
-- ivt.Reason; 1, crawler, is what it held for a bot before). Rows written
-- before this version hold 0 of each.
ALTER TABLE report_requests ADD COLUMN i_crawler bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_preview bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_prefetch bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_headless bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_nonbrowser bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_datacenter bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_velocity bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_fastclick bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_noimpression bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_repeatclick bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_fastconversion bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_burst bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_crawler bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_preview bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_prefetch bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_headless bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_nonbrowser bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_datacenter bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_velocity bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_fastclick bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_noimpression bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_repeatclick bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_fastconversion bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_burst bigint NOT NULL DEFAULT 0;
