package sqltx

import (
	"context"
	"errors"
	"time"

	"marquee"
)

// Settings: the install's settings chosen at run time, a row a name;
// each change logged in the changelog (every instance reads the setting
// again) and audited.

// Setting returns setting name's value, and false when it was never set.
func (s *Store) Setting(ctx context.Context, name string) (string, bool, error) {
	type found struct {
		value string
		ok    bool
	}
	f, err := withDB(ctx, s, "get setting", func(db DB) (found, error) {
		var f found
		err := db.QueryRow(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&f.value)
		if errors.Is(err, ErrNoRows) {
			return f, nil
		}
		f.ok = err == nil
		return f, err
	})
	return f.value, f.ok, err
}

// PutSetting sets setting name to value.
func (s *Store) PutSetting(ctx context.Context, name, value string) error {
	return exec(ctx, s, "put setting", func(tx Tx, _ time.Time) error {
		if _, err := tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)`+s.upsert("settings", "name", nil, []string{"value"}), name, value); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntitySetting, 0, name, marquee.OpPut)
	})
}
