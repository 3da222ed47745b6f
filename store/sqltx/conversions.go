package sqltx

import (
	"context"
	"time"

	"marquee"
)

// Conversions counted (table conversions, migration 0020): a row per
// advertiser and dedupe key, so that an order (or a click or impression
// converted without one) counts once whatever the instances and retries.

// AddConversion records c and reports whether it is new: false when its
// advertiser has a conversion under its dedupe key already (it then
// counts nothing).
func (s *Store) AddConversion(ctx context.Context, c marquee.Conversion) (bool, error) {
	return write(ctx, s, "add conversion", func(tx Tx, _ time.Time) (bool, error) {
		q := `INSERT INTO conversions (advertiser_id, dedupe, campaign_id, ad_id, attribution, value, at) VALUES (?, ?, ?, ?, ?, ?, ?)`
		if s.cfg.Spelling == OnDuplicateKey {
			q += ` ON DUPLICATE KEY UPDATE advertiser_id = advertiser_id`
		} else {
			q += ` ON CONFLICT (advertiser_id, dedupe) DO NOTHING`
		}
		n, err := tx.Exec(ctx, q, c.Advertiser, c.Dedupe, c.Campaign, c.Ad, c.Attribution, int64(c.Value), c.At.UnixMilli())
		return n == 1, err
	})
}

// RemoveConversion forgets the conversion of advertiser under dedupe: the
// undoing of an AddConversion whose event could not be written, so that
// the client's retry counts it.
func (s *Store) RemoveConversion(ctx context.Context, advertiser int64, dedupe string) error {
	return exec(ctx, s, "remove conversion", func(tx Tx, _ time.Time) error {
		_, err := tx.Exec(ctx, `DELETE FROM conversions WHERE advertiser_id = ? AND dedupe = ?`, advertiser, dedupe)
		return err
	})
}
