-- Short links, their click counts, and ads' landing urls with their
-- tracking links. A link's clicks live in their own narrow table: a click
-- flush rewrites the pages of the rows it counts, and ~400 of these rows
-- fit a page where ~40 links do. ad_owned marks an ad's tracking link,
-- which changes only with its ad. expires_at 0 is "never". {{key}} is a
-- 64-bit key the row is given (see sqltx.Dialect).
ALTER TABLE ads ADD COLUMN url {{str2048}} NOT NULL DEFAULT '';
ALTER TABLE ads ADD COLUMN link_code {{str64}} NOT NULL DEFAULT '';
-- entity_key: a link's code.
ALTER TABLE changelog ADD COLUMN entity_key {{str64}} NOT NULL DEFAULT '';
CREATE TABLE links (
	id         {{id}},
	code       {{str64}} NOT NULL UNIQUE,
	url        text    NOT NULL,
	expires_at bigint  NOT NULL DEFAULT 0,
	max_clicks bigint  NOT NULL DEFAULT 0,
	redirect   integer NOT NULL,
	ad_id      bigint  NOT NULL DEFAULT 0,
	ad_owned   integer NOT NULL DEFAULT 0,
	created_at bigint  NOT NULL,
	updated_at bigint  NOT NULL
){{table}};
CREATE TABLE link_clicks (
	link_id {{key}},
	clicks  bigint NOT NULL
){{table}};
