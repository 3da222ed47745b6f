-- Invalid traffic of a site (docs/ivt.md#sites): decisions whose page is
-- on none of their site's domains, and decisions for a site whose ads.txt
-- does not authorise the network (-ads-txt-enforce).
ALTER TABLE report_requests ADD COLUMN i_domainmismatch bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_unauthorized bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_domainmismatch bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_unauthorized bigint NOT NULL DEFAULT 0;
