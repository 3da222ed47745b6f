-- A daily rollup of events for the common report: by day, campaign, ad,
-- placement, type and whether a decision token vouched for the event,
-- its events and what they billed. Each event is inserted once (see
-- Events), so the sums equal the rows' (but for a ClickHouse that dies
-- between writing the table and the view: docs/analytics.md says how to
-- rebuild a day); SummingMergeTree adds rows of the same key as it
-- merges: read it with sum() and GROUP BY.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_daily
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (campaign_id, ad_id, placement, type, verified, date)
AS SELECT date, campaign_id, ad_id, placement, type, verified, count() AS events, sum(cost_nanos) AS cost_nanos
FROM events
GROUP BY date, campaign_id, ad_id, placement, type, verified
