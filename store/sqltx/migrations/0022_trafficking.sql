-- Trafficking (docs/api.md#trafficking): a placement's passback, its own
-- fallback tag (HTML; NULL: none); an ad's approval — active (approved),
-- pending (an advertiser's account wrote it) or draft (rejected) — and its
-- last review (a JSON document, marquee.Review; NULL: none). Ads written
-- before this version are active.
ALTER TABLE placements ADD COLUMN passback text;
ALTER TABLE ads ADD COLUMN state {{str16}} NOT NULL DEFAULT 'active';
ALTER TABLE ads ADD COLUMN review text;
