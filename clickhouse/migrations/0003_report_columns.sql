-- What reports count of each event (package reports' Classifier and
-- Lookup, the rule of the embedded reports too), read once at insert so
-- that every report is a GROUP BY over the rows (docs/analytics.md):
-- counted says reports count the line at all; bot and the dimensions;
-- reach_uid the uid reach counts ('' none); the entities that exist, by
-- id (0: none named, or not one that exists); r_dest a link's A/B
-- destination (-1 none); r_cube whether the event counts in reports by
-- several dimensions; the report keys' values; and the counts (c_*, the
-- columns of the embedded report tables). Rows inserted before this
-- migration have zeros here: reports do not count them.
ALTER TABLE events
    ADD COLUMN counted UInt8,
    ADD COLUMN bot UInt8,
    ADD COLUMN r_country String,
    ADD COLUMN r_platform String,
    ADD COLUMN browser String,
    ADD COLUMN os String,
    ADD COLUMN device String,
    ADD COLUMN referrer_host String,
    ADD COLUMN reach_uid String,
    ADD COLUMN r_ad UInt64,
    ADD COLUMN r_campaign UInt64,
    ADD COLUMN r_advertiser UInt64,
    ADD COLUMN r_placement UInt64,
    ADD COLUMN r_link UInt64,
    ADD COLUMN r_dest Int8,
    ADD COLUMN r_cube UInt8,
    ADD COLUMN kv_keys Array(String),
    ADD COLUMN kv_values Array(String),
    ADD COLUMN c_impressions UInt8,
    ADD COLUMN c_clicks UInt8,
    ADD COLUMN c_conversions UInt8,
    ADD COLUMN c_measured UInt8,
    ADD COLUMN c_views UInt8,
    ADD COLUMN c_starts UInt8,
    ADD COLUMN c_first_quartiles UInt8,
    ADD COLUMN c_midpoints UInt8,
    ADD COLUMN c_third_quartiles UInt8,
    ADD COLUMN c_completes UInt8,
    ADD COLUMN c_unverified_impressions UInt8,
    ADD COLUMN c_unverified_clicks UInt8,
    ADD COLUMN c_unverified_conversions UInt8,
    ADD COLUMN c_unverified_views UInt8,
    ADD COLUMN c_video_measured UInt8,
    ADD COLUMN c_video_views UInt8,
    ADD COLUMN c_post_view_conversions UInt8,
    ADD COLUMN c_conversion_value_micros Int64,
    ADD COLUMN c_spend_nanos Int64
