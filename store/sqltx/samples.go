package sqltx

import (
	"context"
	"time"

	"marquee/reportrow"
)

// addSamples adds a flush's samples of requests (an hour, placement and
// slot written again replaces the row: the same sample, a flush retried).
func (s *Store) addSamples(ctx context.Context, tx Tx, slot string, rows []reportrow.RequestSample) error {
	upsert := s.upsert("request_samples", "hour, placement_id, slot", nil, []string{"offered", "doc"})
	for _, r := range rows {
		if _, err := tx.Exec(ctx, `INSERT INTO request_samples (hour, placement_id, slot, offered, doc) VALUES (?, ?, ?, ?, ?)`+upsert,
			r.Hour, r.Placement, slot, r.Offered, string(r.Doc)); err != nil {
			return err
		}
	}
	return nil
}

// RequestSamples returns every instance's samples of the hours in
// [from, to) (unix seconds), in the placements named (none: every one),
// by placement, then hour.
func (s *Store) RequestSamples(ctx context.Context, from, to int64, placements []int64) ([]reportrow.RequestSample, error) {
	where, args := `hour >= ? AND hour < ?`, []any{from, to}
	if len(placements) > 0 {
		where += ` AND placement_id IN (` + placeholders(len(placements)) + `)`
		for _, id := range placements {
			args = append(args, id)
		}
	}
	return withDB(ctx, s, "read request samples", func(db DB) ([]reportrow.RequestSample, error) {
		return query(ctx, db, func(r Rows) (x reportrow.RequestSample, err error) {
			var doc string
			err = r.Scan(&x.Hour, &x.Placement, &x.Offered, &doc)
			x.Doc = []byte(doc)
			return x, err
		}, `SELECT hour, placement_id, offered, doc FROM request_samples WHERE `+where+` ORDER BY placement_id, hour, slot`, args...)
	})
}

// DeleteRequestSamples deletes the samples of the hours before before
// (unix seconds) and says how many rows went.
func (s *Store) DeleteRequestSamples(ctx context.Context, before int64) (int64, error) {
	var n int64
	err := exec(ctx, s, "delete request samples", func(tx Tx, _ time.Time) error {
		var err error
		n, err = tx.Exec(ctx, `DELETE FROM request_samples WHERE hour < ?`, before)
		return err
	})
	return n, err
}
