// Package postgres is Marquee's production store: ads, links and their
// changelog in PostgreSQL (pgx v5), for many instances on one database.
// Every mutation writes its row and a changelog entry in one transaction
// and notifies listeners on commit; Listen delivers those notifications.
// The store's logic is sqltx's; this package adapts pgx to it, and owns
// what only PostgreSQL has (COPY, LISTEN/NOTIFY, advisory locks).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"marquee"
	"marquee/store/adrow"
	"marquee/store/sqltx"
)

// Store is an ads store in one PostgreSQL schema (the connection's
// search_path). It is safe for concurrent use, also by many processes.
type Store struct {
	// Store has the reads and writes (sqltx), in transactions of inTx
	// (changelog entries stamped at commit), 500 links a statement for a
	// click flush: each statement is a round trip.
	*sqltx.Store
	pool    *pgxpool.Pool
	channel string // NOTIFY channel: one per schema
	lockKey int64  // advisory lock that orders changelog commits
}

// migrations are the schema's versions (see sqltx.Migrate).
//
//go:embed migrations/*.sql
var migrations embed.FS

// Open connects to the database at dsn (a postgres:// URL; search_path
// selects the schema, created if missing) and brings its schema up to date.
// Instances starting at once serialise their migrations on an advisory lock.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "marquee"
	}
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool}
	s.Store = sqltx.NewStore(sqltx.Config{
		DB: conn{pool},
		Begin: func(ctx context.Context, _ time.Time, fn func(sqltx.Tx) error) error {
			return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(&txn{conn{tx}, tx, s}) })
		},
		Now: time.Now, Unavailable: unavailable, ClickBatch: 500, ScanAds: "ads",
	})
	if err := s.migrate(ctx, cfg.ConnConfig.RuntimeParams["search_path"]); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: migrate: %w", wrapUnavailable(err))
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context, searchPath string) error {
	schema := firstSchema(searchPath)
	if schema == "" {
		if err := s.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return err
		}
	}
	s.channel = "marquee_changelog_" + schema
	// One key per schema, for the migration lock (key+1) and the changelog
	// lock (key).
	if err := s.pool.QueryRow(ctx, `SELECT hashtextextended($1, 0)`, "marquee:"+schema).Scan(&s.lockKey); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.lockKey+1); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return err
		}
		sub, err := fs.Sub(migrations, "migrations")
		if err != nil {
			return err
		}
		return sqltx.Migrate(ctx, conn{tx}, sub)
	})
}

// firstSchema returns the first schema of a search_path, unquoted.
func firstSchema(searchPath string) string {
	first, _, _ := strings.Cut(searchPath, ",")
	return strings.Trim(strings.TrimSpace(first), `"`)
}

// Close closes the pool.
func (s *Store) Close() error { s.pool.Close(); return nil }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return wrapUnavailable(s.pool.Ping(ctx)) }

// InsertAds stores many ads in one transaction (for seeding), with a single
// "reload" changelog entry, and calls progress after each one.
func (s *Store) InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error {
	now := time.Now().UnixMilli()
	rows := make([][]any, len(ins))
	for i, in := range ins {
		conds, err := adrow.Conditions(in)
		if err != nil {
			return err
		}
		rows[i] = []any{in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now, now}
	}
	return s.inTx(ctx, func(tx *txn) error {
		_, err := tx.tx.CopyFrom(ctx, pgx.Identifier{"ads"},
			[]string{"title", "start_at", "end_at", "conditions", "created_at", "updated_at"}, pgx.CopyFromRows(rows))
		if err != nil {
			return fmt.Errorf("insert ads: %w", err)
		}
		for range ins {
			progress()
		}
		return tx.LogChange(ctx, "", 0, "", marquee.OpReload)
	})
}

// inTx runs fn in a transaction.
func (s *Store) inTx(ctx context.Context, fn func(*txn) error) error {
	return wrapUnavailable(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(&txn{conn{tx}, tx, s}) }))
}

// querier is what a pgx pool and transaction share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// conn adapts a querier to sqltx.DB, numbering "?" placeholders ($1, $2,
// …); Marquee's queries hold no "?" in literals.
type conn struct{ q querier }

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, numbered(query), args...)
	return tag.RowsAffected(), err
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqltx.Row {
	return row{c.q.QueryRow(ctx, numbered(query), args...)}
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqltx.Rows, error) {
	return c.q.Query(ctx, numbered(query), args...)
}

type row struct{ r pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqltx.ErrNoRows
	}
	return err
}

// numbered rewrites "?" placeholders as $1, $2, ….
func numbered(query string) string {
	var b strings.Builder
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			if n == 0 {
				return query
			}
			b.WriteString(query)
			return b.String()
		}
		n++
		b.WriteString(query[:i])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		query = query[i+1:]
	}
}

// txn is a transaction as sqltx.Tx.
type txn struct {
	conn
	tx pgx.Tx
	s  *Store
}

// LogChange writes the changelog entry of a change made in the
// transaction and notifies listeners on commit. The advisory lock, held
// from here to the end of the transaction, makes changelog seqs commit in
// order: an instance that has seen seq n has seen every committed seq
// below it, so a gap means a rolled-back or still-committing write, never
// a lost one.
func (t *txn) LogChange(ctx context.Context, entity string, id int64, key string, op marquee.ChangeOp) error {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, t.s.lockKey); err != nil {
		return err
	}
	var seq int64
	err := t.tx.QueryRow(ctx, `INSERT INTO changelog (entity, entity_id, entity_key, op, at)
		VALUES ($1, $2, $3, $4, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) RETURNING seq`,
		entity, id, key, string(op)).Scan(&seq)
	if err != nil {
		return err
	}
	_, err = t.tx.Exec(ctx, `SELECT pg_notify($1, $2)`, t.s.channel, strconv.FormatInt(seq, 10))
	return err
}

// InsertLinks stores many links in one transaction (for seeding) by COPY,
// with a single "reload" changelog entry, and calls progress after each
// one. Every input needs its code.
func (s *Store) InsertLinks(ctx context.Context, ins []marquee.LinkInput, progress func()) error {
	now := time.Now().UnixMilli()
	return s.inTx(ctx, func(tx *txn) error {
		i := 0
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i == len(ins) {
				return nil, nil
			}
			in := ins[i]
			i++
			progress()
			var expires int64
			if !in.ExpiresAt.IsZero() {
				expires = in.ExpiresAt.UnixMilli()
			}
			return []any{in.Code, in.URL, expires, in.MaxClicks, int32(in.Redirect), in.AdID, now, now}, nil
		})
		_, err := tx.tx.CopyFrom(ctx, pgx.Identifier{"links"},
			[]string{"code", "url", "expires_at", "max_clicks", "redirect", "ad_id", "created_at", "updated_at"}, src)
		if err != nil {
			return fmt.Errorf("insert links: %w", err)
		}
		return tx.LogChange(ctx, "", 0, "", marquee.OpReload)
	})
}

// Listen holds a connection that LISTENs to this store's changelog
// notifications until ctx is done, calling notified for each one, and
// connected each time the connection is (re)established — notifications
// sent while it was down are lost, so the caller should read the changelog
// then. It reconnects with backoff (100 ms doubling to 5 s).
func (s *Store) Listen(ctx context.Context, connected, notified func()) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, func() { backoff = 100 * time.Millisecond; connected() }, notified)
		if ctx.Err() != nil {
			return
		}
		_ = err // the feed's poll reports the outage; retrying is all there is to do here
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, connected, notified func()) error {
	pooled, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection will be LISTENing: it does not go back to the pool.
	conn := pooled.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return err
	}
	connected()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		notified()
	}
}

// unavailable marks errors that mean the database cannot be reached as
// marquee.KindUnavailable: every error that does not come from the server
// (connection refused, reset or closed, timeouts) and the server's own
// connection, resource and shutdown errors.
func unavailable(err error) error {
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sqltx.ErrNoRows) || errors.Is(err, context.Canceled) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", "53", "57": // connection exception, insufficient resources, operator intervention
		default:
			return err
		}
	}
	return marquee.Unavailable(err)
}

// wrapUnavailable is unavailable for the errors of this package's own
// calls (the shared ones are marked by sqltx): nil stays nil, an error
// that has a kind keeps it.
func wrapUnavailable(err error) error {
	if err == nil || marquee.KindOf(err) != marquee.KindInternal {
		return err
	}
	return unavailable(err)
}
