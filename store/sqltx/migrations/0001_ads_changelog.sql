-- Ads and the changelog every instance tails. Times are unix milliseconds.
-- {{id}} is a 64-bit key the database assigns in increasing order (each
-- dialect spells it its own way: see sqltx.Dialect).
CREATE TABLE ads (
	id         {{id}},
	title      text   NOT NULL,
	start_at   bigint NOT NULL,
	end_at     bigint NOT NULL,
	conditions text   NOT NULL, -- JSON array of normalised conditions
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL
);
CREATE INDEX ads_end_at ON ads (end_at);
CREATE TABLE changelog (
	seq       {{id}},
	entity    text   NOT NULL, -- "ad", "link"; "" with op "reload"
	entity_id bigint NOT NULL, -- 0 with op "reload": reload everything
	op        text   NOT NULL, -- "put", "delete", "reload"
	at        bigint NOT NULL  -- commit time
);
CREATE INDEX changelog_at ON changelog (at);
