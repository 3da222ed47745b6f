-- Sites (docs/api.md#sites): a publisher's property by the name its
-- placements give it, its domains (a JSON list) and the publisher's share
-- of what its placements earn, in millionths (700000: 70%). Times are
-- unix ms.
CREATE TABLE sites (
	name          {{str255}} NOT NULL PRIMARY KEY,
	domains       text NOT NULL,
	revenue_share bigint NOT NULL,
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL
){{table}};
