-- Short links, their click counts, and ads' landing urls with their
-- tracking links. A link's clicks live in their own narrow table: a click
-- flush rewrites the pages of the rows it counts, and ~400 of these rows
-- fit a page where ~40 links do. ad_owned marks an ad's tracking link,
-- which changes only with its ad. expires_at 0 is "never".
ALTER TABLE ads ADD COLUMN url TEXT NOT NULL DEFAULT '';
ALTER TABLE ads ADD COLUMN link_code TEXT NOT NULL DEFAULT '';
ALTER TABLE changelog ADD COLUMN entity_key TEXT NOT NULL DEFAULT ''; -- a link's code
CREATE TABLE links (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	code       TEXT    NOT NULL UNIQUE,
	url        TEXT    NOT NULL,
	expires_at INTEGER NOT NULL DEFAULT 0,
	max_clicks INTEGER NOT NULL DEFAULT 0,
	redirect   INTEGER NOT NULL,
	ad_id      INTEGER NOT NULL DEFAULT 0,
	ad_owned   INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE TABLE link_clicks (
	link_id INTEGER PRIMARY KEY,
	clicks  INTEGER NOT NULL
);
