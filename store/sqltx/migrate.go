package sqltx

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// migrations are the schema's versions, one file each, applied in the
// order of their names (0001_…, 0002_…). A file may hold several
// statements, and no "?" (the PostgreSQL adapter would number it). Where
// the dialects spell a type differently, the file says {{name}} and each
// dialect's Dialect fills it in.
//
//go:embed migrations/*.sql
var migrations embed.FS

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

// Migrate brings the schema of db — a transaction the caller commits,
// under whatever lock keeps two instances from migrating at once — up to
// date with the migrations, spelled in dialect d. The schema's version is
// how many have run, kept in schema_version; a database newer than this
// binary is refused.
func Migrate(ctx context.Context, db DB, d Dialect) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
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
	if v > len(names) {
		return fmt.Errorf("database schema version %d is newer than this binary's %d", v, len(names))
	}
	for i := v; i < len(names); i++ {
		b, err := fs.ReadFile(migrations, names[i])
		if err != nil {
			return err
		}
		spell := strings.NewReplacer("{{id}}", d.ID, "{{key}}", d.Key, "{{blob}}", d.Blob, "{{clustered}}", d.Clustered)
		if _, err := db.Exec(ctx, spell.Replace(string(b))); err != nil {
			return fmt.Errorf("migration %s: %w", names[i], err)
		}
	}
	// 0006_ad_search: the keys of ads stored before it, or since by an
	// older binary during a rolling upgrade (an index lookup when none).
	if err := fillTitleKeys(ctx, db); err != nil {
		return fmt.Errorf("title keys (0006_ad_search): %w", err)
	}
	if v == len(names) {
		return nil
	}
	_, err = db.Exec(ctx, `UPDATE schema_version SET version = ?`, len(names))
	return err
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
