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
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"marquee"
	"marquee/store/adrow"
)

// Store is an ads store in one SQLite file. It is safe for concurrent use,
// also by several processes on the same file.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

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
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, now: time.Now}
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

// CreateAd stores a new ad and returns it with its id.
func (s *Store) CreateAd(ctx context.Context, in marquee.AdInput) (marquee.Ad, error) {
	conds, err := adrow.Conditions(in)
	if err != nil {
		return marquee.Ad{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	var id int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx,
			`INSERT INTO ads (title, start_at, end_at, conditions, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now.UnixMilli(), now.UnixMilli(),
		).Scan(&id)
		if err != nil {
			return err
		}
		return logChange(ctx, tx, id, "put", now)
	})
	if err != nil {
		return marquee.Ad{}, fmt.Errorf("create ad: %w", err)
	}
	return in.Ad(id, now, now), nil
}

// ReplaceAd replaces every client field of ad id; it returns an error
// wrapping marquee.ErrNotFound if there is no such ad.
func (s *Store) ReplaceAd(ctx context.Context, id int64, in marquee.AdInput) (marquee.Ad, error) {
	conds, err := adrow.Conditions(in)
	if err != nil {
		return marquee.Ad{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	var created int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx,
			`UPDATE ads SET title = ?, start_at = ?, end_at = ?, conditions = ?, updated_at = ?
			 WHERE id = ? RETURNING created_at`,
			in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now.UnixMilli(), id,
		).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("ad %d: %w", id, marquee.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return logChange(ctx, tx, id, "put", now)
	})
	if err != nil {
		return marquee.Ad{}, fmt.Errorf("replace ad: %w", err)
	}
	return in.Ad(id, time.UnixMilli(created).UTC(), now), nil
}

// DeleteAd deletes ad id; it returns an error wrapping marquee.ErrNotFound if
// there is no such ad.
func (s *Store) DeleteAd(ctx context.Context, id int64) error {
	now := s.now().UTC()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM ads WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("ad %d: %w", id, marquee.ErrNotFound)
		}
		return logChange(ctx, tx, id, "delete", now)
	})
	if err != nil {
		return fmt.Errorf("delete ad: %w", err)
	}
	return nil
}

// Ad returns ad id, or an error wrapping marquee.ErrNotFound.
func (s *Store) Ad(ctx context.Context, id int64) (marquee.Ad, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+adrow.Columns+` FROM ads WHERE id = ?`, id)
	a, err := scanAd(row)
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("ad %d: %w", id, marquee.ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("get ad %d: %w", id, err)
	}
	return a, nil
}

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
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx,
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
		return logChange(ctx, tx, 0, "reload", now)
	})
}

func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func logChange(ctx context.Context, tx *sql.Tx, id int64, op string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO changelog (entity, entity_id, op, at) VALUES ('ad', ?, ?, ?)`,
		id, op, at.UnixMilli())
	return err
}

func scanAd(row *sql.Row) (marquee.Ad, error) {
	var r adrow.Row
	if err := row.Scan(r.Dest()...); err != nil {
		return marquee.Ad{}, err
	}
	return r.Ad()
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
		`SELECT seq, entity, entity_id, op, at FROM changelog WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []marquee.Change
	for rows.Next() {
		var c marquee.Change
		var at int64
		if err := rows.Scan(&c.Seq, &c.Entity, &c.ID, &c.Op, &at); err != nil {
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
