package sqltx

import (
	"context"
	"errors"
	"time"

	"marquee"
)

// PutAsset stores an asset's bytes under its SHA-256, once: the same
// image again stores nothing. created says whether this call stored it.
func (s *Store) PutAsset(ctx context.Context, a marquee.Asset, body []byte) (stored marquee.Asset, created bool, err error) {
	stored, err = write(ctx, s, "store asset", func(tx Tx, now time.Time) (marquee.Asset, error) {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM assets WHERE sha = ?`, a.SHA).Scan(&n); err != nil {
			return a, err
		}
		if n > 0 {
			return a, nil
		}
		_, err := tx.Exec(ctx, `INSERT INTO assets (sha, type, width, height, size, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`+
			s.upsert("assets", "sha", nil, nil), a.SHA, a.Type, a.Width, a.Height, a.Size, body, now.UnixMilli())
		created = err == nil
		a.CreatedAt = now
		return a, err
	})
	return stored, created, err
}

// Asset returns the asset of SHA-256 sha and its bytes, or
// marquee.NoAsset.
func (s *Store) Asset(ctx context.Context, sha string) (marquee.Asset, []byte, error) {
	var body []byte
	a, err := lookup(ctx, s, "get asset", func(db DB) (marquee.Asset, error) {
		var a marquee.Asset
		var created int64
		err := db.QueryRow(ctx, `SELECT sha, type, width, height, size, body, created_at FROM assets WHERE sha = ?`, sha).
			Scan(&a.SHA, &a.Type, &a.Width, &a.Height, &a.Size, &body, &created)
		if errors.Is(err, ErrNoRows) {
			return a, marquee.NoAsset(sha)
		}
		a.CreatedAt = time.UnixMilli(created).UTC()
		return a, err
	})
	return a, body, err
}
