-- Rollups of the report columns for reports by several dimensions
-- (clickhouse.Reports.CubeSums), the grains of the embedded cube: the
-- events that count in them summed by UTC day (unix seconds, day), ad,
-- campaign, placement, country, device type and bot flag (events_cube);
-- by day, campaign, placement and bot flag (events_cube_cp: what a report
-- without ads, countries or devices reads); and by day, ad, campaign,
-- placement, report key and value and bot flag (events_cube_kv: one row
-- per value an event names). A report of 30 days by campaign, placement
-- and day reads a row per day × campaign × placement, whatever the number
-- of events. Each event is inserted once (see Events), so the sums equal the
-- rows' (a ClickHouse that dies between writing the table and a view is
-- the one exception: docs/analytics.md says how to rebuild a day).
-- SummingMergeTree adds rows of the same key as it merges: read them with
-- sum() and GROUP BY. Events inserted before this migration are not in
-- them.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_cube
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (day, r_campaign, r_placement, r_ad, r_country, device, bot)
AS SELECT date, intDiv(toUInt32(time), 86400) * 86400 AS day, r_campaign, r_placement, r_ad, r_country, device, bot,
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
WHERE counted = 1 AND r_cube = 1
GROUP BY date, day, r_campaign, r_placement, r_ad, r_country, device, bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS events_cube_cp
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (day, r_campaign, r_placement, bot)
AS SELECT date, intDiv(toUInt32(time), 86400) * 86400 AS day, r_campaign, r_placement, bot,
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
WHERE counted = 1 AND r_cube = 1
GROUP BY date, day, r_campaign, r_placement, bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS events_cube_kv
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (kv_key, day, r_campaign, r_placement, r_ad, kv_value, bot)
AS SELECT date, intDiv(toUInt32(time), 86400) * 86400 AS day, kv_key, kv_value, r_campaign, r_placement, r_ad, bot,
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
ARRAY JOIN kv_keys AS kv_key, kv_values AS kv_value
WHERE counted = 1 AND r_cube = 1
GROUP BY date, day, kv_key, kv_value, r_campaign, r_placement, r_ad, bot
