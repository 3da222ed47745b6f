package sqltx

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// migrations are the schema's versions for SQLite and PostgreSQL, one
// file each, applied in the order of their names (0001_…, 0002_…). A
// file may hold several statements, each ending a line with ";", and no
// "?" (the PostgreSQL adapter would number it). Where the dialects spell
// a type differently, the file says {{name}} and each dialect's Dialect
// fills it in. MySQL has its own files (store/mysql/migrations).
//
//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the migration files of SQLite and PostgreSQL (see
// migrations), for Migrate.
var Migrations = func() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err)
	}
	return sub
}()

// Dialect is how a database spells what the migrations leave open.
type Dialect struct {
	// ID ({{id}}) is a 64-bit primary key the database assigns in
	// increasing order.
	ID string
	// Key ({{key}}) is a 64-bit primary key the row is given.
	Key string
	// Blob ({{blob}}) is a column of bytes.
	Blob string
	// Clustered ({{clustered}}) ends a CREATE TABLE whose rows are stored
	// in primary key order ("" where they cannot be).
	Clustered string
}

// Migrate brings the schema of db up to date with the migration files
// of files, spelled in dialect d, one statement at a time. A file is
// named for the schema version it brings the database to (0006_….sql),
// so a version is the same schema on every database; a dialect may start
// at a later version with a file holding the whole schema of that
// version (MySQL: 0006_schema.sql). db is a transaction the caller
// commits or, on a database whose DDL commits statement by statement
// (MySQL), a connection: there each file must be safe to run again after
// it stopped halfway. The caller holds whatever lock keeps two instances
// from migrating at once. The version is kept in schema_version and
// raised after each file; a database newer than this binary is refused.
func Migrate(ctx context.Context, db DB, files fs.FS, d Dialect) error {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return err
	}
	if _, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`); err != nil {
		return err
	}
	var v int
	err = db.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, ErrNoRows) {
		_, err = db.Exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`)
	}
	if err != nil {
		return err
	}
	spell := strings.NewReplacer("{{id}}", d.ID, "{{key}}", d.Key, "{{blob}}", d.Blob, "{{clustered}}", d.Clustered)
	latest := 0
	for _, name := range names {
		n, err := version(name)
		if err != nil {
			return err
		}
		if latest = n; n <= v {
			continue
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		for _, stmt := range statements(spell.Replace(string(b))) {
			if _, err := db.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
		}
		if _, err := db.Exec(ctx, `UPDATE schema_version SET version = ?`, n); err != nil {
			return err
		}
	}
	if v > latest {
		return fmt.Errorf("database schema version %d is newer than this binary's %d", v, latest)
	}
	// 0006_ad_search: the keys of ads stored before it, or since by an
	// older binary during a rolling upgrade (an index lookup when none).
	if err := fillTitleKeys(ctx, db); err != nil {
		return fmt.Errorf("title keys (0006_ad_search): %w", err)
	}
	return nil
}

// version is the schema version a migration file brings a database to:
// the number its name starts with.
func version(name string) (int, error) {
	digits, _, _ := strings.Cut(name, "_")
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("migration %s: the name must start with its version (0007_…)", name)
	}
	return n, nil
}

// statements splits a migration file into its statements: each ends a
// line with ";" (comments, "--" to the end of a line, never do).
func statements(file string) []string {
	var out []string
	for stmt := range strings.SplitSeq(file, ";\n") {
		if stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt), ";")); stmt != "" && !onlyComments(stmt) {
			out = append(out, stmt)
		}
	}
	return out
}

// onlyComments reports whether every line of s is blank or a comment.
func onlyComments(s string) bool {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			return false
		}
	}
	return true
}

// fillTitleKeys sets the title_key of every ad that has none (see
// TitleKey), a batch at a time.
func fillTitleKeys(ctx context.Context, db DB) error {
	type row struct {
		id    int64
		title string
	}
	for {
		batch, err := query(ctx, db, func(r Rows) (row, error) {
			var x row
			return x, r.Scan(&x.id, &x.title)
		}, `SELECT id, title FROM ads WHERE title_key IS NULL LIMIT 1000`)
		if err != nil || len(batch) == 0 {
			return err
		}
		for _, x := range batch {
			if _, err := db.Exec(ctx, `UPDATE ads SET title_key = ? WHERE id = ?`, TitleKey(x.title), x.id); err != nil {
				return err
			}
		}
	}
}
