-- Forecasts before history (docs/api.md#forecasts): the requests a day a
-- placement's publisher expects (0: not declared).
ALTER TABLE placements ADD COLUMN expected_daily_requests bigint NOT NULL DEFAULT 0;
