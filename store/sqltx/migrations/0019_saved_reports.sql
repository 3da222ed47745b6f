-- Saved reports and their schedules (docs/api.md#saved-reports-and-schedules):
-- a report by several dimensions kept by name, owned by who saved it (and
-- bound as they are), with an optional schedule (JSON, marquee.Schedule).
CREATE TABLE saved_reports (
	id         {{id}},
	name       {{str255}} NOT NULL,
	query      text NOT NULL,
	schedule   {{bigtext}},
	owner      {{str255}} NOT NULL,
	bounds     {{str4096}} NOT NULL DEFAULT '',
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL
){{table}};
-- The delivery log: one row per period of a scheduled report, claimed by
-- the instance that inserts it (the key: one email per period, whatever
-- the instances), then sent, retried or given up.
CREATE TABLE report_deliveries (
	id          {{id}},
	report_id   bigint NOT NULL,
	period_from bigint NOT NULL,
	period_to   bigint NOT NULL,
	status      {{str16}} NOT NULL,
	attempts    integer NOT NULL,
	error       text NOT NULL,
	next_at     bigint,
	sent_at     bigint,
	recipients  text NOT NULL,
	updated_at  bigint NOT NULL,
	UNIQUE (report_id, period_from)
){{table}};
CREATE INDEX report_deliveries_retry ON report_deliveries (status, next_at);
