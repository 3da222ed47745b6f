-- Settings of the install chosen at run time (docs/api.md#settings), one
-- row a name, its value as the API writes it: each change is logged in
-- the changelog (entity "setting", keyed by the name), so that every
-- instance applies it.
CREATE TABLE settings (
	name  {{str64}} NOT NULL PRIMARY KEY,
	value text NOT NULL
){{table}};
