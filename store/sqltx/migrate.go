package sqltx

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
)

// migrations are the schema's versions, one file each, applied in the
// order of their names (0001_…, 0002_…): the one source of the schema of
// every database (SQLite, PostgreSQL, MySQL and MariaDB). A file may hold
// several statements, each ending a line with ";", and no "?" (the
// PostgreSQL adapter would number it). Where the dialects spell
// something differently, the file says {{name}} and each dialect's
// Dialect fills it in.
//
//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the migration files (see migrations), for Migrate.
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
	// Table ({{table}}) ends every CREATE TABLE (table options), and
	// Clustered ({{clustered}}) one whose rows are stored in primary key
	// order ("" where they cannot be).
	Table, Clustered string
	// BigText ({{bigtext}}) is text of up to 16 MiB; "" is "text".
	BigText string
	// Str ({{strN}}) spells text of at most N characters, a column a
	// database may index or key (nil: "text"); Bytes ({{bytesN}}) bytes
	// of at most N (nil: Blob).
	Str, Bytes func(n int) string
	// Name ({{name:x}}) quotes the column name x where it is a reserved
	// word (nil: as it is).
	Name func(x string) string
	// Resync ({{resync:t}}) is a statement that makes the ids table t's
	// {{id}} assigns next follow the ids inserted into it explicitly
	// (nil: "", the database does so by itself).
	Resync func(table string) string
	// Applied reports an error of a statement that a run stopped halfway
	// had already applied (a table, column or index that exists), on a
	// database whose DDL commits statement by statement: the statement
	// is then done. nil: none is.
	Applied func(err error) bool
}

var placeholder = regexp.MustCompile(`\{\{(str|bytes)(\d+)\}\}|\{\{(name|resync):(\w+)\}\}`)

// spell fills in the placeholders of a migration file in dialect d.
func (d Dialect) spell(file string) string {
	file = strings.NewReplacer("{{id}}", d.ID, "{{key}}", d.Key, "{{blob}}", d.Blob, "{{table}}", d.Table,
		"{{clustered}}", d.Clustered, "{{bigtext}}", cmp.Or(d.BigText, "text")).Replace(file)
	return placeholder.ReplaceAllStringFunc(file, func(m string) string {
		p := placeholder.FindStringSubmatch(m)
		n, _ := strconv.Atoi(p[2])
		switch {
		case p[3] == "resync" && d.Resync != nil:
			return d.Resync(p[4])
		case p[3] == "resync":
			return ""
		case p[1] == "str" && d.Str != nil:
			return d.Str(n)
		case p[1] == "str":
			return "text"
		case p[1] == "bytes" && d.Bytes != nil:
			return d.Bytes(n)
		case p[1] == "bytes":
			return d.Blob
		case d.Name != nil:
			return d.Name(p[4])
		}
		return p[4]
	})
}

// Migrate brings the schema of db up to date with the migration files
// of files, spelled in dialect d, one statement at a time. A file is
// named for the schema version it brings the database to (0006_….sql),
// so a version is the same schema on every database. db is a transaction
// the caller commits or, on a database whose DDL commits statement by
// statement (MySQL), a connection: there a file stopped halfway runs
// again from its start, and d.Applied tells the statements it had
// already applied. The caller holds whatever lock keeps two instances
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
		for _, stmt := range statements(d.spell(string(b))) {
			if _, err := db.Exec(ctx, stmt); err != nil && (d.Applied == nil || !d.Applied(err)) {
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
// line with ";" (comments, "--" to the end of a line, never do; a ";"
// before a comment on its line would join two statements, which only
// SQLite and PostgreSQL would run: TestMigrationsSplit).
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
