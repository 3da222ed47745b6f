package sqltx

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"marquee/reportrow"
)

// addBids adds bid rows to the slot's (report_bids), in key order.
func (s *Store) addBids(ctx context.Context, tx Tx, slot string, rows []reportrow.BidRow) error {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b reportrow.BidRow) int {
		return cmp.Or(cmp.Compare(a.Hour, b.Hour), cmp.Compare(a.Placement, b.Placement), strings.Compare(a.Bidder, b.Bidder))
	})
	add := []string{"bids", "wins", "impressions", "revenue"}
	return s.upsertTuples(ctx, tx, "report_bids", append([]string{"hour", "placement_id", "bidder", "slot"}, add...), "hour, placement_id, bidder, slot",
		add, len(rows), func(i int, args []any) []any {
			r := &rows[i]
			return append(args, r.Hour, r.Placement, r.Bidder, slot, r.Bids, r.Wins, r.Impressions, r.Revenue)
		})
}

// BidSums sums the bid rows of q's range by placement and bidder (every
// instance's; and by UTC day with q.Daily), in that order.
func (s *Store) BidSums(ctx context.Context, q reportrow.BidQuery) ([]reportrow.BidRow, error) {
	where, args := `hour >= ? AND hour < ?`, []any{q.From, q.To}
	if len(q.Placements) > 0 {
		where += ` AND placement_id IN (` + placeholders(len(q.Placements)) + `)`
		for _, id := range q.Placements {
			args = append(args, id)
		}
	}
	day, group := `0`, ``
	if q.Daily {
		day, group = `hour - hour % 86400`, `hour - hour % 86400, `
	}
	return withDB(ctx, s, "read bids", func(db DB) ([]reportrow.BidRow, error) {
		return query(ctx, db, func(r Rows) (x reportrow.BidRow, err error) {
			return x, r.Scan(&x.Hour, &x.Placement, &x.Bidder, &x.Bids, &x.Wins, &x.Impressions, &x.Revenue)
		}, `SELECT `+day+`, placement_id, bidder, sum(bids), sum(wins), sum(impressions), sum(revenue) FROM report_bids WHERE `+where+
			` GROUP BY `+group+`placement_id, bidder ORDER BY `+group+`placement_id, bidder`, args...)
	})
}

// dailyBids is the slot of bid rows rolled into a day (their hour the
// day's start): no instance is named so.
const dailyBids = "~daily"

// rollUpBids moves the hourly bid rows before cutoff into one row a day,
// placement and bidder (slot dailyBids), which sums read alike.
func (s *Store) rollUpBids(ctx context.Context, tx Tx, cutoff int64) error {
	add := []string{"bids", "wins", "impressions", "revenue"}
	if _, err := tx.Exec(ctx, `INSERT INTO report_bids (hour, placement_id, bidder, slot, bids, wins, impressions, revenue)
		SELECT hour - hour % 86400, placement_id, bidder, ?, sum(bids), sum(wins), sum(impressions), sum(revenue)
		FROM report_bids WHERE hour < ? AND slot <> ? GROUP BY hour - hour % 86400, placement_id, bidder`+
		s.upsert("report_bids", "hour, placement_id, bidder, slot", add, nil), dailyBids, cutoff, dailyBids); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM report_bids WHERE hour < ? AND slot <> ?`, cutoff, dailyBids)
	return err
}
