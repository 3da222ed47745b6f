package sqltx

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// audited is the Tx of a request that carries a marquee.Audit: with every
// changelog entry it writes the audit entry of the change, in the same
// transaction, so that no change commits unrecorded.
type audited struct {
	Tx
	a   marquee.Audit
	now time.Time
	// before and after, when set (withChange), are recorded with the
	// entry as JSON.
	before, after any
}

// withChange is tx whose next audit entries record what a change of
// money held before and after it (nil: nothing); tx itself when the
// change is not audited.
func withChange(tx Tx, before, after any) Tx {
	if a, ok := tx.(audited); ok {
		a.before, a.after = before, after
		return a
	}
	return tx
}

// auditOnly records, in tx's audit (when the change is audited), a change
// of entity key that the changelog does not carry (nothing is cached of
// it), with what it held before and after.
func auditOnly(ctx context.Context, tx Tx, entity, key string, before, after any) error {
	a, ok := tx.(audited)
	if !ok {
		return nil
	}
	a.before, a.after = before, after
	return a.record(ctx, entity, key, "")
}

func (t audited) LogChange(ctx context.Context, entity string, id int64, key string, op marquee.ChangeOp) error {
	if err := t.Tx.LogChange(ctx, entity, id, key, op); err != nil {
		return err
	}
	action := t.a.Action
	if action == "" {
		action = "update"
		if op == marquee.OpDelete {
			action = "delete"
		}
	}
	if key == "" {
		key = strconv.FormatInt(id, 10)
	}
	return t.record(ctx, entity, key, action)
}

// record inserts the entry of a change of entity key (the Audit's
// EntityID instead when set) by action ("": the Audit's, else "update").
func (t audited) record(ctx context.Context, entity, key, action string) error {
	action = cmp.Or(action, t.a.Action, "update")
	e := marquee.AuditEntry{At: t.now, Actor: t.a.Actor, Entity: entity, EntityID: cmp.Or(t.a.EntityID, key),
		Action: action, Fields: t.a.Fields, IP: t.a.IP}
	var err error
	if t.before != nil {
		if e.Before, err = json.Marshal(t.before); err != nil {
			return err
		}
	}
	if t.after != nil {
		if e.After, err = json.Marshal(t.after); err != nil {
			return err
		}
	}
	return insertAudit(ctx, t.Tx, e)
}

func insertAudit(ctx context.Context, db DB, e marquee.AuditEntry) error {
	if e.Fields == nil {
		e.Fields = []string{}
	}
	fields, err := json.Marshal(e.Fields)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `INSERT INTO audit_log (at, actor, entity, entity_id, action, fields, ip, before_doc, after_doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.At.UnixMilli(), e.Actor, e.Entity, e.EntityID, e.Action, string(fields), e.IP, nullJSON(e.Before), nullJSON(e.After))
	return err
}

// nullJSON is doc as a column's value: NULL when empty.
func nullJSON(doc json.RawMessage) any {
	if len(doc) == 0 {
		return nil
	}
	return string(doc)
}

// AddAudit records an entry that goes with no change (a failed login).
func (s *Store) AddAudit(ctx context.Context, e marquee.AuditEntry) error {
	_, err := withDB(ctx, s, "add audit entry", func(db DB) (struct{}, error) {
		if e.At.IsZero() {
			e.At = s.cfg.Now().UTC().Truncate(time.Millisecond)
		}
		return struct{}{}, insertAudit(ctx, db, e)
	})
	return err
}

// AuditLog returns the entries f selects, newest first, and how many it
// selects in all.
func (s *Store) AuditLog(ctx context.Context, f marquee.AuditFilter) ([]marquee.AuditEntry, int, error) {
	where, args := []string{"1 = 1"}, []any{}
	if f.Actor != "" {
		where, args = append(where, "actor = ?"), append(args, f.Actor)
	}
	if f.Entity != "" {
		where, args = append(where, "entity = ?"), append(args, f.Entity)
	}
	if !f.From.IsZero() {
		where, args = append(where, "at >= ?"), append(args, f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		where, args = append(where, "at < ?"), append(args, f.To.UnixMilli())
	}
	cond := strings.Join(where, " AND ")
	type page struct {
		entries []marquee.AuditEntry
		total   int
	}
	p, err := withDB(ctx, s, "read audit log", func(db DB) (p page, err error) {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE `+cond, args...).Scan(&p.total); err != nil {
			return p, err
		}
		p.entries, err = query(ctx, db, func(r Rows) (e marquee.AuditEntry, err error) {
			var at int64
			var fields string
			var before, after *string
			if err := r.Scan(&e.ID, &at, &e.Actor, &e.Entity, &e.EntityID, &e.Action, &fields, &e.IP, &before, &after); err != nil {
				return e, err
			}
			e.At = time.UnixMilli(at).UTC()
			if before != nil {
				e.Before = json.RawMessage(*before)
			}
			if after != nil {
				e.After = json.RawMessage(*after)
			}
			return e, json.Unmarshal([]byte(fields), &e.Fields)
		}, `SELECT id, at, actor, entity, entity_id, action, fields, ip, before_doc, after_doc FROM audit_log WHERE `+cond+
			` ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
		return p, err
	})
	return p.entries, p.total, err
}

// TrimAudit deletes the entries older than before.
func (s *Store) TrimAudit(ctx context.Context, before time.Time) (int64, error) {
	return withDB(ctx, s, "trim audit log", func(db DB) (int64, error) {
		return db.Exec(ctx, `DELETE FROM audit_log WHERE at < ?`, before.UnixMilli())
	})
}

const userCols = `id, email, role, bounds, created_at, updated_at`

func scanUser(r Row, extra ...any) (u marquee.User, err error) {
	var created, updated int64
	var bounds string
	err = r.Scan(append([]any{&u.ID, &u.Email, &u.Role, &bounds, &created, &updated}, extra...)...)
	u.CreatedAt, u.UpdatedAt, u.Bounds = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC(), marquee.BoundsOf(bounds)
	return u, err
}

var noUser = marquee.Errorf(marquee.KindNotFound, "user not found")

// CreateUser stores user u (its email, role and bounds) with a password
// hash; a taken email is a KindConflict error.
func (s *Store) CreateUser(ctx context.Context, u marquee.User, passwordHash string) (marquee.User, error) {
	return write(ctx, s, "create user", func(tx Tx, now time.Time) (marquee.User, error) {
		return s.insertUser(ctx, tx, now, u, passwordHash)
	})
}

// errNotFirst refuses a first user when there is one already.
var errNotFirst = marquee.Errorf(marquee.KindConflict, "a user exists already: sign in, or ask an admin")

// CreateFirstUser stores a user only when the store has none (first-run
// set-up); otherwise it is a KindConflict error. Under the users lock,
// so two set-ups at once make one user.
func (s *Store) CreateFirstUser(ctx context.Context, email, role, passwordHash string) (marquee.User, error) {
	return write(ctx, s, "create first user", func(tx Tx, now time.Time) (marquee.User, error) {
		if s.cfg.UsersLock != "" {
			if _, err := tx.Exec(ctx, s.cfg.UsersLock); err != nil {
				return marquee.User{}, err
			}
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
			return marquee.User{}, err
		}
		if n > 0 {
			return marquee.User{}, errNotFirst
		}
		return s.insertUser(ctx, tx, now, marquee.User{Email: email, Role: role}, passwordHash)
	})
}

// insertUser adds a user row and its changelog entry in tx.
func (s *Store) insertUser(ctx context.Context, tx Tx, now time.Time, u marquee.User, passwordHash string) (marquee.User, error) {
	u.CreatedAt, u.UpdatedAt = now, now
	var err error
	u.ID, err = s.insertID(ctx, tx, `INSERT INTO users (email, role, bounds, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		"email", u.Email, u.Role, u.Bounds.String(), passwordHash, now.UnixMilli(), now.UnixMilli())
	if errors.Is(err, errDuplicate) {
		return u, marquee.Errorf(marquee.KindConflict, "email %q is taken", u.Email)
	}
	if err != nil {
		return u, err
	}
	return u, tx.LogChange(ctx, marquee.EntityUser, u.ID, "", marquee.OpPut)
}

// HasUsers reports whether any user exists (whether first-run set-up is
// still open).
func (s *Store) HasUsers(ctx context.Context) (bool, error) {
	return withDB(ctx, s, "count users", func(db DB) (bool, error) {
		var n int64
		err := db.QueryRow(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
		return n > 0, err
	})
}

// Users returns every user by id.
func (s *Store) Users(ctx context.Context) ([]marquee.User, error) {
	return withDB(ctx, s, "list users", func(db DB) ([]marquee.User, error) {
		return query(ctx, db, func(r Rows) (marquee.User, error) { return scanUser(r) }, `SELECT `+userCols+` FROM users ORDER BY id`)
	})
}

// User returns user id.
func (s *Store) User(ctx context.Context, id int64) (marquee.User, error) {
	return withDB(ctx, s, "read user", func(db DB) (marquee.User, error) {
		u, err := scanUser(db.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return u, noUser
		}
		return u, err
	})
}

// UserLogin returns the user of email with its password hash.
func (s *Store) UserLogin(ctx context.Context, email string) (marquee.User, string, error) {
	var hash string
	u, err := withDB(ctx, s, "read user", func(db DB) (marquee.User, error) {
		u, err := scanUser(db.QueryRow(ctx, `SELECT `+userCols+`, password_hash FROM users WHERE email = ?`, email), &hash)
		if errors.Is(err, ErrNoRows) {
			return u, noUser
		}
		return u, err
	})
	return u, hash, err
}

// UpdateUser changes user id. Demoting the last owner is a KindConflict
// error; a changed password or role ends the user's sessions.
func (s *Store) UpdateUser(ctx context.Context, id int64, c marquee.UserChange) (marquee.User, error) {
	return write(ctx, s, "update user", func(tx Tx, now time.Time) (marquee.User, error) {
		old, err := s.lockUser(ctx, tx, id, c.Allow)
		if err != nil {
			return old, err
		}
		if c.IfPasswordHash != nil { // the row is locked: compare, then set
			var stored string
			if err := tx.QueryRow(ctx, `SELECT password_hash FROM users WHERE id = ?`, id).Scan(&stored); err != nil {
				return old, err
			}
			if stored != *c.IfPasswordHash {
				return old, marquee.Errorf(marquee.KindGone, "the password changed meanwhile: this invitation is used")
			}
		}
		u := old
		if c.Email != nil {
			u.Email = *c.Email
		}
		if c.Role != nil {
			u.Role = *c.Role
			if old.Role == marquee.RoleOwner && u.Role != marquee.RoleOwner {
				if err := notLastOwner(ctx, tx); err != nil {
					return old, err
				}
			}
		}
		if c.Bounds != nil {
			u.Bounds = *c.Bounds
		}
		u.UpdatedAt = now
		hash := ""
		if c.PasswordHash != nil {
			hash = *c.PasswordHash
		}
		n, err := tx.Exec(ctx, `UPDATE users SET email = ?, role = ?, bounds = ?, password_hash = CASE WHEN ? = '' THEN password_hash ELSE ? END, updated_at = ?
			WHERE id = ? AND NOT EXISTS (SELECT 1 FROM users o WHERE o.email = ? AND o.id <> ?)`,
			u.Email, u.Role, u.Bounds.String(), hash, hash, now.UnixMilli(), id, u.Email, id)
		if err != nil {
			return old, err
		}
		if n == 0 {
			return old, marquee.Errorf(marquee.KindConflict, "email %q is taken", u.Email)
		}
		if c.PasswordHash != nil || u.Role != old.Role || u.Bounds.String() != old.Bounds.String() {
			if err := endSessions(ctx, tx, "user_id", id); err != nil {
				return old, err
			}
		}
		return u, tx.LogChange(ctx, marquee.EntityUser, id, "", marquee.OpPut)
	})
}

// DeleteUser deletes user id and ends its sessions; deleting the last
// owner is a KindConflict error.
func (s *Store) DeleteUser(ctx context.Context, id int64, allow func(old marquee.User) error) error {
	return exec(ctx, s, "delete user", func(tx Tx, now time.Time) error {
		old, err := s.lockUser(ctx, tx, id, allow)
		if err != nil {
			return err
		}
		if old.Role == marquee.RoleOwner {
			if err := notLastOwner(ctx, tx); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM users WHERE id = ?`, id); err != nil {
			return err
		}
		if err := endSessions(ctx, tx, "user_id", id); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntityUser, id, "", marquee.OpDelete)
	})
}

// lockUser takes the users lock (one change of users at a time, so that
// two demotions cannot remove the last two owners together) and reads
// user id as allow judges it.
func (s *Store) lockUser(ctx context.Context, tx Tx, id int64, allow func(marquee.User) error) (marquee.User, error) {
	if s.cfg.UsersLock != "" {
		if _, err := tx.Exec(ctx, s.cfg.UsersLock); err != nil {
			return marquee.User{}, err
		}
	}
	u, err := scanUser(tx.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	if errors.Is(err, ErrNoRows) {
		return u, noUser
	}
	if err == nil && allow != nil {
		err = allow(u)
	}
	return u, err
}

func notLastOwner(ctx context.Context, tx Tx) error {
	var owners int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM users WHERE role = ?`, marquee.RoleOwner).Scan(&owners); err != nil {
		return err
	}
	if owners <= 1 {
		return marquee.Errorf(marquee.KindConflict, "the last owner cannot be removed or demoted; make another owner first")
	}
	return nil
}

// endSessions deletes the sessions whose col (user_id or key_id) is id.
func endSessions(ctx context.Context, tx Tx, col string, id int64) error {
	hashes, err := query(ctx, tx, func(r Rows) (h string, err error) { return h, r.Scan(&h) },
		`SELECT hash FROM sessions WHERE `+col+` = ?`, id)
	if err != nil {
		return err
	}
	for _, h := range hashes {
		if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE hash = ?`, h); err != nil {
			return err
		}
		if err := unaudited(tx).LogChange(ctx, marquee.EntitySession, 0, h, marquee.OpDelete); err != nil {
			return err
		}
	}
	return nil
}

// unaudited is tx without its audit: a change that follows from the
// audited one (the sessions a deleted user had) is not recorded again.
func unaudited(tx Tx) Tx {
	if a, ok := tx.(audited); ok {
		return a.Tx
	}
	return tx
}

const keyCols = `id, name, prefix, hash, scopes, bounds, created_by, created_at, expires_at, revoked_at, last_used_at`

func scanKey(r Row) (k marquee.APIKey, err error) {
	var scopes, bounds string
	var created int64
	var expires, revoked, used *int64
	if err := r.Scan(&k.ID, &k.Name, &k.Prefix, &k.Hash, &scopes, &bounds, &k.CreatedBy, &created, &expires, &revoked, &used); err != nil {
		return k, err
	}
	k.Bounds = marquee.BoundsOf(bounds)
	k.Scopes, k.CreatedAt = marquee.ScopesOf(scopes), time.UnixMilli(created).UTC()
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = timeOrNil(expires), timeOrNil(revoked), timeOrNil(used)
	return k, nil
}

func timeOrNil(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := time.UnixMilli(*ms).UTC()
	return &t
}

func millisOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

var noKey = marquee.Errorf(marquee.KindNotFound, "key not found")

// CreateKey stores an API key by the hash of its secret.
func (s *Store) CreateKey(ctx context.Context, k marquee.APIKey, hash string) (marquee.APIKey, error) {
	return write(ctx, s, "create key", func(tx Tx, now time.Time) (marquee.APIKey, error) {
		k.CreatedAt, k.Hash = now, hash
		var err error
		k.ID, err = s.insertID(ctx, tx, `INSERT INTO api_keys (name, prefix, hash, scopes, bounds, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			"", k.Name, k.Prefix, hash, k.Scopes.String(), k.Bounds.String(), k.CreatedBy, now.UnixMilli(), millisOrNil(k.ExpiresAt))
		if err != nil {
			return k, err
		}
		return k, tx.LogChange(ctx, marquee.EntityKey, k.ID, "", marquee.OpPut)
	})
}

// Keys returns every key by id, revoked ones included.
func (s *Store) Keys(ctx context.Context) ([]marquee.APIKey, error) {
	return withDB(ctx, s, "list keys", func(db DB) ([]marquee.APIKey, error) {
		return query(ctx, db, scanKeyRows, `SELECT `+keyCols+` FROM api_keys ORDER BY id`)
	})
}

func scanKeyRows(r Rows) (marquee.APIKey, error) { return scanKey(r) }

// Key returns key id.
func (s *Store) Key(ctx context.Context, id int64) (marquee.APIKey, error) {
	return withDB(ctx, s, "read key", func(db DB) (marquee.APIKey, error) {
		k, err := scanKey(db.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return k, noKey
		}
		return k, err
	})
}

// KeyByHash returns the key whose secret hashes to hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (marquee.APIKey, error) {
	return withDB(ctx, s, "read key", func(db DB) (marquee.APIKey, error) {
		k, err := scanKey(db.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE hash = ?`, hash))
		if errors.Is(err, ErrNoRows) {
			return k, noKey
		}
		return k, err
	})
}

// RevokeKey revokes key id (it stays listed, revoked) and ends the
// sessions signed in with it. Revoking a revoked key changes nothing.
func (s *Store) RevokeKey(ctx context.Context, id int64) error {
	return exec(ctx, s, "revoke key", func(tx Tx, now time.Time) error {
		var revoked *int64
		err := tx.QueryRow(ctx, `SELECT revoked_at FROM api_keys WHERE id = ?`, id).Scan(&revoked)
		switch {
		case errors.Is(err, ErrNoRows):
			return noKey
		case err != nil:
			return err
		case revoked != nil:
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ?`, now.UnixMilli(), id); err != nil {
			return err
		}
		if err := endSessions(ctx, tx, "key_id", id); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntityKey, id, "", marquee.OpDelete)
	})
}

// TouchKeys records when keys were last used (batched by the caller).
func (s *Store) TouchKeys(ctx context.Context, used map[int64]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return exec(ctx, s, "record key use", func(tx Tx, _ time.Time) error {
		for id, at := range used {
			if _, err := tx.Exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
				at.UnixMilli(), id, at.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
}

var noSession = marquee.Errorf(marquee.KindNotFound, "session not found")

// CreateSession stores a session.
func (s *Store) CreateSession(ctx context.Context, se marquee.Session) error {
	return exec(ctx, s, "create session", func(tx Tx, _ time.Time) error {
		if _, err := tx.Exec(ctx, `INSERT INTO sessions (hash, user_id, key_id, created_at, seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			se.Hash, se.UserID, se.KeyID, se.CreatedAt.UnixMilli(), se.SeenAt.UnixMilli(), se.ExpiresAt.UnixMilli()); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntitySession, 0, se.Hash, marquee.OpPut)
	})
}

// Session returns the session of hash.
func (s *Store) Session(ctx context.Context, hash string) (marquee.Session, error) {
	return withDB(ctx, s, "read session", func(db DB) (se marquee.Session, err error) {
		var created, seen, expires int64
		err = db.QueryRow(ctx, `SELECT hash, user_id, key_id, created_at, seen_at, expires_at FROM sessions WHERE hash = ?`, hash).
			Scan(&se.Hash, &se.UserID, &se.KeyID, &created, &seen, &expires)
		if errors.Is(err, ErrNoRows) {
			return se, noSession
		}
		se.CreatedAt, se.SeenAt, se.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(seen).UTC(), time.UnixMilli(expires).UTC()
		return se, err
	})
}

// DeleteSession ends the session of hash; ending an ended one changes
// nothing.
func (s *Store) DeleteSession(ctx context.Context, hash string) error {
	return exec(ctx, s, "delete session", func(tx Tx, _ time.Time) error {
		n, err := tx.Exec(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
		if err != nil || n == 0 {
			return err
		}
		return tx.LogChange(ctx, marquee.EntitySession, 0, hash, marquee.OpDelete)
	})
}

// TouchSessions records when sessions were last seen (batched by the
// caller).
func (s *Store) TouchSessions(ctx context.Context, seen map[string]time.Time) error {
	if len(seen) == 0 {
		return nil
	}
	return exec(ctx, s, "record session use", func(tx Tx, _ time.Time) error {
		for h, at := range seen {
			if _, err := tx.Exec(ctx, `UPDATE sessions SET seen_at = ? WHERE hash = ? AND seen_at < ?`, at.UnixMilli(), h, at.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
}

// TrimSessions deletes the sessions past their end, or not seen since
// idleBefore, and the failed logins older than the throttling window
// (failuresBefore).
func (s *Store) TrimSessions(ctx context.Context, now, idleBefore, failuresBefore time.Time) (int64, error) {
	return withDB(ctx, s, "trim sessions", func(db DB) (int64, error) {
		if _, err := db.Exec(ctx, `DELETE FROM login_failures WHERE at < ?`, failuresBefore.UnixMilli()); err != nil {
			return 0, err
		}
		return db.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= ? OR seen_at < ?`, now.UnixMilli(), idleBefore.UnixMilli())
	})
}

// LoginFailures returns, for each subject, how many failed logins it has
// had since since and when the last was.
func (s *Store) LoginFailures(ctx context.Context, subjects []string, since time.Time) ([]int, time.Time, error) {
	counts := make([]int, len(subjects))
	var last time.Time
	_, err := withDB(ctx, s, "read login failures", func(db DB) (struct{}, error) {
		for i, sub := range subjects {
			var n int
			var at *int64
			if err := db.QueryRow(ctx, `SELECT count(*), max(at) FROM login_failures WHERE subject = ? AND at >= ?`, sub, since.UnixMilli()).Scan(&n, &at); err != nil {
				return struct{}{}, err
			}
			counts[i] = n
			if at != nil && time.UnixMilli(*at).After(last) {
				last = time.UnixMilli(*at).UTC()
			}
		}
		return struct{}{}, nil
	})
	return counts, last, err
}

// AddLoginFailure records a failed login of each subject at at, and
// forgets their failures older than before.
func (s *Store) AddLoginFailure(ctx context.Context, subjects []string, at, before time.Time) error {
	return exec(ctx, s, "record login failure", func(tx Tx, _ time.Time) error {
		for _, sub := range subjects {
			if _, err := tx.Exec(ctx, `DELETE FROM login_failures WHERE subject = ? AND at < ?`, sub, before.UnixMilli()); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO login_failures (subject, at) VALUES (?, ?)`, sub, at.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClearLoginFailures forgets the failed logins of subject (after it
// signs in).
func (s *Store) ClearLoginFailures(ctx context.Context, subject string) error {
	_, err := withDB(ctx, s, "clear login failures", func(db DB) (int64, error) {
		return db.Exec(ctx, `DELETE FROM login_failures WHERE subject = ?`, subject)
	})
	return err
}
