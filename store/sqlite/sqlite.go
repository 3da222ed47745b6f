// Package sqlite is Marquee's embedded store: ads, links and their
// changelog in one SQLite file (pure Go, WAL mode), created with its
// schema on first open (migrations/). Every mutation writes its row and a
// changelog entry in one transaction. The store's logic is sqltx's; this
// package adapts database/sql to it.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"marquee"
	"marquee/store/sqltx"
)

// Store is an ads store in one SQLite file. It is safe for concurrent use,
// also by several processes on the same file.
type Store struct {
	// Store has the reads and writes (sqltx): reads as cached prepared
	// statements, writes in transactions of inTx, 50 links a statement
	// for a click flush (4.2 µs a link, against 8–12 µs one link a
	// statement: BenchmarkAddClicks).
	*sqltx.Store
	db  *sql.DB
	now func() time.Time
	// stmts caches prepared statements by query for reads outside
	// transactions: SQLite otherwise parses a query each time it runs, a
	// third of the cost of a cache miss's look-up.
	stmts sync.Map
}

// maxConns bounds the connections a Store holds open.
var maxConns = max(8, 4*runtime.GOMAXPROCS(0))

// Open opens (creating if needed) the SQLite database at path and brings its
// schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if err := private(path); err != nil {
		return nil, err
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
	s.Store = sqltx.NewStore(sqltx.Config{
		DB: sqltx.Std{Q: db, Stmts: &s.stmts},
		Begin: func(ctx context.Context, now time.Time, fn func(sqltx.Tx) error) error {
			return s.inTx(ctx, now, func(tx *txn) error { return fn(tx) })
		},
		Now: func() time.Time { return s.now() }, Unavailable: unavailable, ClickBatch: 50, ScanAds: "ads NOT INDEXED",
	})
	// Instances opening a new file together race to switch it to WAL
	// when their first connections open, and SQLite answers the losers
	// SQLITE_BUSY without waiting (the busy timeout does not cover a
	// journal-mode change): such a start tries again, for up to three
	// busy timeouts (each loser also waits for the migrations of those
	// before it: six handles on a loaded 2-core machine took over 10 s).
	var migErr error
	for deadline := time.Now().Add(30 * time.Second); ; {
		if migErr = s.migrate(ctx); migErr == nil || !strings.Contains(migErr.Error(), "SQLITE_BUSY") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if migErr != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, migErr)
	}
	return s, nil
}

// private makes the database at path readable by its owner only (it
// holds password hashes and key hashes): created 0600 if it is new (SQLite
// gives its -wal and -shm files the database's mode), and an existing
// one and its -wal and -shm set to 0600.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("make %s private: %w", p, err)
		}
	}
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Not prepared: a migration may hold several statements. An INTEGER
	// PRIMARY KEY is the table's rowid: no index of its own.
	if err := sqltx.Migrate(ctx, sqltx.Std{Q: tx}, sqltx.Migrations, sqltx.Dialect{ID: "INTEGER PRIMARY KEY AUTOINCREMENT", Key: "INTEGER PRIMARY KEY", Blob: "BLOB", Clustered: " WITHOUT ROWID"}); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return marquee.Unavailable(err)
	}
	return nil
}

// InsertAds stores many ads in one transaction (for seeding), with a single
// "reload" changelog entry, and calls progress after each one.
func (s *Store) InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error {
	now := s.now().UTC()
	return s.inTx(ctx, now, func(tx *txn) error {
		stmt, err := tx.tx.PrepareContext(ctx, bulkInsert("ads", sqltx.BulkAdColumns))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, in := range ins {
			row, err := sqltx.BulkAdRow(in, now.UnixMilli())
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, row...); err != nil {
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
		return err
	}
	defer tx.Rollback()
	// The transaction's statements are prepared once each (a click flush
	// runs one statement per link).
	if err := fn(&txn{Std: sqltx.Std{Q: tx, Stmts: &sync.Map{}}, tx: tx, at: at}); err != nil {
		return err
	}
	return tx.Commit()
}

// txn is a transaction as sqltx.Tx; its changelog entries are stamped at.
type txn struct {
	sqltx.Std
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

// unavailable marks errors of a database that cannot be reached as
// marquee.KindUnavailable; a local SQLite file is unavailable only when it
// is locked for longer than the busy timeout, or its disk is full
// (marquee.StorageFull: SQLite rolls the write back, and the file stays
// whole).
func unavailable(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "SQLITE_BUSY"):
		return marquee.Unavailable(err)
	case strings.Contains(msg, "SQLITE_FULL") || strings.Contains(msg, "database or disk is full") || errors.Is(err, syscall.ENOSPC):
		return marquee.StorageFull(err)
	}
	return err
}

// InsertLinks stores many links in one transaction (for seeding), with a
// single "reload" changelog entry, and calls progress after each one.
// Every input needs its code.
func (s *Store) InsertLinks(ctx context.Context, ins []marquee.LinkInput, progress func()) error {
	now := s.now().UTC()
	return s.inTx(ctx, now, func(tx *txn) error {
		stmt, err := tx.tx.PrepareContext(ctx, bulkInsert("links", sqltx.BulkLinkColumns))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, in := range ins {
			row, err := sqltx.BulkLinkRow(in, now.UnixMilli())
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, row...); err != nil {
				return fmt.Errorf("insert link %q: %w", in.Code, err)
			}
			progress()
		}
		return tx.LogChange(ctx, "", 0, "", marquee.OpReload)
	})
}

// bulkInsert is the INSERT of one row into table's columns cols, which a
// bulk insert prepares once and runs for every row (in process, a
// statement is cheap).
func bulkInsert(table string, cols []string) string {
	return `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` + sqltx.Tuples(1, len(cols))
}

// Backup writes a consistent copy of the database to the file to (which
// must not exist), while other connections and processes keep reading and
// writing: SQLite's VACUUM INTO reads one snapshot of the database.
func (s *Store) Backup(ctx context.Context, to string) error {
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, to); err != nil {
		return fmt.Errorf("backup to %s: %w", to, err)
	}
	return nil
}

// Restore makes the backup at from (Backup's file) the store at path,
// replacing any there (stop the server first: a running one keeps the
// old file open), and returns its store id. The backup is checked on a
// copy — it must be a store this binary opens, and migrates — before
// anything is replaced; the old store's -wal and -shm go with it, so
// that its journal is never applied to the new file.
func Restore(ctx context.Context, from, path string) (storeID string, err error) {
	tmp := path + ".restoring"
	os.Remove(tmp)
	if err := copyFile(from, tmp); err != nil {
		return "", err
	}
	st, err := Open(ctx, tmp)
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s is not a store this binary can open: %w", from, err)
	}
	id, err := st.StoreID(ctx)
	st.Close()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s: %w", from, err)
	}
	for _, f := range []string{path + "-wal", path + "-shm", tmp + "-wal", tmp + "-shm"} {
		os.Remove(f)
	}
	return id, os.Rename(tmp, path)
}

// copyFile copies from to a new file to (0600, synced).
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
