package sqltx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"marquee"
)

// LastSeq is the seq of the newest changelog entry, 0 if there is none.
func (s *Store) LastSeq(ctx context.Context) (int64, error) {
	return withDB(ctx, s, "last changelog seq", func(db DB) (seq int64, err error) {
		return seq, db.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM changelog`).Scan(&seq)
	})
}

// FirstSeq is the seq of the oldest changelog entry kept, 0 if there is
// none.
func (s *Store) FirstSeq(ctx context.Context) (int64, error) {
	return withDB(ctx, s, "first changelog seq", func(db DB) (seq int64, err error) {
		return seq, db.QueryRow(ctx, `SELECT coalesce(min(seq), 0) FROM changelog`).Scan(&seq)
	})
}

// Changes returns up to limit changelog entries after seq, in seq order.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]marquee.Change, error) {
	return withDB(ctx, s, "read changelog", func(db DB) ([]marquee.Change, error) {
		return query(ctx, db, func(r Rows) (c marquee.Change, err error) {
			var op string
			var at int64
			err = r.Scan(&c.Seq, &c.Entity, &c.ID, &c.Key, &op, &at)
			c.Op, c.At = marquee.ChangeOp(op), time.UnixMilli(at).UTC()
			return c, err
		}, `SELECT seq, entity, entity_id, entity_key, op, at FROM changelog WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	})
}

// TrimChangelog deletes entries committed before before, always keeping
// the newest, and returns how many it deleted.
func (s *Store) TrimChangelog(ctx context.Context, before time.Time) (int64, error) {
	return withDB(ctx, s, "trim changelog", func(db DB) (int64, error) {
		// The newest seq through a derived table: MySQL refuses a
		// subquery on the table a DELETE deletes from.
		return db.Exec(ctx, `DELETE FROM changelog WHERE at < ? AND seq < (SELECT newest FROM (SELECT max(seq) AS newest FROM changelog) AS m)`,
			before.UnixMilli())
	})
}

// StoreID returns the database's random id, made on first use: what a
// saved index is tied to.
func (s *Store) StoreID(ctx context.Context) (string, error) {
	return withDB(ctx, s, "store id", func(db DB) (string, error) {
		var b [16]byte
		rand.Read(b[:])
		// meta.key qualified and no column list: "key" is a reserved
		// word in MySQL.
		if _, err := db.Exec(ctx, `INSERT INTO meta VALUES ('store_id', ?)`+s.upsert("meta", "key", nil, nil), hex.EncodeToString(b[:])); err != nil {
			return "", err
		}
		var id string
		return id, db.QueryRow(ctx, `SELECT value FROM meta WHERE meta.key = 'store_id'`).Scan(&id)
	})
}
