-- A video or audio player's error events (VAST's Error URL): c_errors
-- counts them in events and in every rollup, and error_code is an error's
-- code as reports read it (a VAST code, "none" or "other"; "" for other
-- events), which the breakdown by=errorCode groups by. The rollups are
-- made again with the column and filled from events (POPULATE), as 0007
-- made them: events inserted while this migration runs may be missing
-- from them (docs/analytics.md says how to rebuild a day).
ALTER TABLE events
    ADD COLUMN c_errors UInt8,
    ADD COLUMN error_code String;

DROP TABLE IF EXISTS events_cube;
CREATE MATERIALIZED VIEW IF NOT EXISTS events_cube
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (day, r_campaign, r_placement, r_ad, r_country, device, bot)
POPULATE
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
       sum(c_spend_nanos) AS c_spend_nanos,
       sum(c_unbilled) AS c_unbilled,
       sum(c_unbilled_nanos) AS c_unbilled_nanos,
       sum(c_errors) AS c_errors
FROM events
WHERE counted = 1 AND r_cube = 1
GROUP BY date, day, r_campaign, r_placement, r_ad, r_country, device, bot;

DROP TABLE IF EXISTS events_cube_cp;
CREATE MATERIALIZED VIEW IF NOT EXISTS events_cube_cp
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (day, r_campaign, r_placement, bot)
POPULATE
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
       sum(c_spend_nanos) AS c_spend_nanos,
       sum(c_unbilled) AS c_unbilled,
       sum(c_unbilled_nanos) AS c_unbilled_nanos,
       sum(c_errors) AS c_errors
FROM events
WHERE counted = 1 AND r_cube = 1
GROUP BY date, day, r_campaign, r_placement, bot;

DROP TABLE IF EXISTS events_cube_kv;
CREATE MATERIALIZED VIEW IF NOT EXISTS events_cube_kv
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (kv_key, day, r_campaign, r_placement, r_ad, kv_value, bot)
POPULATE
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
       sum(c_spend_nanos) AS c_spend_nanos,
       sum(c_unbilled) AS c_unbilled,
       sum(c_unbilled_nanos) AS c_unbilled_nanos,
       sum(c_errors) AS c_errors
FROM events
ARRAY JOIN kv_keys AS kv_key, kv_values AS kv_value
WHERE counted = 1 AND r_cube = 1
GROUP BY date, day, kv_key, kv_value, r_campaign, r_placement, r_ad, bot;

DROP TABLE IF EXISTS events_hourly;
CREATE MATERIALIZED VIEW IF NOT EXISTS events_hourly
ENGINE = SummingMergeTree()
PARTITION BY date
ORDER BY (entity, entity_id, hour, r_country, r_platform, bot)
POPULATE
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
       sum(c_spend_nanos) AS c_spend_nanos,
       sum(c_unbilled) AS c_unbilled,
       sum(c_unbilled_nanos) AS c_unbilled_nanos,
       sum(c_errors) AS c_errors
FROM events
ARRAY JOIN ['ad', 'link', 'campaign', 'advertiser', 'placement'] AS entity, [r_ad, r_link, r_campaign, r_advertiser, r_placement] AS entity_id
WHERE counted = 1 AND entity_id != 0
GROUP BY date, entity, entity_id, hour, r_country, r_platform, bot
