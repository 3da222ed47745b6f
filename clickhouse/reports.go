package clickhouse

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
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
// reads the same from either (docs/analytics.md): sums by entity and hour
// and reach by entity and day from their rollups (events_hourly,
// events_reach), reports by several dimensions from the cube's
// (events_cube, events_cube_cp, events_cube_kv), and dimension rows (referrer, browser,
// OS, destination, report key) from the rows. Hours are kept at any age,
// so ReportSums answers its hourly call and nothing more for its daily
// one. It is safe for concurrent use.
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

// dayExpr is the unix second of the start of an event's UTC day.
const dayExpr = "intDiv(toUInt32(time), 86400) * 86400"

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

// where is the condition on the rows of entity (every one, id 0) whose
// time t is in [from, to), bots left out, only, or kept: rows of the
// rollups by entity (events_hourly, events_reach) or, with rows, of
// events (the counted ones; a report of one ad or campaign also filters
// by the line's own id, which the table is ordered by). The dates bound
// the partitions read.
func where(rows bool, t, entity string, id, from, to int64, bots, onlyBots bool) (string, error) {
	col := entityColumns[entity]
	if col == "" {
		return "", fmt.Errorf("clickhouse reports: no such entity %q", entity)
	}
	w := []string{rangeOf(t, from, to)}
	switch {
	case !rows:
		w = append(w, "entity = "+literal(entity))
		if id != 0 {
			w = append(w, "entity_id = "+strconv.FormatInt(id, 10))
		}
	case id != 0:
		w = append(w, "counted = 1", col+" = "+strconv.FormatInt(id, 10))
		switch entity {
		case marquee.EntityAd:
			w = append(w, "ad_id = "+strconv.FormatInt(id, 10))
		case marquee.EntityCampaign:
			w = append(w, "campaign_id = "+strconv.FormatInt(id, 10))
		}
	default:
		w = append(w, "counted = 1", col+" != 0")
	}
	switch {
	case onlyBots:
		w = append(w, "bot NOT IN "+reportrow.PeopleIVT)
	case !bots:
		w = append(w, "bot IN "+reportrow.PeopleIVT)
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

// answer is a query's answer in RowBinary: its rows' values one after
// the other, each Int64 (8 bytes, little-endian: the queries cast every
// number to it) or String (its length, a varint, then its bytes), in the
// order the query selects them. Its first error sticks (err).
type answer struct {
	b   []byte
	err error
}

// query runs query and returns its answer.
func (r *Reports) query(ctx context.Context, query string) (*answer, error) {
	out, err := r.c.Query(ctx, query+" FORMAT RowBinary")
	return &answer{b: out}, err
}

// more says whether a row is left (and no error was met).
func (a *answer) more() bool { return a.err == nil && len(a.b) > 0 }

func (a *answer) int64() int64 {
	if len(a.b) < 8 {
		a.fail()
		return 0
	}
	n := int64(binary.LittleEndian.Uint64(a.b))
	a.b = a.b[8:]
	return n
}

func (a *answer) string() string {
	n, w := binary.Uvarint(a.b)
	if w <= 0 || uint64(len(a.b)-w) < n {
		a.fail()
		return ""
	}
	s := string(a.b[w : w+int(n)])
	a.b = a.b[w+int(n):]
	return s
}

// counts reads the sums of sumsOf into c.
func (a *answer) counts(c *reportrow.Counts) {
	for _, p := range c.Fields() {
		*p = a.int64()
	}
}

func (a *answer) fail() {
	if a.err == nil {
		a.err = errors.New("clickhouse reports: an answer cut short")
	}
	a.b = nil
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
	case reportrow.DimError:
		return "error_code", []string{marquee.EntityAd}, ""
	}
	return "kv_value", []string{marquee.EntityAd, marquee.EntityCampaign, marquee.EntityPlacement}, strings.TrimPrefix(by, reportrow.KVDim)
}

// ReportSums sums q's events by hour (and country or platform) from
// events_hourly, or, by a dimension of dimension rows, by UTC day and
// value from the rows: the hourly call answers the first, the daily call
// the second (reports.Reader).
func (r *Reports) ReportSums(ctx context.Context, q reportrow.SumQuery, daily bool) ([]reportrow.Sum, error) {
	if reportrow.IsDim(q.By) != daily {
		return nil, nil
	}
	if !daily { // by hour, from the hourly rollup
		dim := "''"
		switch q.By {
		case "country", "platform":
			dim = "r_" + q.By
		case reportrow.ByIVT:
			dim = "toString(bot)"
		}
		w, err := where(false, "hour", q.Entity, q.ID, q.From, q.To, q.Bots, q.OnlyBots)
		if err != nil {
			return nil, err
		}
		return r.sums(ctx, "SELECT toInt64(hour) AS t, "+dim+" AS d, "+sumsOf(q.Entity)+" FROM events_hourly WHERE "+w+" GROUP BY t, d")
	}
	// By day and a dimension's value, from the rows.
	expr, entities, key := dimValue(q.By)
	if !slices.Contains(entities, q.Entity) {
		return nil, nil
	}
	w, err := where(true, dayExpr, q.Entity, q.ID, q.From, q.To, q.Bots, q.OnlyBots)
	if err != nil {
		return nil, err
	}
	join := ""
	if key != "" {
		join = " ARRAY JOIN kv_keys AS kv_key, kv_values AS kv_value"
		w += " AND kv_key = " + literal(key)
	}
	switch q.By {
	case reportrow.DimDestination:
		w += " AND r_dest >= 0"
	case reportrow.DimError:
		w += " AND c_errors = 1"
	}
	return r.sums(ctx, "SELECT toInt64("+dayExpr+") AS t, "+expr+" AS d, "+sumsOf(q.Entity)+" FROM events"+join+" WHERE "+w+" GROUP BY t, d")
}

// sums runs a query of sums by time and dimension value.
func (r *Reports) sums(ctx context.Context, query string) ([]reportrow.Sum, error) {
	a, err := r.query(ctx, query)
	if err != nil {
		return nil, err
	}
	var out []reportrow.Sum
	for a.more() {
		s := reportrow.Sum{Time: a.int64(), Dim: a.string()}
		a.counts(&s.Counts)
		out = append(out, s)
	}
	return out, a.err
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
	w, err := where(false, "hour", q.Entity, 0, q.From, q.To, q.Bots, q.OnlyBots)
	if err != nil {
		return nil, err
	}
	query := "SELECT toInt64(entity_id), " + sumsOf(q.Entity) + " FROM events_hourly WHERE " + w + " GROUP BY entity_id" +
		" ORDER BY " + topOrder(metric) + " DESC, entity_id"
	if limit > 0 {
		query += " LIMIT " + strconv.Itoa(limit)
	}
	a, err := r.query(ctx, query)
	if err != nil {
		return nil, err
	}
	var out []reportrow.Sum
	for a.more() {
		s := reportrow.Sum{ID: a.int64()}
		a.counts(&s.Counts)
		out = append(out, s)
	}
	return out, a.err
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
// first) — from events_reach. ClickHouse's uniqCombined counts exactly
// up to thousands of uids and estimates past them (docs/analytics.md).
func (r *Reports) ReportUniques(ctx context.Context, entity string, id, from, to int64, starts []int64) (int64, []int64, error) {
	w, err := where(false, "day", entity, id, from, to, true, false)
	if err != nil {
		return 0, nil, err
	}
	a, err := r.query(ctx, "SELECT toInt64(uniqCombinedMerge(uids)) FROM events_reach WHERE "+w)
	if err != nil {
		return 0, nil, err
	}
	total := a.int64()
	if a.err != nil || len(starts) == 0 {
		return total, make([]int64, len(starts)), a.err
	}
	list := make([]string, len(starts))
	for i, s := range starts {
		list[i] = strconv.FormatInt(s, 10)
	}
	a, err = r.query(ctx, "SELECT toInt64(arrayCount(s -> s <= day, ["+strings.Join(list, ",")+"])) - 1 AS b, "+
		"toInt64(uniqCombinedMerge(uids)) FROM events_reach WHERE "+w+" GROUP BY b")
	if err != nil {
		return 0, nil, err
	}
	per := make([]int64, len(starts))
	for a.more() {
		if b, n := a.int64(), a.int64(); b >= 0 && int(b) < len(per) {
			per[b] = n
		}
	}
	return total, per, a.err
}

// cubeColumns are the columns of CubeQuery's groups and filters in the
// cube's rollups.
var cubeColumns = map[string]string{"day": "day", "ad": "r_ad", "campaign": "r_campaign", "placement": "r_placement",
	"country": "r_country", "device": "device", "value": "kv_value", "ivt": "bot"}

// CubeSums sums the events q selects by q.Group (reports.Reader), from
// the cube's rollups (migration 0004): events_cube_kv by a report key's
// value, events_cube_cp by campaign and placement alone (GrainCP), else
// events_cube, whose rows hold the other grains'.
func (r *Reports) CubeSums(ctx context.Context, q reportrow.CubeQuery) ([]reportrow.CubeRow, error) {
	table := "events_cube"
	w := []string{rangeOf("day", q.From, q.To)}
	switch q.Grain {
	case reportrow.GrainKV:
		table = "events_cube_kv"
		w = append(w, "kv_key = "+literal(q.Key))
	case reportrow.GrainCP:
		table = "events_cube_cp"
	}
	if !q.Bots {
		w = append(w, "bot IN "+reportrow.PeopleIVT)
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
		col := cubeColumns[g]
		if col == "" {
			return nil, fmt.Errorf("clickhouse reports: no such group %q", g)
		}
		group[i] = col
		if g != "country" && g != "device" && g != "value" {
			group[i] = "toInt64(" + col + ")"
		}
	}
	sel := append(slices.Clone(group), sumsOf(marquee.EntityAd))
	query := "SELECT " + strings.Join(sel, ", ") + " FROM " + table + " WHERE " + strings.Join(w, " AND ")
	if len(group) > 0 {
		query += " GROUP BY " + strings.Join(group, ", ")
	}
	a, err := r.query(ctx, query)
	if err != nil {
		return nil, err
	}
	out := make([]reportrow.CubeRow, 0, len(a.b)/(8*len(reportrow.Columns))) // at most: a row has its sums at least
	for a.more() {
		x := reportrow.CubeRow{Grain: q.Grain, Key: q.Key}
		for _, g := range q.Group {
			switch g {
			case "day":
				x.Day = a.int64()
			case "ad":
				x.Ad = a.int64()
			case "campaign":
				x.Campaign = a.int64()
			case "placement":
				x.Placement = a.int64()
			case "country":
				x.Country = a.string()
			case "device":
				x.Device = a.string()
			case "value":
				x.Value = a.string()
			case "ivt":
				x.IVT = uint8(a.int64())
			}
		}
		a.counts(&x.Counts)
		out = append(out, x)
	}
	return out, a.err
}

// RequestSums are the catalog's: requests and fill are counted at the
// decision, not in the event files (docs/analytics.md).
func (r *Reports) RequestSums(ctx context.Context, q reportrow.RequestQuery) ([]reportrow.RequestRow, error) {
	return r.catalog.RequestSums(ctx, q)
}
