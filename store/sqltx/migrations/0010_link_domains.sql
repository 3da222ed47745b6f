-- Links get a domain, a title, tags, redirect rules and A/B destinations
-- (docs/api.md#links). A code is unique within its domain ('' is the
-- default domain), where 0002 made it unique everywhere: no dialect drops
-- that constraint the same way (SQLite cannot at all), so the table is
-- built again without it, its rows and ids kept. tags, rules and
-- destinations are JSON ('' is none); link_tags indexes the tags for
-- GET /api/v1/links?tag=. A MySQL run stopped between the DROP and the
-- RENAME below fails on its next start, naming this file: the rows are
-- in links_0010, which the RENAME makes links again.
CREATE TABLE links_0010 (
	id           {{id}},
	domain       {{str253}} NOT NULL,
	code         {{str64}} NOT NULL,
	url          text    NOT NULL,
	title        text    NOT NULL,
	tags         text    NOT NULL,
	rules        {{bigtext}} NOT NULL,
	destinations text    NOT NULL,
	expires_at   bigint  NOT NULL DEFAULT 0,
	max_clicks   bigint  NOT NULL DEFAULT 0,
	redirect     integer NOT NULL,
	ad_id        bigint  NOT NULL DEFAULT 0,
	ad_owned     integer NOT NULL DEFAULT 0,
	created_at   bigint  NOT NULL,
	updated_at   bigint  NOT NULL
){{table}};
INSERT INTO links_0010 (id, domain, code, url, title, tags, rules, destinations, expires_at, max_clicks, redirect, ad_id, ad_owned, created_at, updated_at)
	SELECT id, '', code, url, '', '', '', '', expires_at, max_clicks, redirect, ad_id, ad_owned, created_at, updated_at FROM links
	WHERE id NOT IN (SELECT id FROM links_0010);
DROP TABLE links;
ALTER TABLE links_0010 RENAME TO links;
CREATE UNIQUE INDEX links_domain_code ON links (domain, code);
{{resync:links}};
CREATE TABLE link_tags (
	tag     {{str50}} NOT NULL,
	link_id bigint NOT NULL,
	PRIMARY KEY (tag, link_id)
){{clustered}};
CREATE INDEX link_tags_link ON link_tags (link_id);
