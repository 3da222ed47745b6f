package clickhouse

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
	"marquee/reportrow"
)

// Catalog is what Reports reads from the store, which the events do not
// hold: the names of what a top list shows, links' tags, and requests and
// fill (counted at the decision, not in the event files).
type Catalog interface {
	EntityNames(ctx context.Context, entity string, ids []int64) (map[int64]string, error)
	LinkTags(ctx context.Context, ids []int64) (map[int64][]string, error)
	RequestSums(ctx context.Context, q reportrow.RequestQuery) ([]reportrow.RequestRow, error)
}

// Reports answers reports (it is a reports.Reader, and counts uniques
// itself: reports.UniquesReader) from the events table's report columns,
// which Events writes by the embedded reports' rule, so that a report
// reads the same from either (docs/analytics.md). Events are kept whole,
// so sums are by hour at any age: ReportSums answers its hourly call and
// nothing for its daily one. It is safe for concurrent use.
type Reports struct {
	c       *Client
	catalog Catalog
}

// NewReports returns the reports of c, naming rows and reading requests
// from catalog.
func NewReports(c *Client, catalog Catalog) *Reports { return &Reports{c: c, catalog: catalog} }

// entityColumns are the report columns of each entity's id.
var entityColumns = map[string]string{marquee.EntityAd: "r_ad", marquee.EntityCampaign: "r_campaign",
	marquee.EntityAdvertiser: "r_advertiser", marquee.EntityPlacement: "r_placement", marquee.EntityLink: "r_link"}

// hourOf and dayOf are the unix seconds of the start of an event's UTC
// hour and day.
const (
	hourExpr = "intDiv(toUInt32(time), 3600) * 3600"
	dayExpr  = "intDiv(toUInt32(time), 86400) * 86400"
)

// sumsOf is the sums of the counts, in the order of reportrow.Columns,
// for entity: a link's unverified counts are 0 (verification is a
// decision's, as the embedded reports count them).
func sumsOf(entity string) string {
	cols := make([]string, len(reportrow.Columns))
	for i, c := range reportrow.Columns {
		cols[i] = "toInt64(sum(c_" + c + "))"
		if entity == marquee.EntityLink && strings.HasPrefix(c, "unverified_") {
			cols[i] = "toInt64(0)"
		}
	}
	return strings.Join(cols, ", ")
}

// where is the condition on counted events of entity (every one, id 0)
// in [from, to) by time, bots left out, only, or kept. The dates bound
// the partitions read.
func where(entity string, id, from, to int64, bots, onlyBots bool) (string, error) {
	col := entityColumns[entity]
	if col == "" {
		return "", fmt.Errorf("clickhouse reports: no such entity %q", entity)
	}
	w := []string{"counted = 1", rangeOf("time", from, to)}
	if id != 0 {
		w = append(w, col+" = "+strconv.FormatInt(id, 10))
	} else {
		w = append(w, col+" != 0")
	}
	switch {
	case onlyBots:
		w = append(w, "bot = 1")
	case !bots:
		w = append(w, "bot = 0")
	}
	return strings.Join(w, " AND "), nil
}

// rangeOf is the condition of [from, to) (unix seconds) on the time
// expression t, with the dates it spans (the partitions to read).
func rangeOf(t string, from, to int64) string {
	date := func(sec int64) string { return "'" + time.Unix(sec, 0).UTC().Format(time.DateOnly) + "'" }
	return fmt.Sprintf("date >= %s AND date <= %s AND %s >= %d AND %s < %d", date(from), date(max(from, to-1)), t, from, t, to)
}

// literal is s as a ClickHouse string literal: in single quotes, with
// backslashes and quotes escaped — the only escapes its parser needs.
func literal(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// rows runs query (TabSeparated) and returns its rows' fields, unescaped.
func (r *Reports) rows(ctx context.Context, query string) ([][]string, error) {
	out, err := r.c.Query(ctx, query+" FORMAT TabSeparated")
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for line := range strings.Lines(string(out)) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		for i, f := range fields {
			fields[i] = unescapeTSV(f)
		}
		rows = append(rows, fields)
	}
	return rows, nil
}

// unescapeTSV undoes TabSeparated's escapes of a field.
func unescapeTSV(f string) string {
	if !strings.Contains(f, `\`) {
		return f
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '\\' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		default:
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// ints parses fields as integers.
func ints(fields []string, dst ...*int64) error {
	if len(fields) != len(dst) {
		return fmt.Errorf("clickhouse reports: %d fields, want %d", len(fields), len(dst))
	}
	for i, f := range fields {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return fmt.Errorf("clickhouse reports: %q: %w", f, err)
		}
		*dst[i] = n
	}
	return nil
}

// counts reads the sums at the end of fields (sumsOf) into c and returns
// the fields before them.
func counts(fields []string, c *reportrow.Counts) ([]string, error) {
	n := len(reportrow.Columns)
	if len(fields) < n {
		return nil, fmt.Errorf("clickhouse reports: %d fields, want at least %d", len(fields), n)
	}
	f := c.Fields()
	head, tail := fields[:len(fields)-n], fields[len(fields)-n:]
	return head, ints(tail, f[:]...)
}

// dimValue is the expression of a dimension row's value (reportrow.Dims,
// or KVDim + a report key, whose rows the query array-joins) and the
// entities the embedded reports count it for.
func dimValue(by string) (expr string, entities []string, joinKey string) {
	switch by {
	case reportrow.DimReferrer:
		return "referrer_host", []string{marquee.EntityAd, marquee.EntityLink}, ""
	case reportrow.DimBrowser:
		return "browser", []string{marquee.EntityAd, marquee.EntityLink}, ""
	case reportrow.DimOS:
		return "os", []string{marquee.EntityAd, marquee.EntityLink}, ""
	case reportrow.DimDestination:
		return "toString(r_dest)", []string{marquee.EntityLink}, ""
	}
	return "kv_value", []string{marquee.EntityAd, marquee.EntityCampaign, marquee.EntityPlacement}, strings.TrimPrefix(by, reportrow.KVDim)
}

// ReportSums sums q's events by hour (and country or platform), or, by a
// dimension of dimension rows, by UTC day and value: the hourly call
// answers the first, the daily call the second (reports.Reader).
func (r *Reports) ReportSums(ctx context.Context, q reportrow.SumQuery, daily bool) ([]reportrow.Sum, error) {
	if reportrow.IsDim(q.By) != daily {
		return nil, nil
	}
	w, err := where(q.Entity, q.ID, q.From, q.To, q.Bots, q.OnlyBots)
	if err != nil {
		return nil, err
	}
	t, dim, join := hourExpr, "''", ""
	switch q.By {
	case "country":
		dim = "r_country"
	case "platform":
		dim = "r_platform"
	case "":
	default:
		expr, entities, key := dimValue(q.By)
		if !slices.Contains(entities, q.Entity) {
			return nil, nil
		}
		t, dim = dayExpr, expr
		if key != "" {
			join = " ARRAY JOIN kv_keys AS kv_key, kv_values AS kv_value"
			w += " AND kv_key = " + literal(key)
		}
		if q.By == reportrow.DimDestination {
			w += " AND r_dest >= 0"
		}
	}
	rows, err := r.rows(ctx, "SELECT "+t+" AS t, "+dim+" AS d, "+sumsOf(q.Entity)+" FROM events"+join+" WHERE "+w+" GROUP BY t, d")
	if err != nil {
		return nil, err
	}
	out := make([]reportrow.Sum, 0, len(rows))
	for _, fields := range rows {
		var s reportrow.Sum
		head, err := counts(fields, &s.Counts)
		if err == nil && len(head) == 2 {
			s.Dim = head[1]
			err = ints(head[:1], &s.Time)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// topOrder is the ORDER BY expression of a top list by metric, as the
// embedded reports order theirs.
func topOrder(metric string) string {
	switch metric {
	case "clicks", "conversions", "views":
		return "sum(c_" + metric + ")"
	case "ctr":
		return "if(sum(c_impressions) > 0, sum(c_clicks) / sum(c_impressions), 0)"
	}
	return "sum(c_impressions)"
}

// entitySums sums q's events by the entity's id, ordered by metric (then
// id), at most limit of them (0: all).
func (r *Reports) entitySums(ctx context.Context, q reportrow.SumQuery, metric string, limit int) ([]reportrow.Sum, error) {
	w, err := where(q.Entity, 0, q.From, q.To, q.Bots, q.OnlyBots)
	if err != nil {
		return nil, err
	}
	col := entityColumns[q.Entity]
	query := "SELECT " + col + ", " + sumsOf(q.Entity) + " FROM events WHERE " + w + " GROUP BY " + col +
		" ORDER BY " + topOrder(metric) + " DESC, " + col
	if limit > 0 {
		query += " LIMIT " + strconv.Itoa(limit)
	}
	rows, err := r.rows(ctx, query)
	if err != nil {
		return nil, err
	}
	out := make([]reportrow.Sum, 0, len(rows))
	for _, fields := range rows {
		var s reportrow.Sum
		head, err := counts(fields, &s.Counts)
		if err == nil {
			err = ints(head, &s.ID)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ReportTop returns the sums of every ad, link, campaign, advertiser or
// placement with events in q's range, named as the embedded reports name
// them (reports.Reader): the hourly call answers, the daily one has
// nothing more.
func (r *Reports) ReportTop(ctx context.Context, q reportrow.SumQuery, daily bool, metric string, limit int) ([]reportrow.Sum, error) {
	if daily {
		return nil, nil
	}
	sums, err := r.entitySums(ctx, q, metric, limit)
	if err != nil || len(sums) == 0 {
		return sums, err
	}
	ids := make([]int64, len(sums))
	for i, s := range sums {
		ids[i] = s.ID
	}
	names, err := r.catalog.EntityNames(ctx, q.Entity, ids)
	if err != nil {
		return nil, err
	}
	for i := range sums {
		s := &sums[i]
		if q.Entity == marquee.EntityLink {
			s.Dim = names[s.ID]
		} else {
			s.Dim, s.Title = strconv.FormatInt(s.ID, 10), names[s.ID]
		}
	}
	return sums, nil
}

// ReportTags returns the sums of the links carrying each tag in q's
// range, each tag in Dim, ordered by metric (then tag), at most limit of
// them (0: all) (reports.Reader): the hourly call answers.
func (r *Reports) ReportTags(ctx context.Context, q reportrow.SumQuery, daily bool, metric string, limit int) ([]reportrow.Sum, error) {
	if daily {
		return nil, nil
	}
	q.Entity = marquee.EntityLink
	links, err := r.entitySums(ctx, q, metric, 0)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	ids := make([]int64, len(links))
	for i, s := range links {
		ids[i] = s.ID
	}
	tags, err := r.catalog.LinkTags(ctx, ids)
	if err != nil {
		return nil, err
	}
	byTag := map[string]*reportrow.Sum{}
	for _, l := range links {
		for _, tag := range tags[l.ID] {
			s := byTag[tag]
			if s == nil {
				s = &reportrow.Sum{Dim: tag}
				byTag[tag] = s
			}
			s.Counts.Add(l.Counts)
		}
	}
	out := make([]reportrow.Sum, 0, len(byTag))
	for _, s := range byTag {
		out = append(out, *s)
	}
	value := func(c reportrow.Counts) float64 {
		if metric == "ctr" {
			if c.Impressions == 0 {
				return 0
			}
			return float64(c.Clicks) / float64(c.Impressions)
		}
		return float64(c.Of(metric))
	}
	slices.SortFunc(out, func(a, b reportrow.Sum) int {
		return cmp.Or(cmp.Compare(value(b.Counts), value(a.Counts)), strings.Compare(a.Dim, b.Dim))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ReportReach has no sketches to return: Reports counts uniques itself
// (ReportUniques).
func (r *Reports) ReportReach(ctx context.Context, entity string, id, from, to int64) ([]reportrow.Reach, error) {
	return nil, nil
}

// ReportUniques counts the distinct uids of the events of an entity (id
// 0: every one) of the UTC days that start in [from, to): over them all,
// and by bucket — starts are the buckets' starts, ascending, and a day
// is in the last bucket that starts at or before it (none before the
// first). ClickHouse's uniqCombined counts exactly up to tens of
// thousands of uids and estimates past them (docs/analytics.md).
func (r *Reports) ReportUniques(ctx context.Context, entity string, id, from, to int64, starts []int64) (int64, []int64, error) {
	w, err := where(entity, id, from, (to+86399)/86400*86400, false, false)
	if err != nil {
		return 0, nil, err
	}
	w += " AND reach_uid != '' AND " + dayExpr + " < " + strconv.FormatInt(to, 10)
	var total int64
	rows, err := r.rows(ctx, "SELECT toInt64(uniqCombined(reach_uid)) FROM events WHERE "+w)
	if err == nil && len(rows) == 1 {
		err = ints(rows[0], &total)
	}
	if err != nil || len(starts) == 0 {
		return total, make([]int64, len(starts)), err
	}
	list := make([]string, len(starts))
	for i, s := range starts {
		list[i] = strconv.FormatInt(s, 10)
	}
	rows, err = r.rows(ctx, "SELECT toInt64(arrayCount(s -> s <= "+dayExpr+", ["+strings.Join(list, ",")+"])) - 1 AS b, "+
		"toInt64(uniqCombined(reach_uid)) FROM events WHERE "+w+" GROUP BY b")
	if err != nil {
		return 0, nil, err
	}
	per := make([]int64, len(starts))
	for _, fields := range rows {
		var b, n int64
		if err := ints(fields, &b, &n); err != nil {
			return 0, nil, err
		}
		if b >= 0 && int(b) < len(per) {
			per[b] = n
		}
	}
	return total, per, nil
}

// cubeColumns are the columns of CubeQuery's groups and filters.
var cubeColumns = map[string]string{"day": dayExpr, "ad": "r_ad", "campaign": "r_campaign", "placement": "r_placement",
	"country": "r_country", "device": "device", "value": "kv_value"}

// CubeSums sums the events q selects by q.Group (reports.Reader): every
// grain's rows are the events', so q.Grain only says whether to read by a
// report key's value.
func (r *Reports) CubeSums(ctx context.Context, q reportrow.CubeQuery) ([]reportrow.CubeRow, error) {
	w := []string{"counted = 1", "r_cube = 1", rangeOf(dayExpr, q.From, q.To)}
	join := ""
	if q.Grain == reportrow.GrainKV {
		join = " ARRAY JOIN kv_keys AS kv_key, kv_values AS kv_value"
		w = append(w, "kv_key = "+literal(q.Key))
	}
	if !q.Bots {
		w = append(w, "bot = 0")
	}
	in := func(col string, values []string) {
		if len(values) > 0 {
			w = append(w, col+" IN ("+strings.Join(values, ", ")+")")
		}
	}
	for _, f := range [...]struct {
		col string
		ids []int64
	}{{"r_ad", q.Ads}, {"r_campaign", q.Campaigns}, {"r_placement", q.Placements}} {
		values := make([]string, len(f.ids))
		for i, id := range f.ids {
			values[i] = strconv.FormatInt(id, 10)
		}
		in(f.col, values)
	}
	for _, f := range [...]struct {
		col    string
		values []string
	}{{"r_country", q.Countries}, {"device", q.Devices}, {"kv_value", q.Values}} {
		values := make([]string, len(f.values))
		for i, v := range f.values {
			values[i] = literal(v)
		}
		in(f.col, values)
	}
	group := make([]string, len(q.Group))
	for i, g := range q.Group {
		if group[i] = cubeColumns[g]; group[i] == "" {
			return nil, fmt.Errorf("clickhouse reports: no such group %q", g)
		}
	}
	sel := append(slices.Clone(group), sumsOf(marquee.EntityAd))
	query := "SELECT " + strings.Join(sel, ", ") + " FROM events" + join + " WHERE " + strings.Join(w, " AND ")
	if len(group) > 0 {
		query += " GROUP BY " + strings.Join(group, ", ")
	}
	rows, err := r.rows(ctx, query)
	if err != nil {
		return nil, err
	}
	out := make([]reportrow.CubeRow, 0, len(rows))
	for _, fields := range rows {
		x := reportrow.CubeRow{Grain: q.Grain, Key: q.Key}
		head, err := counts(fields, &x.Counts)
		if err != nil {
			return nil, err
		}
		for i, g := range q.Group {
			switch g {
			case "day":
				err = ints(head[i:i+1], &x.Day)
			case "ad":
				err = ints(head[i:i+1], &x.Ad)
			case "campaign":
				err = ints(head[i:i+1], &x.Campaign)
			case "placement":
				err = ints(head[i:i+1], &x.Placement)
			case "country":
				x.Country = head[i]
			case "device":
				x.Device = head[i]
			case "value":
				x.Value = head[i]
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// RequestSums are the catalog's: requests and fill are counted at the
// decision, not in the event files (docs/analytics.md).
func (r *Reports) RequestSums(ctx context.Context, q reportrow.RequestQuery) ([]reportrow.RequestRow, error) {
	return r.catalog.RequestSums(ctx, q)
}
