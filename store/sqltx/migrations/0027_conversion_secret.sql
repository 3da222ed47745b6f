-- An advertiser's conversion secret (docs/api.md#conversions): the nonce
-- it is derived from with the server's tracking key ('': none made yet).
-- The secret itself is never stored.
ALTER TABLE advertisers ADD COLUMN conversion_nonce {{str64}} NOT NULL DEFAULT '';
