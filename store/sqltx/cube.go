package sqltx

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"marquee/reportrow"
)

// cubeTables are the cube's tables by grain, with the columns each keys
// its rows by beyond day, campaign, placement and ad (reportrow.CubeRow).
var cubeTables = map[string]struct{ table, dims string }{
	reportrow.GrainEntity: {"report_cube", ""},
	reportrow.GrainCP:     {"report_cube_cp", ""},
	reportrow.GrainGeo:    {"report_cube_geo", "country, device"},
	reportrow.GrainKV:     {"report_cube_kv", "kv_key, kv_value"},
}

// outcomeList is the request tables' count columns (outcomes, then
// invalid traffic's reasons), as a column list, and outcomeSums their
// sums.
var (
	outcomeList = strings.Join(reportrow.RequestColumns, ", ")
	outcomeSums = func() string {
		sums := make([]string, len(reportrow.RequestColumns))
		for i, c := range reportrow.RequestColumns {
			sums[i] = "sum(" + c + ")"
		}
		return strings.Join(sums, ", ")
	}()
)

// groupDests are the scan destinations of a query's group columns, in
// group's order, from those of each name.
func groupDests(group []string, of map[string]any) []any {
	dst := make([]any, 0, len(group)+len(counters))
	for _, g := range group {
		dst = append(dst, of[g])
	}
	return dst
}

// upsertTuples adds n rows to table, rowBatch a statement: cols are the
// columns args names (key first, then the columns added up), rowArgs
// appends row i's values.
func (s *Store) upsertTuples(ctx context.Context, tx Tx, table string, cols []string, key string, add []string, n int,
	rowArgs func(i int, args []any) []any) error {
	upsert := s.upsert(table, key, add, nil)
	for from := 0; from < n; from += rowBatch {
		to := min(from+rowBatch, n)
		args := make([]any, 0, len(cols)*(to-from))
		for i := from; i < to; i++ {
			args = rowArgs(i, args)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (`+strings.Join(cols, ", ")+`) VALUES `+Tuples(to-from, len(cols))+upsert, args...); err != nil {
			return err
		}
	}
	return nil
}

// addCube adds cube rows to the slot's, each grain to its table, in the
// tables' key order.
func (s *Store) addCube(ctx context.Context, tx Tx, slot string, rows []reportrow.CubeRow) error {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b reportrow.CubeRow) int {
		return cmp.Or(strings.Compare(a.Grain, b.Grain), cmp.Compare(a.Day, b.Day), strings.Compare(a.Key, b.Key),
			cmp.Compare(a.Campaign, b.Campaign), cmp.Compare(a.Placement, b.Placement), cmp.Compare(a.Ad, b.Ad),
			strings.Compare(a.Country, b.Country), strings.Compare(a.Device, b.Device), strings.Compare(a.Value, b.Value), cmp.Compare(a.IVT, b.IVT))
	})
	for len(rows) > 0 {
		n := 1
		for n < len(rows) && rows[n].Grain == rows[0].Grain {
			n++
		}
		grain := rows[:n]
		rows = rows[n:]
		t := cubeTables[grain[0].Grain]
		keyCols := []string{"day", "campaign_id", "placement_id", "ad_id"}
		if t.dims != "" {
			keyCols = append(keyCols, strings.Split(t.dims, ", ")...)
		}
		keyCols = append(keyCols, "bot", "slot")
		err := s.upsertTuples(ctx, tx, t.table, append(slices.Clone(keyCols), counters...), strings.Join(keyCols, ", "), counters, len(grain),
			func(i int, args []any) []any {
				r := &grain[i]
				args = append(args, r.Day, r.Campaign, r.Placement, r.Ad)
				switch r.Grain {
				case reportrow.GrainGeo:
					args = append(args, r.Country, r.Device)
				case reportrow.GrainKV:
					args = append(args, r.Key, r.Value)
				}
				return countArgs(append(args, int(r.IVT), slot), &r.Counts)
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// addRequests adds request rows to the slot's.
func (s *Store) addRequests(ctx context.Context, tx Tx, slot string, rows []reportrow.RequestRow) error {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b reportrow.RequestRow) int {
		return cmp.Or(cmp.Compare(a.Hour, b.Hour), cmp.Compare(a.Placement, b.Placement),
			strings.Compare(a.Country, b.Country), strings.Compare(a.Device, b.Device))
	})
	key := []string{"hour", "placement_id", "country", "device", "slot"}
	return s.upsertTuples(ctx, tx, "report_requests", append(slices.Clone(key), reportrow.RequestColumns...), strings.Join(key, ", "),
		reportrow.RequestColumns, len(rows), func(i int, args []any) []any {
			r := &rows[i]
			args = append(args, r.Hour, r.Placement, r.Country, r.Device, slot)
			for _, n := range r.Outcomes {
				args = append(args, n)
			}
			for _, n := range r.Invalid {
				args = append(args, n)
			}
			for _, n := range r.Limited {
				args = append(args, n)
			}
			return args
		})
}

// CubeSums sums the cube rows q selects by q.Group (the fields of the
// others left zero), bots left out unless q.Bots.
func (s *Store) CubeSums(ctx context.Context, q reportrow.CubeQuery) ([]reportrow.CubeRow, error) {
	t := cubeTables[q.Grain]
	where := []string{"day >= ?", "day < ?"}
	args := []any{q.From, q.To}
	if q.Grain == reportrow.GrainKV {
		where, args = append(where, "kv_key = ?"), append(args, q.Key)
	}
	if !q.Bots {
		where = append(where, "bot IN "+reportrow.PeopleIVT)
	}
	in := func(col string, n int, each func(i int) any) {
		if n == 0 {
			return
		}
		where = append(where, col+" IN ("+placeholders(n)+")")
		for i := range n {
			args = append(args, each(i))
		}
	}
	in("ad_id", len(q.Ads), func(i int) any { return q.Ads[i] })
	in("campaign_id", len(q.Campaigns), func(i int) any { return q.Campaigns[i] })
	in("placement_id", len(q.Placements), func(i int) any { return q.Placements[i] })
	in("country", len(q.Countries), func(i int) any { return q.Countries[i] })
	in("device", len(q.Devices), func(i int) any { return q.Devices[i] })
	in("kv_value", len(q.Values), func(i int) any { return q.Values[i] })
	column := map[string]string{"day": "day", "ad": "ad_id", "campaign": "campaign_id", "placement": "placement_id",
		"country": "country", "device": "device", "value": "kv_value", "ivt": "bot"}
	// The groups in the order of the table's key (day, campaign,
	// placement, ad, then its grain's): rows read in key order group as
	// they come, without a sort (SQLite: no temporary B-tree).
	order := []string{"day", "campaign", "placement", "ad", "country", "device", "value", "ivt"}
	groups := slices.Clone(q.Group)
	slices.SortFunc(groups, func(a, b string) int { return cmp.Compare(slices.Index(order, a), slices.Index(order, b)) })
	q.Group = groups
	var group []string
	for _, g := range q.Group {
		group = append(group, column[g])
	}
	sel := strings.Join(append(slices.Clone(group), sums("")), ", ")
	stmt := `SELECT ` + sel + ` FROM ` + t.table + ` WHERE ` + strings.Join(where, " AND ")
	if len(group) > 0 {
		stmt += ` GROUP BY ` + strings.Join(group, ", ")
	}
	return withDB(ctx, s, "read reports by dimensions", func(db DB) ([]reportrow.CubeRow, error) {
		return query(ctx, db, func(r Rows) (x reportrow.CubeRow, err error) {
			x.Grain, x.Key = q.Grain, q.Key
			dst := groupDests(q.Group, map[string]any{"day": &x.Day, "ad": &x.Ad, "campaign": &x.Campaign, "placement": &x.Placement,
				"country": &x.Country, "device": &x.Device, "value": &x.Value, "ivt": &x.IVT})
			return x, r.Scan(scanCounts(dst, &x.Counts)...)
		}, stmt, args...)
	})
}

// RequestSums sums the request rows of q's range (hourly rows and
// rolled-up daily ones) by q.By.
func (s *Store) RequestSums(ctx context.Context, q reportrow.RequestQuery) ([]reportrow.RequestRow, error) {
	var out []reportrow.RequestRow
	for _, daily := range []bool{false, true} {
		table, t := "report_requests", "hour"
		if daily {
			table, t = "report_requests_daily", "day"
		}
		where := t + " >= ? AND " + t + " < ?"
		args := []any{q.From, q.To}
		if len(q.Placements) > 0 {
			where += " AND placement_id IN (" + placeholders(len(q.Placements)) + ")"
			for _, id := range q.Placements {
				args = append(args, id)
			}
		}
		var group []string
		for _, g := range q.By {
			group = append(group, map[string]string{"hour": t, "placement": "placement_id", "country": "country", "device": "device"}[g])
		}
		stmt := `SELECT ` + strings.Join(append(group, outcomeSums), ", ") + ` FROM ` + table + ` WHERE ` + where
		if len(group) > 0 {
			stmt += ` GROUP BY ` + strings.Join(group, ", ")
		} else {
			stmt += ` HAVING COUNT(*) > 0` // no rows: no sum (SUM of none is NULL)
		}
		rows, err := withDB(ctx, s, "read requests", func(db DB) ([]reportrow.RequestRow, error) {
			return query(ctx, db, func(r Rows) (x reportrow.RequestRow, err error) {
				dst := groupDests(q.By, map[string]any{"hour": &x.Hour, "placement": &x.Placement, "country": &x.Country, "device": &x.Device})
				for i := range x.Outcomes {
					dst = append(dst, &x.Outcomes[i])
				}
				for i := range x.Invalid {
					dst = append(dst, &x.Invalid[i])
				}
				for i := range x.Limited {
					dst = append(dst, &x.Limited[i])
				}
				return x, r.Scan(dst...)
			}, stmt, args...)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// rollUpRequests moves the hourly request rows of hours before cutoff
// into daily rows (summed over slots).
func (s *Store) rollUpRequests(ctx context.Context, tx Tx, cutoff int64) error {
	if _, err := tx.Exec(ctx, `INSERT INTO report_requests_daily (day, placement_id, country, device, `+outcomeList+`)
		SELECT hour - hour % 86400, placement_id, country, device, `+outcomeSums+`
		FROM report_requests WHERE hour < ? GROUP BY hour - hour % 86400, placement_id, country, device`+
		s.upsert("report_requests_daily", "day, placement_id, country, device", reportrow.RequestColumns, nil), cutoff); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM report_requests WHERE hour < ?`, cutoff); err != nil {
		return err
	}
	return s.rollUpBids(ctx, tx, cutoff)
}
