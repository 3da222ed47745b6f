-- Marquee's schema on MySQL and MariaDB, as of schema version 6: the
-- tables and indexes that SQLite and PostgreSQL reach through migrations
-- 0001–0006 (store/sqltx/migrations, whose comments say what each column
-- holds). MySQL commits DDL statement by statement, so every statement
-- here may run again after a start that stopped halfway: IF NOT EXISTS,
-- INSERT IGNORE. A later change is a new file numbered as its SQLite and
-- PostgreSQL twin (0007_…), written so that it too may run again.
--
-- Every table is utf8mb4 with a binary collation: text round-trips
-- exactly (4-byte UTF-8 included), compares byte by byte as on SQLite,
-- and a unique email or code is unique by its bytes, not by a
-- case-folding collation's idea of equal. Times are unix milliseconds
-- (reports: seconds), as on the other databases.
CREATE TABLE IF NOT EXISTS ads (
	id         bigint       NOT NULL AUTO_INCREMENT PRIMARY KEY,
	title      text         NOT NULL,
	start_at   bigint       NOT NULL,
	end_at     bigint       NOT NULL,
	conditions mediumtext   NOT NULL,
	created_at bigint       NOT NULL,
	updated_at bigint       NOT NULL,
	url        text         NOT NULL,
	link_code  varchar(64)  NOT NULL DEFAULT '',
	-- the title in lower case as bytes (sqltx.TitleKey): at most 4 bytes
	-- a character, 256 characters
	title_key  varbinary(1024),
	INDEX ads_end_at (end_at),
	INDEX ads_title_key (title_key, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS changelog (
	seq        bigint      NOT NULL AUTO_INCREMENT PRIMARY KEY,
	entity     varchar(16) NOT NULL,
	entity_id  bigint      NOT NULL,
	op         varchar(16) NOT NULL,
	at         bigint      NOT NULL,
	entity_key varchar(64) NOT NULL DEFAULT '',
	INDEX changelog_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- Rows locked until commit, one for each thing done one transaction at a
-- time across instances: "changelog" orders changelog inserts by commit
-- (a hole in seq is a write still committing, or rolled back), "users"
-- keeps the last owner counted right, "rollup" lets one instance roll up
-- reports (the others skip it while it is locked).
CREATE TABLE IF NOT EXISTS marquee_locks (
	name varchar(32) NOT NULL PRIMARY KEY
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO marquee_locks (name) VALUES ('changelog'), ('users'), ('rollup');
CREATE TABLE IF NOT EXISTS links (
	id         bigint      NOT NULL AUTO_INCREMENT PRIMARY KEY,
	code       varchar(64) NOT NULL,
	url        text        NOT NULL,
	expires_at bigint      NOT NULL DEFAULT 0,
	max_clicks bigint      NOT NULL DEFAULT 0,
	redirect   integer     NOT NULL,
	ad_id      bigint      NOT NULL DEFAULT 0,
	ad_owned   integer     NOT NULL DEFAULT 0,
	created_at bigint      NOT NULL,
	updated_at bigint      NOT NULL,
	UNIQUE INDEX links_code (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS link_clicks (
	link_id bigint NOT NULL PRIMARY KEY,
	clicks  bigint NOT NULL
) ENGINE=InnoDB;
-- InnoDB stores every table in primary key order: one ad's report rows
-- are one run of rows, as SQLite's WITHOUT ROWID tables.
CREATE TABLE IF NOT EXISTS report_hourly (
	entity      varchar(16)  NOT NULL,
	entity_id   bigint       NOT NULL,
	hour        bigint       NOT NULL,
	country     varchar(8)   NOT NULL,
	platform    varchar(16)  NOT NULL,
	bot         integer      NOT NULL,
	slot        varchar(255) NOT NULL,
	impressions bigint       NOT NULL,
	clicks      bigint       NOT NULL,
	conversions bigint       NOT NULL,
	PRIMARY KEY (entity, entity_id, hour, country, platform, bot, slot),
	INDEX report_hourly_time (hour)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS report_daily (
	entity      varchar(16) NOT NULL,
	entity_id   bigint      NOT NULL,
	day         bigint      NOT NULL,
	country     varchar(8)  NOT NULL,
	platform    varchar(16) NOT NULL,
	bot         integer     NOT NULL,
	impressions bigint      NOT NULL,
	clicks      bigint      NOT NULL,
	conversions bigint      NOT NULL,
	PRIMARY KEY (entity, entity_id, day, country, platform, bot),
	INDEX report_daily_time (day, entity, bot, entity_id, impressions, clicks, conversions)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS report_totals (
	entity      varchar(16)  NOT NULL,
	hour        bigint       NOT NULL,
	bot         integer      NOT NULL,
	entity_id   bigint       NOT NULL,
	slot        varchar(255) NOT NULL,
	impressions bigint       NOT NULL,
	clicks      bigint       NOT NULL,
	conversions bigint       NOT NULL,
	PRIMARY KEY (entity, hour, bot, entity_id, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS report_reach (
	entity    varchar(16)  NOT NULL,
	entity_id bigint       NOT NULL,
	day       bigint       NOT NULL,
	slot      varchar(255) NOT NULL,
	sketch    mediumblob   NOT NULL,
	PRIMARY KEY (entity, entity_id, day, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS report_files (
	file     varchar(512) NOT NULL PRIMARY KEY,
	upto     bigint       NOT NULL,
	complete integer      NOT NULL,
	at       bigint       NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS users (
	id            bigint       NOT NULL AUTO_INCREMENT PRIMARY KEY,
	email         varchar(254) NOT NULL,
	role          varchar(16)  NOT NULL,
	password_hash varchar(255) NOT NULL,
	created_at    bigint       NOT NULL,
	updated_at    bigint       NOT NULL,
	UNIQUE INDEX users_email (email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS api_keys (
	id           bigint       NOT NULL AUTO_INCREMENT PRIMARY KEY,
	name         varchar(255) NOT NULL,
	prefix       varchar(64)  NOT NULL,
	hash         varchar(64)  NOT NULL,
	scopes       text         NOT NULL,
	created_by   varchar(320) NOT NULL,
	created_at   bigint       NOT NULL,
	expires_at   bigint,
	revoked_at   bigint,
	last_used_at bigint,
	UNIQUE INDEX api_keys_hash (hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS sessions (
	hash       varchar(64) NOT NULL PRIMARY KEY,
	user_id    bigint      NOT NULL,
	key_id     bigint      NOT NULL,
	created_at bigint      NOT NULL,
	seen_at    bigint      NOT NULL,
	expires_at bigint      NOT NULL,
	INDEX sessions_user (user_id),
	INDEX sessions_key (key_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS audit_log (
	id        bigint       NOT NULL AUTO_INCREMENT PRIMARY KEY,
	at        bigint       NOT NULL,
	actor     varchar(320) NOT NULL,
	entity    varchar(16)  NOT NULL,
	entity_id text         NOT NULL,
	action    varchar(32)  NOT NULL,
	fields    text         NOT NULL,
	ip        text         NOT NULL,
	INDEX audit_log_at (at),
	INDEX audit_log_actor (actor, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS login_failures (
	subject varchar(320) NOT NULL,
	at      bigint       NOT NULL,
	INDEX login_failures_subject (subject, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS meta (
	`key` varchar(64) NOT NULL PRIMARY KEY,
	value text        NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
