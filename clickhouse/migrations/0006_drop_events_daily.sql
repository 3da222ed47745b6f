-- events_daily (0002) is superseded by the report rollups (0004, 0005):
-- events_cube_cp holds the same sums by day, campaign and placement, with
-- every count apart (verified and not) rather than by type. One view less
-- is one GROUP BY less for every insert.
DROP TABLE IF EXISTS events_daily
