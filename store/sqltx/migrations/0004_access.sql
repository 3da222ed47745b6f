-- Who may do what (docs/api.md, "Access"): users, API keys, sessions, the
-- audit log and failed logins. Times are unix milliseconds. No secret is
-- stored: passwords as bcrypt hashes, keys and session ids as SHA-256
-- hashes (hex).
CREATE TABLE users (
	id            {{id}},
	email         {{str254}} NOT NULL UNIQUE, -- lower-case
	role          text   NOT NULL,        -- owner, admin, editor, viewer
	password_hash text   NOT NULL,        -- bcrypt
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL
){{table}};
CREATE TABLE api_keys (
	id           {{id}},
	name         text   NOT NULL,
	prefix       text   NOT NULL,        -- the secret's first characters, shown in lists
	hash         {{str64}} NOT NULL UNIQUE, -- SHA-256 of the secret
	scopes       text   NOT NULL,        -- space-separated
	created_by   text   NOT NULL,        -- the actor that created it
	created_at   bigint NOT NULL,
	expires_at   bigint,                 -- NULL: never
	revoked_at   bigint,                 -- NULL: not revoked
	last_used_at bigint                  -- written in batches, not per request
){{table}};
CREATE TABLE sessions (
	hash       {{str64}} PRIMARY KEY, -- SHA-256 of the cookie's secret
	user_id    bigint NOT NULL,    -- 0 when signed in with a key
	key_id     bigint NOT NULL,    -- 0 when signed in with a password
	created_at bigint NOT NULL,
	seen_at    bigint NOT NULL,    -- written in batches; ends the session after the idle timeout
	expires_at bigint NOT NULL     -- the absolute end
){{table}};
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_key ON sessions (key_id);
CREATE TABLE audit_log (
	id        {{id}},
	at        bigint NOT NULL,
	actor     {{str320}} NOT NULL,
	entity    text   NOT NULL,
	entity_id text   NOT NULL,
	action    text   NOT NULL,
	fields    text   NOT NULL, -- JSON array of the changed fields' names
	ip        text   NOT NULL
){{table}};
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor, at);
-- Failed logins of the last 15 minutes, by subject ("email:…", "ip:…").
CREATE TABLE login_failures (
	subject {{str320}} NOT NULL,
	at      bigint NOT NULL
){{table}};
CREATE INDEX login_failures_subject ON login_failures (subject, at);
