package sqltx

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
	"marquee/reportrow"
)

// AddReports adds a flush's counts to the slot's rows, merges its sketches
// into the slot's, and records how far each file is counted, in one
// transaction (see reports.Tally).
func (s *Store) AddReports(ctx context.Context, b *reportrow.Batch) error {
	return exec(ctx, s, "add reports", func(tx Tx, now time.Time) error {
		if err := s.addRows(ctx, tx, b.Slot, b.Rows); err != nil {
			return err
		}
		if err := s.addDims(ctx, tx, b.Slot, b.Dims); err != nil {
			return err
		}
		if err := s.mergeReach(ctx, tx, b.Slot, b.Reach); err != nil {
			return err
		}
		if err := s.addCube(ctx, tx, b.Slot, b.Cube); err != nil {
			return err
		}
		if err := s.addRequests(ctx, tx, b.Slot, b.Requests); err != nil {
			return err
		}
		if err := s.addSamples(ctx, tx, b.Slot, b.Samples); err != nil {
			return err
		}
		if err := s.addBids(ctx, tx, b.Slot, b.Bids); err != nil {
			return err
		}
		for _, f := range b.Files {
			if _, err := tx.Exec(ctx, `INSERT INTO report_files (file, upto, complete, at) VALUES (?, ?, ?, ?)`+
				s.upsert("report_files", "file", nil, []string{"upto", "complete", "at"}),
				f.File, f.Upto, boolInt(f.Complete), now.Unix()); err != nil {
				return err
			}
		}
		return nil
	})
}

// rowBatch is how many report rows one statement adds: 100 rows cost
// 3.7 µs a row on SQLite against 5.8 µs one at a time
// (BenchmarkAddReports), and on PostgreSQL a statement is a round trip.
const rowBatch = 100

// addRows adds rows to the slot's hourly rows, and their sums over
// country and platform to its totals, rowBatch a statement, each in the
// order of its table's key: a flush's rows come out of a map, and upserts
// in key order touch each page once (100,000 rows: 0.87 s in no order,
// 0.40 s in order, BenchmarkAddReports on SQLite).
func (s *Store) addRows(ctx context.Context, tx Tx, slot string, rows []reportrow.Row) error {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b reportrow.Row) int {
		return cmp.Or(strings.Compare(a.Entity, b.Entity), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Time, b.Time),
			strings.Compare(a.Country, b.Country), strings.Compare(a.Platform, b.Platform), cmp.Compare(a.IVT, b.IVT))
	})
	if err := s.upsertRows(ctx, tx, "report_hourly", slot, rows); err != nil {
		return err
	}
	totals := totalsOf(rows)
	slices.SortFunc(totals, func(a, b reportrow.Row) int {
		return cmp.Or(strings.Compare(a.Entity, b.Entity), cmp.Compare(a.Time, b.Time), cmp.Compare(a.IVT, b.IVT), cmp.Compare(a.ID, b.ID))
	})
	return s.upsertRows(ctx, tx, "report_totals", slot, totals)
}

// totalsOf sums rows over country and platform.
func totalsOf(rows []reportrow.Row) []reportrow.Row {
	at := map[reportrow.Key]int{}
	var out []reportrow.Row
	for _, r := range rows {
		k := reportrow.Key{Entity: r.Entity, ID: r.ID, Time: r.Time, IVT: r.IVT}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, reportrow.Row{Key: k})
		}
		out[i].Counts.Add(r.Counts)
	}
	return out
}

// counters are the columns of report rows that upserts add up
// (reportrow.Columns); countList is them as a column list, and sums as
// their sums over rows whose columns are prefixed by p.
var counters = reportrow.Columns[:]

var countList = strings.Join(counters, ", ")

func sums(p string) string {
	var b strings.Builder
	for i, c := range counters {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("sum(" + p + c + ")")
	}
	return b.String()
}

// countArgs appends c's counts to args, in the order of counters.
func countArgs(args []any, c *reportrow.Counts) []any {
	for _, p := range c.Fields() {
		args = append(args, *p)
	}
	return args
}

// scanCounts appends pointers to c's counts to dst, for a Scan of sums.
func scanCounts(dst []any, c *reportrow.Counts) []any {
	for _, p := range c.Fields() {
		dst = append(dst, p)
	}
	return dst
}

// upsertRows adds rows to a table of hourly rows (report_hourly, or
// report_totals without country and platform).
func (s *Store) upsertRows(ctx context.Context, tx Tx, table, slot string, rows []reportrow.Row) error {
	cols, key, width := "entity, entity_id, hour, country, platform, bot", "entity, entity_id, hour, country, platform, bot, slot", 7
	if table == "report_totals" {
		cols, key, width = "entity, entity_id, hour, bot", "entity, hour, bot, entity_id, slot", 5
	}
	width += len(counters)
	upsert := s.upsert(table, key, counters, nil)
	for len(rows) > 0 {
		chunk := rows[:min(rowBatch, len(rows))]
		rows = rows[len(chunk):]
		args := make([]any, 0, width*len(chunk))
		for _, r := range chunk {
			args = append(args, r.Entity, r.ID, r.Time)
			if table != "report_totals" {
				args = append(args, r.Country, r.Platform)
			}
			args = countArgs(append(args, int(r.IVT), slot), &r.Counts)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (`+cols+`, slot, `+countList+`)
			VALUES `+Tuples(len(chunk), width)+upsert, args...); err != nil {
			return err
		}
	}
	return nil
}

// addDims adds dimension rows to the slot's, rowBatch a statement, in
// the table's key order.
func (s *Store) addDims(ctx context.Context, tx Tx, slot string, dims []reportrow.DimRow) error {
	dims = slices.Clone(dims)
	slices.SortFunc(dims, func(a, b reportrow.DimRow) int {
		return cmp.Or(strings.Compare(a.Entity, b.Entity), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Day, b.Day),
			strings.Compare(a.Dim, b.Dim), strings.Compare(a.Value, b.Value), cmp.Compare(a.IVT, b.IVT))
	})
	upsert := s.upsert("report_dims", "entity, entity_id, day, dim, value, bot, slot", counters, nil)
	for len(dims) > 0 {
		chunk := dims[:min(rowBatch, len(dims))]
		dims = dims[len(chunk):]
		width := 7 + len(counters)
		args := make([]any, 0, width*len(chunk))
		for _, d := range chunk {
			args = countArgs(append(args, d.Entity, d.ID, d.Day, d.Dim, d.Value, int(d.IVT), slot), &d.Counts)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO report_dims (entity, entity_id, day, dim, value, bot, slot, `+countList+`)
			VALUES `+Tuples(len(chunk), width)+upsert, args...); err != nil {
			return err
		}
	}
	return nil
}

// mergeReach merges each sketch into the slot's sketch of its day.
func (s *Store) mergeReach(ctx context.Context, tx Tx, slot string, reach []reportrow.Reach) error {
	for _, r := range reach {
		var stored []byte
		err := tx.QueryRow(ctx, `SELECT sketch FROM report_reach WHERE entity = ? AND entity_id = ? AND day = ? AND slot = ?`+s.cfg.ForUpdate,
			r.Entity, r.ID, r.Day, slot).Scan(&stored)
		sketch := r.Sketch
		switch {
		case errors.Is(err, ErrNoRows):
		case err != nil:
			return err
		default:
			if sketch, err = reportrow.MergeSketches(stored, r.Sketch); err != nil {
				return fmt.Errorf("reach of %s %d: %w", r.Entity, r.ID, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO report_reach (entity, entity_id, day, slot, sketch) VALUES (?, ?, ?, ?, ?)`+
			s.upsert("report_reach", "entity, entity_id, day, slot", nil, []string{"sketch"}),
			r.Entity, r.ID, r.Day, slot, sketch); err != nil {
			return err
		}
	}
	return nil
}

// ReportFiles returns the ledger's marks of the named files that have one.
func (s *Store) ReportFiles(ctx context.Context, files []string) (map[string]reportrow.FileMark, error) {
	out := map[string]reportrow.FileMark{}
	if len(files) == 0 {
		return out, nil
	}
	args := make([]any, len(files))
	for i, f := range files {
		args[i] = f
	}
	marks, err := withDB(ctx, s, "read report ledger", func(db DB) ([]reportrow.FileMark, error) {
		return query(ctx, db, func(r Rows) (m reportrow.FileMark, err error) {
			var complete int
			err = r.Scan(&m.File, &m.Upto, &complete)
			m.Complete = complete != 0
			return m, err
		}, `SELECT file, upto, complete FROM report_files WHERE file IN (`+placeholders(len(files))+`)`, args...)
	})
	for _, m := range marks {
		out[m.File] = m
	}
	return out, err
}

// ReportSums sums the rows of q's range by time bucket (hour, or day for
// daily rows) and, with q.By, by that dimension: from the hourly rows, or
// the daily ones with daily.
func (s *Store) ReportSums(ctx context.Context, q reportrow.SumQuery, daily bool) ([]reportrow.Sum, error) {
	if reportrow.IsDim(q.By) {
		return s.dimSums(ctx, q, daily)
	}
	table, t := "report_hourly", "hour"
	switch {
	case daily:
		table, t = "report_daily", "day"
	case q.ID == 0 && q.By == "":
		table = "report_totals" // every ad's or link's: the totals hold it in fewer rows
	}
	dim, group := "''", t
	switch q.By {
	case "country", "platform":
		dim, group = q.By, t+", "+q.By
	case reportrow.ByIVT:
		dim, group = "bot", t+", bot"
	}
	where, args := sumWhere(q, "", t)
	return withDB(ctx, s, "read reports", func(db DB) ([]reportrow.Sum, error) {
		return query(ctx, db, func(r Rows) (x reportrow.Sum, err error) {
			return x, r.Scan(scanCounts([]any{&x.Time, &x.Dim}, &x.Counts)...)
		}, `SELECT `+t+`, `+dim+`, `+sums("")+` FROM `+table+` WHERE `+where+
			` GROUP BY `+group, args...)
	})
}

// dimSums sums the dimension rows of q.By in q's range by day and value:
// all of them with daily (the days that start in the range), none from
// the hourly rows (there are none by these dimensions).
func (s *Store) dimSums(ctx context.Context, q reportrow.SumQuery, daily bool) ([]reportrow.Sum, error) {
	if !daily {
		return nil, nil
	}
	where, args := sumWhere(q, "", "day")
	return withDB(ctx, s, "read reports", func(db DB) ([]reportrow.Sum, error) {
		return query(ctx, db, func(r Rows) (x reportrow.Sum, err error) {
			return x, r.Scan(scanCounts([]any{&x.Time, &x.Dim}, &x.Counts)...)
		}, `SELECT day, value, `+sums("")+` FROM report_dims WHERE dim = ? AND `+where+
			` GROUP BY day, value`, append([]any{q.By}, args...)...)
	})
}

// ReportTags returns the sums of the links carrying each tag in q's
// range (q.Entity and q.ID are ignored), each tag in Dim, from the hourly
// totals or the daily rows, ordered by metric as ReportTop's, at most
// limit of them (0: all). A link with two tags counts in both.
func (s *Store) ReportTags(ctx context.Context, q reportrow.SumQuery, daily bool, metric string, limit int) ([]reportrow.Sum, error) {
	table, t := "report_totals", "hour"
	if daily {
		table, t = "report_daily", "day"
	}
	q.Entity, q.ID = marquee.EntityLink, 0
	where, args := sumWhere(q, "r.", t)
	lim := ""
	if limit > 0 {
		lim = ` LIMIT ?`
		args = append(args, limit)
	}
	return withDB(ctx, s, "read tag reports", func(db DB) ([]reportrow.Sum, error) {
		return query(ctx, db, func(r Rows) (x reportrow.Sum, err error) {
			return x, r.Scan(scanCounts([]any{&x.Dim}, &x.Counts)...)
		}, `SELECT t.tag, `+sums("r.")+` FROM `+table+` r JOIN link_tags t ON t.link_id = r.entity_id
			WHERE `+where+` GROUP BY t.tag ORDER BY `+topOrder(metric, "r.")+` DESC, t.tag`+lim, args...)
	})
}

// topOrder is the ORDER BY expression of a top list by metric
// (impressions, clicks, conversions, views or ctr) over columns prefixed p.
func topOrder(metric, p string) string {
	switch metric {
	case "clicks", "conversions", "views":
		return "sum(" + p + metric + ")"
	case "ctr":
		// 1e0: a float (MySQL) or exact number (PostgreSQL) in every
		// dialect, never an integer division (SQLite).
		return "CASE WHEN sum(" + p + "impressions) > 0 THEN sum(" + p + "clicks) * 1e0 / sum(" + p + "impressions) ELSE 0 END"
	}
	return "sum(" + p + "impressions)"
}

// sumWhere is the condition of a SumQuery on a table whose time column is
// t, its columns prefixed p ("r." in a join): the entity (and id, unless
// 0), the range, and bots only when asked (or bots alone).
func sumWhere(q reportrow.SumQuery, p, t string) (string, []any) {
	where := p + `entity = ? AND ` + p + t + ` >= ? AND ` + p + t + ` < ?`
	args := []any{q.Entity, q.From, q.To}
	if q.ID != 0 {
		where += ` AND ` + p + `entity_id = ?`
		args = append(args, q.ID)
	}
	switch {
	case q.OnlyBots:
		where += ` AND ` + p + `bot NOT IN ` + reportrow.PeopleIVT
	case !q.Bots:
		where += ` AND ` + p + `bot IN ` + reportrow.PeopleIVT
	}
	return where, args
}

// ReportTop returns the sums of every ad or link with rows in q's range
// (q.ID is ignored), each named in Dim (an ad's id, a link's code), from
// the hourly rows or the daily ones, ordered by metric (impressions,
// clicks, conversions or ctr), at most limit of them (0: all).
func (s *Store) ReportTop(ctx context.Context, q reportrow.SumQuery, daily bool, metric string, limit int) ([]reportrow.Sum, error) {
	table, t := "report_totals", "hour"
	if daily {
		table, t = "report_daily", "day"
	}
	q.ID = 0
	where, args := sumWhere(q, "", t)
	order := topOrder(metric, "")
	lim := ""
	if limit > 0 {
		lim = ` LIMIT ?`
		args = append(args, limit)
	}
	// A link is named by its code; the others by their id (set below),
	// with their title or name in Title.
	from := entityNames[q.Entity]
	if from == "" {
		return nil, fmt.Errorf("top %s: no such entity", q.Entity)
	}
	name := `coalesce((SELECT ` + from + `.id = ` + table + `.entity_id), '') AS entity_name`
	return withDB(ctx, s, "read top reports", func(db DB) ([]reportrow.Sum, error) {
		return query(ctx, db, func(r Rows) (x reportrow.Sum, err error) {
			err = r.Scan(scanCounts([]any{&x.ID, &x.Dim}, &x.Counts)...)
			if q.Entity != marquee.EntityLink {
				x.Title, x.Dim = x.Dim, strconv.FormatInt(x.ID, 10)
			}
			return x, err
		}, `SELECT entity_id, `+name+`, `+sums("")+` FROM `+table+` WHERE `+where+
			` GROUP BY entity_id ORDER BY `+order+` DESC, entity_id`+lim, args...)
	})
}

// entityNames are the tables and columns naming each entity in a report:
// a link by its code, the others by their title or name.
var entityNames = map[string]string{marquee.EntityAd: `title FROM ads WHERE ads`, marquee.EntityLink: `code FROM links WHERE links`,
	marquee.EntityCampaign: `name FROM campaigns WHERE campaigns`, marquee.EntityAdvertiser: `name FROM advertisers WHERE advertisers`,
	marquee.EntityPlacement: `name FROM placements WHERE placements`}

// EntityNames returns the names of the ads (titles), links (codes),
// campaigns, advertisers or placements of ids that exist: what a report
// read elsewhere (ClickHouse) names its rows by.
func (s *Store) EntityNames(ctx context.Context, entity string, ids []int64) (map[int64]string, error) {
	from := entityNames[entity]
	if from == "" {
		return nil, fmt.Errorf("names of %s: no such entity", entity)
	}
	type named struct {
		id   int64
		name string
	}
	rows, err := byIDs(ctx, s, "read names", ids, func(in string) string { return `SELECT id, ` + from + `.id IN (` + in + `)` },
		func(r Rows) (x named, err error) { return x, r.Scan(&x.id, &x.name) })
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.id] = r.name
	}
	return out, err
}

// LinkTags returns the tags of the links of ids that have any.
func (s *Store) LinkTags(ctx context.Context, ids []int64) (map[int64][]string, error) {
	type tagged struct {
		id  int64
		tag string
	}
	rows, err := byIDs(ctx, s, "read link tags", ids, func(in string) string { return `SELECT link_id, tag FROM link_tags WHERE link_id IN (` + in + `)` },
		func(r Rows) (x tagged, err error) { return x, r.Scan(&x.id, &x.tag) })
	out := map[int64][]string{}
	for _, r := range rows {
		out[r.id] = append(out[r.id], r.tag)
	}
	return out, err
}

// byIDs runs the query q makes of an IN list's placeholders for ids, 500
// ids a statement, and returns every row scan reads.
func byIDs[T any](ctx context.Context, s *Store, what string, ids []int64, q func(in string) string, scan func(Rows) (T, error)) ([]T, error) {
	var out []T
	for chunk := range slices.Chunk(ids, 500) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := withDB(ctx, s, what, func(db DB) ([]T, error) { return query(ctx, db, scan, q(placeholders(len(chunk))), args...) })
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// ReportReach returns the sketches of every slot of the days in [from,
// to) of an ad or a link (id 0: of all of them together, see
// reportrow.WithAll).
func (s *Store) ReportReach(ctx context.Context, entity string, id, from, to int64) ([]reportrow.Reach, error) {
	where := `entity = ? AND entity_id = ? AND day >= ? AND day < ?`
	args := []any{entity, id, from, to}
	return withDB(ctx, s, "read reach", func(db DB) ([]reportrow.Reach, error) {
		return query(ctx, db, func(r Rows) (x reportrow.Reach, err error) {
			x.Entity = entity
			return x, r.Scan(&x.ID, &x.Day, &x.Sketch)
		}, `SELECT entity_id, day, sketch FROM report_reach WHERE `+where, args...)
	})
}

// RollUpReports moves the hourly rows of hours before cutoff into daily
// rows (summed over slots), in one transaction; it returns how many hourly
// rows it moved. On PostgreSQL one instance at a time rolls up (the others
// skip: Config.RollUpLock).
func (s *Store) RollUpReports(ctx context.Context, cutoff int64) (int64, error) {
	var moved int64
	err := exec(ctx, s, "roll up reports", func(tx Tx, _ time.Time) error {
		if s.cfg.RollUpLock != "" {
			var got bool
			err := tx.QueryRow(ctx, s.cfg.RollUpLock).Scan(&got)
			if errors.Is(err, ErrNoRows) || err == nil && !got {
				return nil // another instance is rolling up
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO report_daily (entity, entity_id, day, country, platform, bot, `+countList+`)
			SELECT entity, entity_id, hour - hour % 86400, country, platform, bot, `+sums("")+`
			FROM report_hourly WHERE hour < ? GROUP BY entity, entity_id, hour - hour % 86400, country, platform, bot`+
			s.upsert("report_daily", "entity, entity_id, day, country, platform, bot", counters, nil),
			cutoff); err != nil {
			return err
		}
		var err error
		if moved, err = tx.Exec(ctx, `DELETE FROM report_hourly WHERE hour < ?`, cutoff); err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `DELETE FROM report_totals WHERE hour < ?`, cutoff); err != nil {
			return err
		}
		return s.rollUpRequests(ctx, tx, cutoff)
	})
	return moved, err
}

// ReplaceReports replaces the slot's hourly rows of [from, to) and its
// sketches of the days in it with b's, and records b's file marks, in one
// transaction (marquee reports rebuild).
func (s *Store) ReplaceReports(ctx context.Context, b *reportrow.Batch, from, to int64) error {
	return exec(ctx, s, "replace reports", func(tx Tx, now time.Time) error {
		for _, table := range []string{"report_hourly", "report_totals"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE slot = ? AND hour >= ? AND hour < ?`, b.Slot, from, to); err != nil {
				return err
			}
		}
		for _, table := range []string{"report_reach", "report_dims", "report_cube", "report_cube_cp", "report_cube_geo", "report_cube_kv"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE slot = ? AND day >= ? AND day < ?`, b.Slot, from, to); err != nil {
				return err
			}
		}
		if err := s.addRows(ctx, tx, b.Slot, b.Rows); err != nil {
			return err
		}
		if err := s.addDims(ctx, tx, b.Slot, b.Dims); err != nil {
			return err
		}
		if err := s.addCube(ctx, tx, b.Slot, b.Cube); err != nil {
			return err
		}
		return s.mergeReach(ctx, tx, b.Slot, b.Reach)
	})
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Tuples is n rows of width placeholders each, for VALUES.
func Tuples(n, width int) string {
	tuple := "(" + placeholders(width) + ")"
	return strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
