package sqltx

import (
	"context"
	"time"

	"marquee"
)

// EraseSubject records the erasure of a data subject: a changelog entry
// for each of its pseudonyms (entity "subject", the pseudonym as the id),
// which every instance's feed hands to its counters to forget, and — in
// the same transaction, once — the audit entry of the request. The
// database holds nothing else of a visitor.
func (s *Store) EraseSubject(ctx context.Context, pseudonyms []uint64) error {
	return exec(ctx, s, "erase subject", func(tx Tx, _ time.Time) error {
		for i, p := range pseudonyms {
			t := tx
			if i > 0 {
				t = unaudited(tx) // one request, one audit entry
			}
			if err := t.LogChange(ctx, marquee.EntitySubject, int64(p), "", marquee.OpDelete); err != nil {
				return err
			}
		}
		return nil
	})
}
