-- Passbacks (docs/api.md#trafficking): a placement's own fallback tag,
-- HTML the tag renders in a slot nothing fills (NULL: none).
ALTER TABLE placements ADD COLUMN passback text;
