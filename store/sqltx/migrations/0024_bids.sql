-- Header bidding (docs/api.md#header-bidding): a placement's floor, the
-- least CPM (micro-units of the currency) a bid must offer to fill it
-- (0: none).
ALTER TABLE placements ADD COLUMN floor bigint NOT NULL DEFAULT 0;
