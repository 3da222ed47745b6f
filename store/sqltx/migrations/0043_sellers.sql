-- Sellers (docs/api.md#sellers-and-ads-txt): each site's seller_id in
-- the network's sellers.json and its ads.txt line — given in the order
-- of the sites' names to the sites that exist, then from seller_seq to
-- each new one, never given twice (a deleted site's stays used) — its
-- sellers.json seller_type, and whether it is confidential there (1).
ALTER TABLE sites ADD COLUMN seller_id bigint NOT NULL DEFAULT 0;
ALTER TABLE sites ADD COLUMN seller_type {{str16}} NOT NULL DEFAULT 'PUBLISHER';
ALTER TABLE sites ADD COLUMN confidential integer NOT NULL DEFAULT 0;
UPDATE sites SET seller_id = (SELECT r.n FROM (SELECT b.name AS name, COUNT(*) AS n FROM sites a JOIN sites b ON a.name <= b.name GROUP BY b.name) r WHERE r.name = sites.name);
CREATE UNIQUE INDEX sites_seller_id ON sites (seller_id);
CREATE TABLE seller_seq (
	id   integer NOT NULL PRIMARY KEY,
	last bigint NOT NULL
){{table}};
INSERT INTO seller_seq (id, last) SELECT 1, COUNT(*) FROM sites;
