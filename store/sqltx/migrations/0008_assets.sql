-- Uploaded images of creatives (docs/api.md#assets), content-addressed by
-- the SHA-256 of their bytes: stored once, never changed.
CREATE TABLE assets (
	sha        {{str64}} PRIMARY KEY,
	type       {{str16}} NOT NULL,
	width      integer NOT NULL,
	height     integer NOT NULL,
	size       bigint NOT NULL,
	body       {{blob}} NOT NULL,
	created_at bigint NOT NULL
){{table}};
