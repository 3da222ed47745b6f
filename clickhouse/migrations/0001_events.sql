-- Every event written to the files, one row each (docs/analytics.md).
-- The columns a report filters or groups by are read from the line once,
-- at insert; the line itself is kept whole (line) for any other field.
-- file and file_offset name where the line is in its instance's event
-- file: the ingester asks for the largest offset of a file to skip what
-- the table has already (each event counted once).
CREATE TABLE IF NOT EXISTS events (
    date Date,
    time DateTime('UTC'),
    id String,
    type String,
    ad_id UInt64,
    campaign_id UInt64,
    placement String,
    link String,
    domain String,
    bidder String,
    uid String,
    country String,
    geo String,
    platform String,
    ua String,
    referrer String,
    kv String,
    measured UInt8,
    verified UInt8,
    redirected UInt8,
    cost_nanos Int64,
    attribution String,
    conversion_value_micros Int64,
    file String,
    file_offset UInt64,
    line String
) ENGINE = MergeTree()
PARTITION BY date
ORDER BY (type, campaign_id, ad_id, time)
