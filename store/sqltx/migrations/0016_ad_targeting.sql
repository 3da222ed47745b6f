-- An ad's targeting tree (docs/targeting.md), JSON; NULL: none. It
-- narrows its campaign's.
ALTER TABLE ads ADD COLUMN targeting {{bigtext}} NULL;
