-- Accounts of advertisers and publishers (docs/api.md#accounts): a user or
-- key bound to advertisers or sites, as marquee.Bounds writes them (JSON),
-- '' for the ad team's own.
ALTER TABLE users ADD COLUMN bounds {{str4096}} NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN bounds {{str4096}} NOT NULL DEFAULT '';
