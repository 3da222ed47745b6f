-- ads.txt checks (docs/api.md#sellers-and-adstxt): a site's last check
-- (JSON of marquee.AdsTxtCheck; '' never checked) and when an instance
-- last claimed its check (unix ms; 0 never), so that one instance checks
-- a site each period whatever the instances.
ALTER TABLE sites ADD COLUMN ads_txt text;
ALTER TABLE sites ADD COLUMN ads_txt_claim bigint NOT NULL DEFAULT 0;
