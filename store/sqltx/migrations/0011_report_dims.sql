-- Reports by referrer, browser, OS and A/B destination (docs/api.md#reports):
-- per ad or link, UTC day, dimension and value, and bot flag, per slot as
-- report_hourly is. Daily from the start: these breakdowns are asked of
-- days, and an hour by referrer would multiply the rows for nothing.
CREATE TABLE report_dims (
	entity      {{str16}} NOT NULL,
	entity_id   bigint  NOT NULL,
	day         bigint  NOT NULL,
	dim         {{str16}} NOT NULL, -- "referrer", "browser", "os", "destination"
	value       {{str255}} NOT NULL,
	bot         integer NOT NULL,
	slot        {{str255}} NOT NULL,
	impressions bigint  NOT NULL,
	clicks      bigint  NOT NULL,
	conversions bigint  NOT NULL,
	PRIMARY KEY (entity, entity_id, day, dim, value, bot, slot)
){{clustered}};
CREATE INDEX report_dims_time ON report_dims (day);
