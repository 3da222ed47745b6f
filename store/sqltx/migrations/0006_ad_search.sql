-- Title search (GET /api/v1/ads?q=): title_key is the ad's title in lower
-- case (Go's strings.ToLower, see sqltx.TitleKey) as bytes, so that "titles
-- starting with q, in any case" is a range scan of one index on every
-- database (bytes compare the same everywhere). Rows written before this
-- migration get their key from sqltx.Migrate, in Go, right after it.
-- A character is at most 4 bytes, a title 256 characters.
ALTER TABLE ads ADD COLUMN title_key {{bytes1024}};
CREATE INDEX ads_title_key ON ads (title_key, id);
