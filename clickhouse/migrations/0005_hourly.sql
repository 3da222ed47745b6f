-- Rollups of the report columns for reports of one entity or of every
-- one (clickhouse.Reports.ReportSums, ReportTop, ReportTags,
-- ReportUniques), in the shape of the embedded report tables: each
-- counted event once for each entity it counts for (entity: 'ad',
-- 'link', 'campaign', 'advertiser' or 'placement'; entity_id its id), by
-- UTC hour (unix seconds), country, platform and bot flag
-- (events_hourly, SummingMergeTree), and its reach uid by UTC day
-- (events_reach, AggregatingMergeTree of uniqCombined states: read with
-- uniqCombinedMerge). Ordered by entity and id, a report of one ad reads
-- that ad's rows, whatever the number of events. Each event is inserted
-- once (see Events), so the sums equal the rows' (but for a ClickHouse
-- that dies between writing the table and a view: docs/analytics.md).
-- Events inserted before this migration are not in them.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_hourly
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (entity, entity_id, hour, r_country, r_platform, bot)
AS SELECT date, entity, entity_id, intDiv(toUInt32(time), 3600) * 3600 AS hour, r_country, r_platform, bot,
       sum(c_impressions) AS c_impressions,
       sum(c_clicks) AS c_clicks,
       sum(c_conversions) AS c_conversions,
       sum(c_measured) AS c_measured,
       sum(c_views) AS c_views,
       sum(c_starts) AS c_starts,
       sum(c_first_quartiles) AS c_first_quartiles,
       sum(c_midpoints) AS c_midpoints,
       sum(c_third_quartiles) AS c_third_quartiles,
       sum(c_completes) AS c_completes,
       sum(c_unverified_impressions) AS c_unverified_impressions,
       sum(c_unverified_clicks) AS c_unverified_clicks,
       sum(c_unverified_conversions) AS c_unverified_conversions,
       sum(c_unverified_views) AS c_unverified_views,
       sum(c_video_measured) AS c_video_measured,
       sum(c_video_views) AS c_video_views,
       sum(c_post_view_conversions) AS c_post_view_conversions,
       sum(c_conversion_value_micros) AS c_conversion_value_micros,
       sum(c_spend_nanos) AS c_spend_nanos
FROM events
ARRAY JOIN ['ad', 'link', 'campaign', 'advertiser', 'placement'] AS entity, [r_ad, r_link, r_campaign, r_advertiser, r_placement] AS entity_id
WHERE counted = 1 AND entity_id != 0
GROUP BY date, entity, entity_id, hour, r_country, r_platform, bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS events_reach
ENGINE = AggregatingMergeTree()
PARTITION BY date
ORDER BY (entity, entity_id, day)
AS SELECT date, entity, entity_id, intDiv(toUInt32(time), 86400) * 86400 AS day, uniqCombinedState(reach_uid) AS uids
FROM events
ARRAY JOIN ['ad', 'link', 'campaign', 'advertiser', 'placement'] AS entity, [r_ad, r_link, r_campaign, r_advertiser, r_placement] AS entity_id
WHERE counted = 1 AND entity_id != 0 AND reach_uid != ''
GROUP BY date, entity, entity_id, day
