// Package sqlite is Marquee's embedded store: ads and their changelog in one
// SQLite file (pure Go, WAL mode), created with its schema on first open.
// Every mutation writes its row and a changelog entry in one transaction.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"marquee"
	"marquee/store/adrow"
	"marquee/store/sqltx"
)

// Store is an ads store in one SQLite file. It is safe for concurrent use,
// also by several processes on the same file.
type Store struct {
	// Writes has the writes of ads and links (sqltx), in transactions of
	// inTx, one prepared statement a link for a click flush (cheap in
	// process: 6 µs a link, against 24 µs in 500-row statements).
	sqltx.Writes
	db  *sql.DB
	now func() time.Time
	// stmts caches prepared statements by query for reads outside
	// transactions: SQLite otherwise parses a query each time it runs, a
	// third of the cost of a cache miss's look-up.
	stmts sync.Map
}

// maxConns bounds the connections a Store holds open.
var maxConns = max(8, 4*runtime.GOMAXPROCS(0))

// migrations are applied in order; the schema's version is how many ran.
var migrations = []string{
	`CREATE TABLE ads (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		title      TEXT    NOT NULL,
		start_at   INTEGER NOT NULL, -- unix milliseconds
		end_at     INTEGER NOT NULL,
		conditions TEXT    NOT NULL, -- JSON array of normalised conditions
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE INDEX ads_end_at ON ads (end_at);
	CREATE TABLE changelog (
		seq       INTEGER PRIMARY KEY AUTOINCREMENT,
		entity    TEXT    NOT NULL, -- "ad"
		entity_id INTEGER NOT NULL, -- 0 with op "reload": reload everything
		op        TEXT    NOT NULL, -- "put", "delete", "reload"
		at        INTEGER NOT NULL  -- unix milliseconds of the commit
	);`,
	// Links, and ads' landing urls with their tracking links.
	`ALTER TABLE ads ADD COLUMN url TEXT NOT NULL DEFAULT '';
	ALTER TABLE ads ADD COLUMN link_code TEXT NOT NULL DEFAULT '';
	ALTER TABLE changelog ADD COLUMN entity_key TEXT NOT NULL DEFAULT ''; -- a link's code
	` + fmt.Sprintf(sqltx.LinksTable, "INTEGER PRIMARY KEY AUTOINCREMENT") + `;
	` + fmt.Sprintf(sqltx.ClicksTable, "INTEGER PRIMARY KEY") + `;`,
}

// Open opens (creating if needed) the SQLite database at path and brings its
// schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "mmap_size(1073741824)") // reads map the file instead of copying pages
	q.Add("_pragma", "cache_size(-16384)")    // 16 MiB a connection (default 2 MiB): a click flush rewrites many pages
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Keep the connections: database/sql's default of 2 idle ones made a
	// burst of cache misses open and close SQLite connections (each
	// reading the schema, each preparing its statements again) — a fifth
	// of the cost of a miss. Reads beyond a few per core only queue.
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	s := &Store{db: db, now: time.Now}
	s.Writes = sqltx.NewWrites(func(ctx context.Context, now time.Time, fn func(sqltx.Tx) error) error {
		return s.inTx(ctx, now, func(tx *txn) error { return fn(tx) })
	}, func() time.Time { return s.now() }, 1)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`)
	}
	if err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this binary's %d", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %v", marquee.ErrUnavailable, err)
	}
	return nil
}

// Ad returns ad id, or an error wrapping marquee.ErrNotFound.
func (s *Store) Ad(ctx context.Context, id int64) (marquee.Ad, error) {
	a, err := sqltx.Ad(ctx, s.read(), id)
	return a, s.wrap(err)
}

// read returns the database as sqltx.DB, running queries as cached
// prepared statements.
func (s *Store) read() conn { return conn{q: s.db, stmts: &s.stmts} }

// ListAds returns one page of the ads in f.State, ordered by id, and how many
// ads are in that state in all.
func (s *Store) ListAds(ctx context.Context, f marquee.AdFilter) ([]marquee.Ad, int, error) {
	now := f.Now.UnixMilli()
	var where string
	var args []any
	switch f.State {
	case marquee.AdsActive:
		where, args = `WHERE start_at < ? AND end_at > ?`, []any{now, now}
	case marquee.AdsScheduled:
		where, args = `WHERE start_at >= ?`, []any{now}
	case marquee.AdsExpired:
		where, args = `WHERE end_at <= ?`, []any{now}
	}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM ads `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count ads: %w", err)
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+adrow.Columns+` FROM ads `+where+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list ads: %w", err)
	}
	defer rows.Close()
	ads, err := adrow.Collect(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("list ads: %w", err)
	}
	return ads, total, nil
}

// EachLiveAd calls fn for every ad that has not expired at now (active or
// scheduled), in no particular order, and stops at fn's first error. fn is
// called from several goroutines at once (see adrow.Each).
func (s *Store) EachLiveAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error {
	err := adrow.Each(ctx, func(ctx context.Context, yield func(adrow.Row) error) error {
		// A sequential scan of the table: at start most rows are live, and
		// following the end_at index would read the table in random order.
		rows, err := s.db.QueryContext(ctx, `SELECT `+adrow.Columns+` FROM ads NOT INDEXED WHERE end_at > ?`, now.UnixMilli())
		if err != nil {
			return err
		}
		defer rows.Close()
		return adrow.Yield(rows, yield)
	}, fn)
	if err != nil {
		return fmt.Errorf("load ads: %w", err)
	}
	return nil
}

// InsertAds stores many ads in one transaction (for seeding), with a single
// "reload" changelog entry, and calls progress after each one.
func (s *Store) InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error {
	now := s.now().UTC()
	return s.inTx(ctx, now, func(tx *txn) error {
		stmt, err := tx.tx.PrepareContext(ctx,
			`INSERT INTO ads (title, start_at, end_at, conditions, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, in := range ins {
			conds, err := adrow.Conditions(in)
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(),
				conds, now.UnixMilli(), now.UnixMilli()); err != nil {
				return fmt.Errorf("insert ad: %w", err)
			}
			progress()
		}
		return tx.LogChange(ctx, "", 0, "", marquee.OpReload)
	})
}

// inTx runs fn in a transaction whose changelog entries are stamped at.
func (s *Store) inTx(ctx context.Context, at time.Time, fn func(*txn) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	// The transaction's statements are prepared once each (a click flush
	// runs one statement per link).
	if err := fn(&txn{conn: conn{q: tx, stmts: &sync.Map{}}, tx: tx, at: at}); err != nil {
		return s.wrap(err)
	}
	return s.wrap(tx.Commit())
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// conn adapts a querier to sqltx.DB.
type conn struct {
	q querier
	// stmts, when set, caches the statements of Exec's and QueryRow's
	// queries (see Store.stmts, and inTx).
	stmts *sync.Map
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if c.stmts == nil {
		res, err = c.q.ExecContext(ctx, query, args...)
	} else {
		var st *sql.Stmt
		if st, err = c.prepared(ctx, query); err == nil {
			res, err = st.ExecContext(ctx, args...)
		}
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqltx.Row {
	if c.stmts == nil {
		return row{r: c.q.QueryRowContext(ctx, query, args...)}
	}
	st, err := c.prepared(ctx, query)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.QueryRowContext(ctx, args...)}
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqltx.Rows, error) {
	r, err := c.q.QueryContext(ctx, query, args...)
	return rows{r}, err
}

// prepared returns query's cached statement, preparing it the first time.
func (c conn) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.q.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// row is a result row, or the error of preparing its query.
type row struct {
	r   *sql.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return sqltx.ErrNoRows
	}
	return err
}

type rows struct{ *sql.Rows }

func (r rows) Close() { r.Rows.Close() }

// txn is a transaction as sqltx.Tx; its changelog entries are stamped at.
type txn struct {
	conn
	tx *sql.Tx
	at time.Time
}

// LogChange writes the changelog entry of a change made in the
// transaction. SQLite runs one write transaction at a time, so seqs
// commit in order.
func (t *txn) LogChange(ctx context.Context, entity string, id int64, key string, op marquee.ChangeOp) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO changelog (entity, entity_id, entity_key, op, at) VALUES (?, ?, ?, ?, ?)`,
		entity, id, key, string(op), t.at.UnixMilli())
	return err
}

// LastSeq is the seq of the newest changelog entry, 0 if there is none.
func (s *Store) LastSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM changelog`).Scan(&seq)
	return seq, s.wrap(err)
}

// FirstSeq is the seq of the oldest changelog entry kept, 0 if there is none.
func (s *Store) FirstSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(min(seq), 0) FROM changelog`).Scan(&seq)
	return seq, s.wrap(err)
}

// Changes returns up to limit changelog entries after seq, in seq order.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]marquee.Change, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT seq, entity, entity_id, entity_key, op, at FROM changelog WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []marquee.Change
	for rows.Next() {
		var c marquee.Change
		var at int64
		if err := rows.Scan(&c.Seq, &c.Entity, &c.ID, &c.Key, &c.Op, &at); err != nil {
			return nil, s.wrap(err)
		}
		c.At = time.UnixMilli(at).UTC()
		out = append(out, c)
	}
	return out, s.wrap(rows.Err())
}

// TrimChangelog deletes entries committed before before, always keeping
// the newest, and returns how many it deleted.
func (s *Store) TrimChangelog(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx,
		`DELETE FROM changelog WHERE at < ? AND seq < (SELECT max(seq) FROM changelog)`, before.UnixMilli())
	if err != nil {
		return 0, s.wrap(err)
	}
	return res.RowsAffected()
}

// wrap marks errors of a database that cannot be reached as
// marquee.ErrUnavailable; a local SQLite file is unavailable only when it
// is locked for longer than the busy timeout.
func (s *Store) wrap(err error) error {
	if err != nil && strings.Contains(err.Error(), "SQLITE_BUSY") {
		return fmt.Errorf("%w: %v", marquee.ErrUnavailable, err)
	}
	return err
}

// Link returns link code, or an error wrapping marquee.ErrNotFound.
func (s *Store) Link(ctx context.Context, code string) (marquee.Link, error) {
	l, err := sqltx.Link(ctx, s.read(), code)
	return l, s.wrap(err)
}

// LinkTarget returns what a redirect needs of link code (see
// sqltx.Target), or an error wrapping marquee.ErrNotFound.
func (s *Store) LinkTarget(ctx context.Context, code string) (marquee.Link, error) {
	l, err := sqltx.Target(ctx, s.read(), code)
	return l, s.wrap(err)
}

// ListLinks returns one page of links, newest first, and how many there are.
func (s *Store) ListLinks(ctx context.Context, offset, limit int) ([]marquee.Link, int, error) {
	links, total, err := sqltx.ListLinks(ctx, s.read(), offset, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list links: %w", s.wrap(err))
	}
	return links, total, nil
}

// InsertLinks stores many links in one transaction (for seeding), with a
// single "reload" changelog entry, and calls progress after each one.
// Every input needs its code.
func (s *Store) InsertLinks(ctx context.Context, ins []marquee.LinkInput, progress func()) error {
	now := s.now().UTC()
	return s.inTx(ctx, now, func(tx *txn) error {
		stmt, err := tx.tx.PrepareContext(ctx, `INSERT INTO links (code, url, expires_at, max_clicks, redirect, ad_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, in := range ins {
			var expires int64
			if !in.ExpiresAt.IsZero() {
				expires = in.ExpiresAt.UnixMilli()
			}
			if _, err := stmt.ExecContext(ctx, in.Code, in.URL, expires, in.MaxClicks, in.Redirect, in.AdID,
				now.UnixMilli(), now.UnixMilli()); err != nil {
				return fmt.Errorf("insert link %q: %w", in.Code, err)
			}
			progress()
		}
		return tx.LogChange(ctx, "", 0, "", marquee.OpReload)
	})
}
