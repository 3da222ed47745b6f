-- What a change of money held before and after it (docs/api.md#audit-log),
-- as JSON; NULL where an entry records none (every entry before this
-- version, and changes that are not money's).
ALTER TABLE audit_log ADD COLUMN before_doc {{bigtext}} NULL;
ALTER TABLE audit_log ADD COLUMN after_doc {{bigtext}} NULL;
