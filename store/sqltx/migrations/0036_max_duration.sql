-- A video placement's longest ad (docs/api.md#vast), in milliseconds (0:
-- any). A break's longest pod is in its ad_breaks JSON.
ALTER TABLE placements ADD COLUMN max_duration_ms integer NOT NULL DEFAULT 0;
