-- A row per scope whose limits are counted under a lock (docs/api.md#saved-reports):
-- a transaction that counts a scope's rows before it inserts one locks
-- its row first, so instances at once never pass the limit.
CREATE TABLE scope_locks (
	name {{str255}} NOT NULL PRIMARY KEY
){{table}};
-- When a report's delivery was claimed (unix ms; 0 before this version):
-- what an account's mails a day are counted by.
ALTER TABLE report_deliveries ADD COLUMN claimed_at bigint NOT NULL DEFAULT 0;
