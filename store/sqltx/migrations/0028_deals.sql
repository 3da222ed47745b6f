-- Deals (docs/api.md#deals): a header-bidding deal by its id (what bids
-- name), its terms as a JSON document (marquee.Deal without id and
-- times). Times are unix ms.
CREATE TABLE deals (
	id         {{str128}} NOT NULL PRIMARY KEY,
	terms      text NOT NULL,
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL
){{table}};
