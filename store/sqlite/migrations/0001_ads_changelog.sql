-- Ads and the changelog every instance tails. Times are unix milliseconds.
CREATE TABLE ads (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	title      TEXT    NOT NULL,
	start_at   INTEGER NOT NULL,
	end_at     INTEGER NOT NULL,
	conditions TEXT    NOT NULL, -- JSON array of normalised conditions
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX ads_end_at ON ads (end_at);
CREATE TABLE changelog (
	seq       INTEGER PRIMARY KEY AUTOINCREMENT,
	entity    TEXT    NOT NULL, -- "ad", "link"; "" with op "reload"
	entity_id INTEGER NOT NULL, -- 0 with op "reload": reload everything
	op        TEXT    NOT NULL, -- "put", "delete", "reload"
	at        INTEGER NOT NULL  -- commit time
);
