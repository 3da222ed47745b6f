-- Trafficking (docs/api.md#approval): the last step of a campaign's
-- approval (a JSON document, marquee.Review: who submitted, approved or
-- rejected it, when, and why; NULL: none). Campaigns written before this
-- version stay in their state (active, paused or archived).
ALTER TABLE campaigns ADD COLUMN review text;
