-- Facts about the database itself: "store_id", a random id written once,
-- names this database (a saved index is used only with the database it
-- was saved from).
CREATE TABLE meta (
	{{name:key}} {{str64}} PRIMARY KEY,
	value text NOT NULL
){{table}};
