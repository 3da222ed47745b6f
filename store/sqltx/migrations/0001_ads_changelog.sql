-- Ads and the changelog every instance tails. Times are unix milliseconds.
-- {{id}} is a 64-bit key the database assigns in increasing order; every
-- {{…}} is spelled by each dialect its own way (see sqltx.Dialect): a
-- {{strN}} is text of at most N characters (a column MySQL indexes),
-- {{table}} ends every CREATE TABLE.
CREATE TABLE ads (
	id         {{id}},
	title      text   NOT NULL,
	start_at   bigint NOT NULL,
	end_at     bigint NOT NULL,
	conditions {{bigtext}} NOT NULL, -- JSON array of normalised conditions
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL
){{table}};
CREATE INDEX ads_end_at ON ads (end_at);
CREATE TABLE changelog (
	seq       {{id}},
	entity    {{str16}} NOT NULL, -- "ad", "link"; "" with op "reload"
	entity_id bigint NOT NULL, -- 0 with op "reload": reload everything
	op        {{str16}} NOT NULL, -- "put", "delete", "reload"
	at        bigint NOT NULL  -- commit time
){{table}};
CREATE INDEX changelog_at ON changelog (at);
