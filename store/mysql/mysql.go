// Package mysql is Marquee's store on MySQL 8.0+ and MariaDB 10.6+
// (github.com/go-sql-driver/mysql), for many instances on one database,
// as on PostgreSQL. Every mutation writes its row and a changelog entry
// in one transaction; changelog inserts are serialised to commit by a
// lock row, so that a hole in seq is a write still committing or rolled
// back, never one skipped. There is no NOTIFY: other instances poll the
// changelog (the feed's -poll, 50 ms by default on MySQL). The store's
// logic is sqltx's; this package adapts database/sql to it and owns what
// only MySQL has (its schema files, GET_LOCK, multi-row bulk inserts).
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"marquee"
	"marquee/store/sqltx"
)

// dialect is how MySQL and MariaDB spell the schema's migrations
// (sqltx.Migrations, the one source every store migrates from). Every
// table is utf8mb4 with a binary collation: text round-trips exactly
// (4-byte UTF-8 included), compares byte by byte as on SQLite, and a
// unique email or code is unique by its bytes, not by a case-folding
// collation's idea of equal; InnoDB stores every table in primary key
// order (one ad's report rows are one run of rows). A column that is
// keyed or indexed is a varchar (MySQL indexes no text without a prefix
// length). DDL commits statement by statement: a file stopped halfway
// runs again, and what it had done is recognised by its error.
var dialect = sqltx.Dialect{
	ID:        "bigint NOT NULL AUTO_INCREMENT PRIMARY KEY",
	Key:       "bigint NOT NULL PRIMARY KEY",
	Blob:      "mediumblob",
	Table:     " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
	Clustered: " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
	BigText:   "mediumtext",
	Str:       func(n int) string { return fmt.Sprintf("varchar(%d)", n) },
	Bytes:     func(n int) string { return fmt.Sprintf("varbinary(%d)", n) },
	Name:      func(x string) string { return "`" + x + "`" },
	Applied: func(err error) bool {
		return serverError(err, 1050) || serverError(err, 1060) || serverError(err, 1061) // table, column, index exists
	},
}

// locks are the rows locked until commit, one for each thing done one
// transaction at a time across instances: "changelog" orders changelog
// inserts by commit (a hole in seq is a write still committing, or
// rolled back), "users" keeps the last owner counted right, "rollup"
// lets one instance roll up reports (the others skip it while it is
// locked). MySQL's own: the other databases have other means.
var locks = []string{
	"CREATE TABLE IF NOT EXISTS marquee_locks (name varchar(32) NOT NULL PRIMARY KEY)" + dialect.Table,
	"INSERT IGNORE INTO marquee_locks (name) VALUES ('changelog'), ('users'), ('rollup')",
}

// Store is an ads store in one MySQL or MariaDB database. It is safe for
// concurrent use, also by many processes.
type Store struct {
	// Store has the reads and writes (sqltx): the reads of a cache miss
	// (Ad, LinkTarget) as server-side prepared statements, prepared once
	// a connection (a miss is one round trip the server does not parse
	// again — redirects at 1,000,000 links, 10% cache: 0.196 → 0.245 of
	// the hello-world), the other reads, and the writes in READ
	// COMMITTED transactions of inTx, with interpolated parameters; 500
	// links a statement for a click flush: each statement is a round
	// trip.
	*sqltx.Store
	db     *sql.DB
	dbName string
	// stmts caches the prepared statements of a cache miss's two reads
	// (sqltx.Config.Lookups), each prepared on a connection when first
	// run there: two a connection, far within the server's
	// max_prepared_stmt_count (16,382 by default) for any fleet.
	stmts sync.Map
}

// maxConns bounds the connections a Store holds open: reads beyond a few
// a core only queue, and a server's max_connections (151 by default) is
// shared by every instance.
var maxConns = max(8, 4*runtime.GOMAXPROCS(0))

// Config returns the driver's configuration for dsn, a URL
// mysql://user:password@host:port/database?param=value: the params are
// the driver's (github.com/go-sql-driver/mysql: tls, timeout, …); Marquee
// then sets what its queries rely on — times in UTC, utf8mb4 with a
// binary collation, strict SQL mode (too long is an error, never a
// truncation), parameters quoted into the query by the driver for a
// statement that is not prepared (interpolateParams: one round trip, not
// three for prepare, execute and close).
func Config(dsn string) (*mysql.Config, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	if u.Scheme != "mysql" || u.Host == "" {
		return nil, fmt.Errorf("mysql: want mysql://user:password@host:port/database, got %s", u.Redacted())
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, fmt.Errorf("mysql: name the database: mysql://user:password@host:port/database")
	}
	host := u.Host
	if u.Port() == "" {
		host += ":3306"
	}
	cfg, err := mysql.ParseDSN("tcp(" + host + ")/" + db + "?" + u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.Collation = "utf8mb4_bin"
	cfg.InterpolateParams = true
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 30 * time.Second // a server that stopped answering; requests have their own deadlines
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	cfg.Params["sql_mode"] = "'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"
	return cfg, nil
}

// Open connects to the database at dsn (see Config) and brings its schema
// up to date; instances starting at once take turns on a named lock. What
// the driver itself reports (a connection found dead, a broken pipe) goes
// to log at warning level, or to slog.Default() when log is nil.
func Open(ctx context.Context, dsn string, log *slog.Logger) (*Store, error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	cfg.Logger = driverLog{log}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(30 * time.Minute) // well within a server's wait_timeout (8 h by default)
	s := &Store{db: db, dbName: cfg.DBName}
	s.Store = sqltx.NewStore(sqltx.Config{
		DB:      sqltx.Std{Q: db},
		Lookups: sqltx.Std{Q: db, Stmts: &s.stmts},
		Begin:   func(ctx context.Context, _ time.Time, fn func(sqltx.Tx) error) error { return s.inTx(ctx, fn) },
		Now:     time.Now, Unavailable: unavailable, Spelling: sqltx.OnDuplicateKey, Duplicate: duplicate,
		ForUpdate: " FOR UPDATE", ClickBatch: 500, ScanAds: "ads FORCE INDEX (PRIMARY)",
		UsersLock: `SELECT name FROM marquee_locks WHERE name = 'users' FOR UPDATE`,
		// SKIP LOCKED (MySQL 8.0.1, MariaDB 10.6): no row while another
		// instance holds it.
		RollUpLock: `SELECT true FROM marquee_locks WHERE name = 'rollup' FOR UPDATE SKIP LOCKED`,
	})
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("mysql: migrate: %w", s.Mark(err))
	}
	return s, nil
}

// driverLog gives the driver's messages, written with fmt.Print's
// spacing, to a structured log: without it they are plain lines on
// stderr among the JSON ones. They name addresses and errors, never a
// password.
type driverLog struct{ log *slog.Logger }

// Print implements mysql.Logger.
func (d driverLog) Print(v ...any) {
	d.log.Warn("mysql driver: "+strings.TrimSpace(fmt.Sprint(v...)), "store", "mysql")
}

// migrate applies the schema files on one connection holding a named
// lock (GET_LOCK: the server's, so instances starting together take
// turns), released when done.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	name := "marquee:migrate:" + s.dbName
	name = name[:min(len(name), 64)] // GET_LOCK's longest name
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, 60)`, name).Scan(&got); err != nil {
		return err
	}
	if got.Int64 != 1 {
		return fmt.Errorf("another instance held the migration lock %q for 60 s", name)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DO RELEASE_LOCK(?)`, name)
	for _, stmt := range locks {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return sqltx.Migrate(ctx, sqltx.Std{Q: conn}, sqltx.Migrations, dialect)
}

// Close closes the pool.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.Mark(s.db.PingContext(ctx)) }

// deadlockRetries is how many times a transaction the server chose as a
// deadlock's victim runs again before its error is returned.
const deadlockRetries = 3

// inTx runs fn in a READ COMMITTED transaction (no gap locks: concurrent
// inserts and upserts do not deadlock on each other's ranges), again if
// the server rolled it back to break a deadlock.
func (s *Store) inTx(ctx context.Context, fn func(sqltx.Tx) error) error {
	for try := 0; ; try++ {
		err := s.inTxOnce(ctx, fn)
		if try < deadlockRetries && serverError(err, 1213) { // ER_LOCK_DEADLOCK
			continue
		}
		return err
	}
}

func (s *Store) inTxOnce(ctx context.Context, fn func(sqltx.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(&txn{Std: sqltx.Std{Q: tx}}); err != nil {
		return err
	}
	return tx.Commit()
}

// txn is a transaction as sqltx.Tx.
type txn struct {
	sqltx.Std
	locked bool // holds the changelog's lock row
}

// LogChange writes the changelog entry of a change made in the
// transaction. The changelog's lock row, taken before the first entry and
// held to the end of the transaction, makes seqs commit in order: the
// next writer's seq is allocated only after this one has committed (or
// rolled back), so an instance that has seen seq n has seen every
// committed seq below it.
func (t *txn) LogChange(ctx context.Context, entity string, id int64, key string, op marquee.ChangeOp) error {
	if !t.locked {
		if _, err := t.Exec(ctx, `SELECT name FROM marquee_locks WHERE name = 'changelog' FOR UPDATE`); err != nil {
			return err
		}
		t.locked = true
	}
	_, err := t.Exec(ctx, `INSERT INTO changelog (entity, entity_id, entity_key, op, at) VALUES (?, ?, ?, ?, ?)`,
		entity, id, key, string(op), time.Now().UnixMilli())
	return err
}

// bulkRows is how many rows one statement of a bulk insert carries:
// ~300 KB of ads, well under max_allowed_packet (16 MiB by default).
const bulkRows = 1000

// InsertAds stores many ads in one transaction (for seeding), bulkRows a
// statement, with a single "reload" changelog entry, and calls progress
// after each one.
func (s *Store) InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error {
	now := time.Now().UnixMilli()
	return s.bulk(ctx, "ads", sqltx.BulkAdColumns, len(ins), func(i int) ([]any, error) {
		progress()
		return sqltx.BulkAdRow(ins[i], now)
	})
}

// InsertLinks stores many links in one transaction (for seeding), as
// InsertAds does. Every input needs its code.
func (s *Store) InsertLinks(ctx context.Context, ins []marquee.LinkInput, progress func()) error {
	now := time.Now().UnixMilli()
	return s.bulk(ctx, "links", sqltx.BulkLinkColumns, len(ins), func(i int) ([]any, error) {
		progress()
		return sqltx.BulkLinkRow(ins[i], now)
	})
}

// bulk inserts n rows into table's columns cols, row(i) giving row i's
// values, bulkRows a statement, in one transaction with a "reload"
// changelog entry. The rows are all made first, so that a transaction
// run again after a deadlock makes none twice.
func (s *Store) bulk(ctx context.Context, table string, cols []string, n int, row func(i int) ([]any, error)) error {
	width := len(cols)
	var stmts [][]any // each statement's arguments
	for start := 0; start < n; start += bulkRows {
		args := make([]any, 0, width*min(bulkRows, n-start))
		for i := start; i < min(n, start+bulkRows); i++ {
			vals, err := row(i)
			if err != nil {
				return err
			}
			args = append(args, vals...)
		}
		stmts = append(stmts, args)
	}
	return s.Mark(s.inTx(ctx, func(tx sqltx.Tx) error {
		for _, args := range stmts {
			q := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` + sqltx.Tuples(len(args)/width, width)
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return fmt.Errorf("insert %s: %w", table, err)
			}
		}
		return tx.LogChange(ctx, "", 0, "", marquee.OpReload)
	}))
}

// duplicate reports whether err is MySQL's duplicate-key error.
func duplicate(err error) bool { return serverError(err, 1062) } // ER_DUP_ENTRY

// serverError reports whether err is the server's error number.
func serverError(err error, number uint16) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == number
}

// unavailable marks errors that mean the database cannot be reached as
// marquee.KindUnavailable — every error that does not come from the
// server (refused, reset or closed connections, timeouts), and the
// server's own errors of connections, resources, shutdown and read-only
// mode — and a full disk or table as marquee.StorageFull.
func unavailable(err error) error {
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, sqltx.ErrNoRows) || errors.Is(err, context.Canceled) {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1021, 1114: // ER_DISK_FULL, ER_RECORD_FILE_FULL ("the table is full")
			return marquee.StorageFull(err)
		case 1040, 1053, 1203, 1205, 1226, 1290, 1317, 1836, 1927, 3024:
			// too many connections, server shutdown, user's connection
			// limit, lock wait timeout, resource limit, read-only,
			// interrupted, read-only mode, connection killed (MariaDB),
			// statement timeout (MySQL)
		default:
			return err
		}
	}
	return marquee.Unavailable(err)
}
