-- Site quality (docs/ivt.md#quarantine): a quarantined site serves and
-- bills nothing (1), its decisions counted as invalid traffic of reason
-- quarantined; the last hour whose invalid rate passed -ivt-site-alarm
-- (JSON of marquee.QualityAlarm; null or '' none) and the hour last judged (unix ms), which
-- one instance claims.
ALTER TABLE sites ADD COLUMN quarantined integer NOT NULL DEFAULT 0;
ALTER TABLE sites ADD COLUMN quality_alarm text;
ALTER TABLE sites ADD COLUMN quality_claim bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_quarantined bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_quarantined bigint NOT NULL DEFAULT 0;
