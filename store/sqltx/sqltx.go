// Package sqltx is the store every SQL driver shares, written once against
// DB and Tx, which each driver adapts (database/sql for SQLite and MySQL, pgx for
// PostgreSQL): the migration runner, the writes and reads of every entity
// (ads, links, advertisers, campaigns, placements, assets, users, keys,
// sessions, the audit log, webhooks, erased subjects), the report rows,
// and the changelog. Queries use "?" placeholders; the PostgreSQL adapter numbers
// them. Where the dialects differ, Config says so.
package sqltx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"marquee"
)

// ErrNoRows is what Row.Scan returns when the query matched nothing.
var ErrNoRows = errors.New("no rows")

// errDuplicate is what insertID returns when a row with the new row's
// unique key is stored already.
var errDuplicate = errors.New("duplicate key")

// Spelling is how a dialect spells the statements that differ between
// the databases: an insert that may find its row stored already, and an
// insert that returns the id the database gave the row.
type Spelling int

const (
	// OnConflict is INSERT … ON CONFLICT (key) DO UPDATE SET c =
	// excluded.c (or DO NOTHING), and INSERT … RETURNING id (SQLite,
	// PostgreSQL).
	OnConflict Spelling = iota
	// OnDuplicateKey is INSERT … ON DUPLICATE KEY UPDATE c = VALUES(c),
	// and no RETURNING: an id from LAST_INSERT_ID(), a clash from the
	// driver's duplicate-key error (Config.Duplicate) (MySQL, MariaDB).
	OnDuplicateKey
)

// Row is one result row.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set; Close may be called more than once.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// DB runs queries; a driver's pool and its transactions both are one.
type DB interface {
	// Exec runs a statement and returns how many rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Tx is a transaction that can record its changes in the changelog.
type Tx interface {
	DB
	// LogChange writes the changelog entry of a change made in the
	// transaction; entries commit in seq order (see each store's txn).
	LogChange(ctx context.Context, entity string, id int64, key string, op marquee.ChangeOp) error
}

// Config is what a driver tells NewStore: how to reach its database, and
// the few places its dialect differs.
type Config struct {
	// DB runs the reads outside transactions.
	DB DB
	// Lookups, when set, runs the reads of a cache miss (Ad,
	// LinkTarget) instead of DB: MySQL prepares those (and only those,
	// so that a connection holds two server-side statements) where its
	// other reads are interpolated.
	Lookups DB
	// Begin runs fn in a transaction whose changelog entries are stamped
	// now (a store may stamp its own commit time instead).
	Begin func(ctx context.Context, now time.Time, fn func(Tx) error) error
	// Now is the store's clock (writes use it in UTC, whole milliseconds).
	Now func() time.Time
	// Unavailable returns err as a marquee.KindUnavailable error when it
	// means the database cannot be reached, else err.
	Unavailable func(err error) error
	// Spelling is how the dialect spells upserts and inserts that return
	// an id.
	Spelling Spelling
	// Duplicate reports whether err is the driver's duplicate-key error
	// (needed with OnDuplicateKey only).
	Duplicate func(err error) bool
	// ForUpdate ends a SELECT whose rows the transaction will change, to
	// lock them until it ends: " FOR UPDATE", or "" where a write
	// transaction excludes every other already (SQLite).
	ForUpdate string
	// ClickBatch is AddClicks' links a statement (two statements: read
	// the links, add their counts).
	ClickBatch int
	// RollUpLock, when set, is a query in the roll-up's transaction that
	// answers whether this instance may roll up now, true or no row
	// (PostgreSQL: a transaction-level advisory lock; MySQL: a lock row
	// skipped when locked), so one instance at a time.
	RollUpLock string
	// UsersLock, when set, is a statement that makes changes of users
	// one at a time until commit (PostgreSQL: a transaction-level
	// advisory lock; MySQL: a lock row), so that the last owner is always
	// counted right.
	UsersLock string
	// ScanAds is the FROM of the scan that loads every live ad: the
	// table read in id order ("ads NOT INDEXED" on SQLite, "ads FORCE
	// INDEX (PRIMARY)" on MySQL) rather than by the end_at index, which
	// at start would read most rows in random order.
	ScanAds string
	// ByteOrder is what follows a text column to compare it byte by byte
	// (a code prefix search is a range of codes): "" where text compares
	// so already (SQLite; MySQL, whose tables Marquee makes with a
	// binary collation), ` COLLATE "C"` on PostgreSQL, whose database
	// collation may order otherwise.
	ByteOrder string
	// ImportStart, when set, is run first in an import's transaction.
	// PostgreSQL's is "SET LOCAL plan_cache_mode = force_custom_plan":
	// the import looks links up batch after batch in a table it grows,
	// and a generic plan made while the table was empty scans it whole
	// each time (100,000 rows: 4 minutes instead of seconds).
	ImportStart string
}

// Store has the methods every SQL store has, written once over a
// driver's Config. A driver's store embeds one made by NewStore. It is
// safe for concurrent use.
type Store struct {
	cfg  Config
	full atomic.Bool // the last write failed for lack of space
}

// Full reports whether the last write failed because the database's disk
// was full (marquee.StorageFull); the next write that succeeds clears it.
func (s *Store) Full() bool { return s.full.Load() }

// NewStore returns the shared methods over cfg.
func NewStore(cfg Config) *Store { return &Store{cfg: cfg} }

// Mark gives an error of a driver's own call (outside the shared
// methods, which mark theirs) the kind Config.Unavailable says: nil stays
// nil, an error that has a kind keeps it.
func (s *Store) Mark(err error) error {
	if err == nil || marquee.KindOf(err) != marquee.KindInternal {
		return err
	}
	return s.cfg.Unavailable(err)
}

// wrap marks err as unavailable where the driver says so, naming what
// failed; an error that already has a kind keeps it. A conflict's client
// message names the write that clashed ("create link: code \"x\" is
// taken"), as it always has.
func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	if e := marquee.AsError(err); e != nil && e.Kind == marquee.KindConflict {
		return &marquee.Error{Kind: e.Kind, Message: what + ": " + e.Message, Err: e.Err}
	}
	return fmt.Errorf("%s: %w", what, s.Mark(err))
}

// write runs fn in a transaction of s at s's clock and names what failed.
func write[T any](ctx context.Context, s *Store, what string, fn func(tx Tx, now time.Time) (T, error)) (T, error) {
	now := s.cfg.Now().UTC().Truncate(time.Millisecond)
	var v T
	err := s.cfg.Begin(ctx, now, func(tx Tx) error {
		if a, ok := marquee.AuditFrom(ctx); ok {
			tx = audited{Tx: tx, a: a, now: now}
		}
		var err error
		v, err = fn(tx, now)
		return err
	})
	err = s.wrap(what, err)
	s.full.Store(marquee.IsStorageFull(err))
	return v, err
}

// exec is write for a change that returns nothing.
func exec(ctx context.Context, s *Store, what string, fn func(tx Tx, now time.Time) error) error {
	_, err := write(ctx, s, what, func(tx Tx, now time.Time) (struct{}, error) { return struct{}{}, fn(tx, now) })
	return err
}

// withDB runs fn on s's DB, outside a transaction, and names what failed.
func withDB[T any](ctx context.Context, s *Store, what string, fn func(db DB) (T, error)) (T, error) {
	v, err := fn(s.cfg.DB)
	return v, s.wrap(what, err)
}

// lookup is withDB for the reads of a cache miss (Config.Lookups).
func lookup[T any](ctx context.Context, s *Store, what string, fn func(db DB) (T, error)) (T, error) {
	db := s.cfg.Lookups
	if db == nil {
		db = s.cfg.DB
	}
	v, err := fn(db)
	return v, s.wrap(what, err)
}

// insertID runs query, an INSERT of one row into a table whose id the
// database assigns, and returns the id; when the row clashes with one
// stored on the unique column unique, it inserts nothing and returns
// errDuplicate, and the transaction goes on.
func (s *Store) insertID(ctx context.Context, tx Tx, query, unique string, args ...any) (int64, error) {
	var id int64
	if s.cfg.Spelling == OnDuplicateKey {
		// A duplicate-key error ends the statement, not the transaction.
		if _, err := tx.Exec(ctx, query, args...); err != nil {
			if s.cfg.Duplicate(err) {
				return 0, errDuplicate
			}
			return 0, err
		}
		return id, tx.QueryRow(ctx, `SELECT LAST_INSERT_ID()`).Scan(&id)
	}
	if unique != "" {
		query += ` ON CONFLICT (` + unique + `) DO NOTHING`
	}
	err := tx.QueryRow(ctx, query+` RETURNING id`, args...).Scan(&id)
	if errors.Is(err, ErrNoRows) {
		return 0, errDuplicate
	}
	return id, err
}

// upsert ends an INSERT into table of rows that may be stored already
// (by the unique key of the columns key): a stored row gets the new
// row's values of add added to its own and those of set in place of its
// own; with neither it stays as it is.
func (s *Store) upsert(table, key string, add, set []string) string {
	var b strings.Builder
	if s.cfg.Spelling == OnDuplicateKey {
		b.WriteString(` ON DUPLICATE KEY UPDATE `)
		if len(add)+len(set) == 0 {
			// Qualified: a key column may be a reserved word ("key").
			first, _, _ := strings.Cut(key, ",")
			fmt.Fprintf(&b, `%s.%s = %[1]s.%[2]s`, table, first)
			return b.String()
		}
	} else {
		fmt.Fprintf(&b, ` ON CONFLICT (%s) DO `, key)
		if len(add)+len(set) == 0 {
			return b.String() + `NOTHING`
		}
		b.WriteString(`UPDATE SET `)
	}
	newValue := func(col string) string {
		if s.cfg.Spelling == OnDuplicateKey {
			return `VALUES(` + col + `)`
		}
		return `excluded.` + col
	}
	for i, col := range add {
		if i > 0 {
			b.WriteString(`, `)
		}
		fmt.Fprintf(&b, `%[1]s = %[2]s.%[1]s + %[3]s`, col, table, newValue(col))
	}
	for i, col := range set {
		if i > 0 || len(add) > 0 {
			b.WriteString(`, `)
		}
		fmt.Fprintf(&b, `%s = %s`, col, newValue(col))
	}
	return b.String()
}

// query runs a query on db and scans every row it returns with scan, in
// order; a query that matches nothing gives an empty, non-nil slice.
func query[T any](ctx context.Context, db DB, scan func(Rows) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// lockScope locks the row of scope name (made when first named) until tx
// ends: transactions that count a scope's rows before adding one take
// turns on it, on every store (docs: migration 0041).
func (s *Store) lockScope(ctx context.Context, tx Tx, name string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO scope_locks (name) VALUES (?)`+s.upsert("scope_locks", "name", nil, nil), name); err != nil {
		return err
	}
	var got string
	return tx.QueryRow(ctx, `SELECT name FROM scope_locks WHERE name = ?`+s.cfg.ForUpdate, name).Scan(&got)
}
