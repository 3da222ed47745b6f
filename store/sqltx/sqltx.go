// Package sqltx is the store both SQL drivers share, written once against
// DB and Tx, which each driver adapts (database/sql for SQLite, pgx for
// PostgreSQL): the migration runner, the writes of ads with their
// tracking links and of links with their click counts, the reads, and the
// changelog. Queries use "?" placeholders; the PostgreSQL adapter numbers
// them. Where the dialects differ, Config says so.
package sqltx

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"marquee"
)

// ErrNoRows is what Row.Scan returns when the query matched nothing.
var ErrNoRows = errors.New("no rows")

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
	// Begin runs fn in a transaction whose changelog entries are stamped
	// now (a store may stamp its own commit time instead).
	Begin func(ctx context.Context, now time.Time, fn func(Tx) error) error
	// Now is the store's clock (writes use it in UTC, whole milliseconds).
	Now func() time.Time
	// Unavailable returns err as a marquee.KindUnavailable error when it
	// means the database cannot be reached, else err.
	Unavailable func(err error) error
	// ClickBatch is AddClicks' links a statement: 1 where a statement is
	// cheap (SQLite in process, prepared once), more where each costs a
	// round trip (PostgreSQL).
	ClickBatch int
	// RollUpLock, when set, is a query in the roll-up's transaction that
	// answers whether this instance may roll up now (PostgreSQL: a
	// transaction-level advisory lock, so one instance at a time).
	RollUpLock string
	// UsersLock, when set, is a statement that makes changes of users
	// one at a time until commit (PostgreSQL: a transaction-level
	// advisory lock), so that the last owner is always counted right.
	UsersLock string
	// ScanAds is the FROM of the scan that loads every live ad: SQLite
	// reads the table in order ("ads NOT INDEXED") rather than by the
	// end_at index, which at start would read most rows in random order.
	ScanAds string
	// ByteOrder is what follows a text column to compare it byte by byte
	// (a code prefix search is a range of codes): "" where text compares
	// so already (SQLite), ` COLLATE "C"` on PostgreSQL, whose database
	// collation may order otherwise.
	ByteOrder string
}

// Store has the methods both SQL stores have, written once over a
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

// wrap marks err as unavailable where the driver says so, naming what
// failed; an error that already has a kind keeps it. A conflict's client
// message names the write that clashed ("create link: code \"x\" is
// taken"), as it always has.
func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	switch e := marquee.AsError(err); {
	case e == nil || e.Kind == marquee.KindInternal:
		err = s.cfg.Unavailable(err)
	case e.Kind == marquee.KindConflict:
		return &marquee.Error{Kind: e.Kind, Message: what + ": " + e.Message, Err: e.Err}
	}
	return fmt.Errorf("%s: %w", what, err)
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
