package sqltx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// Migrate brings the schema of db — a transaction the caller commits,
// under whatever lock keeps two instances from migrating at once — up to
// date with migrations: the .sql files of the driver's migrations folder,
// applied in the order of their names (0001_…, 0002_…). The schema's
// version is how many have run, kept in schema_version. A file may hold
// several statements, and no "?" (the PostgreSQL adapter would number it).
func Migrate(ctx context.Context, db DB, migrations fs.FS) error {
	names, err := fs.Glob(migrations, "*.sql")
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
		if _, err := db.Exec(ctx, string(b)); err != nil {
			return fmt.Errorf("migration %s: %w", names[i], err)
		}
	}
	if v == len(names) {
		return nil
	}
	_, err = db.Exec(ctx, `UPDATE schema_version SET version = ?`, len(names))
	return err
}
