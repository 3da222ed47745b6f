-- People's slots whose request's privacy signals denied an activity, by
-- each signal the request carried (docs/privacy.md#reports).
ALTER TABLE report_requests ADD COLUMN l_gpc bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN l_tcf bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN l_gpp bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN l_usnat bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN l_usstate bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN l_usp bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN l_coppa bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN l_given bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_gpc bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_tcf bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_gpp bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_usnat bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_usstate bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_usp bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_coppa bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN l_given bigint NOT NULL DEFAULT 0;
