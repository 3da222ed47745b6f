-- Reports: counts per ad or link, UTC hour (or day), country, platform and
-- bot flag, stored in key order where the dialect can ({{clustered}}), so
-- that one ad's range is one run of rows. slot is the instance that counted the row: instances never
-- write each other's rows, and a report sums every slot. Hourly rows older
-- than the hourly retention are rolled into daily rows (one roller at a
-- time, so daily rows need no slot). Times are unix seconds.
CREATE TABLE report_hourly (
	entity      {{str16}} NOT NULL, -- "ad" or "link"
	entity_id   bigint  NOT NULL,
	hour        bigint  NOT NULL, -- start of the UTC hour
	country     {{str8}} NOT NULL, -- ISO 3166-1 alpha-2, "ZZ" unknown
	platform    {{str16}} NOT NULL, -- "android", "ios", "web"
	bot         integer NOT NULL,
	slot        {{str255}} NOT NULL,
	impressions bigint  NOT NULL,
	clicks      bigint  NOT NULL,
	conversions bigint  NOT NULL,
	PRIMARY KEY (entity, entity_id, hour, country, platform, bot, slot)
){{clustered}};
-- Rollups and rebuilds delete by time.
CREATE INDEX report_hourly_time ON report_hourly (hour);
CREATE TABLE report_daily (
	entity      {{str16}} NOT NULL,
	entity_id   bigint  NOT NULL,
	day         bigint  NOT NULL, -- start of the UTC day
	country     {{str8}} NOT NULL,
	platform    {{str16}} NOT NULL,
	bot         integer NOT NULL,
	impressions bigint  NOT NULL,
	clicks      bigint  NOT NULL,
	conversions bigint  NOT NULL,
	PRIMARY KEY (entity, entity_id, day, country, platform, bot)
){{clustered}};
-- Reports over every ad or link read a range of days: this index holds
-- all they read.
CREATE INDEX report_daily_time ON report_daily (day, entity, bot, entity_id, impressions, clicks, conversions);
-- Totals: report_hourly summed over country and platform, written by the
-- same flush, stored by time first: what reports over every ad or link
-- (totals, top lists) read, a fraction of the rows.
CREATE TABLE report_totals (
	entity      {{str16}} NOT NULL,
	hour        bigint  NOT NULL,
	bot         integer NOT NULL,
	entity_id   bigint  NOT NULL,
	slot        {{str255}} NOT NULL,
	impressions bigint  NOT NULL,
	clicks      bigint  NOT NULL,
	conversions bigint  NOT NULL,
	PRIMARY KEY (entity, hour, bot, entity_id, slot)
){{clustered}};
-- Reach: a HyperLogLog sketch of the uids of an ad's or link's events of
-- one UTC day, per slot (merged at read).
CREATE TABLE report_reach (
	entity    {{str16}} NOT NULL,
	entity_id bigint NOT NULL,
	day       bigint NOT NULL,
	slot      {{str255}} NOT NULL,
	sketch    {{blob}} NOT NULL,
	PRIMARY KEY (entity, entity_id, day, slot)
){{table}};
-- The ledger: how far each event file is counted (bytes of NDJSON), in the
-- same transaction as the counts.
CREATE TABLE report_files (
	file     {{str512}} PRIMARY KEY,
	upto     bigint  NOT NULL,
	complete integer NOT NULL,
	at       bigint  NOT NULL
){{table}};
