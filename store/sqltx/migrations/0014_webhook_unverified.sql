-- Webhooks deliver only the events the server vouches for — a decision's
-- verified events and a redirect's clicks — unless they ask for the
-- others too (docs/api.md#webhooks). Webhooks made before this version
-- were given every event: they keep it (1).
ALTER TABLE webhooks ADD COLUMN unverified integer NOT NULL DEFAULT 1;
