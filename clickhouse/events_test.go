package clickhouse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"marquee"
	"marquee/clickhouse"
	"marquee/clickhouse/clickhousetest"
	"marquee/eventline"
	"marquee/reports"
	"marquee/streams"
)

// line writes an event line as the server does, received at at, with the
// client's fields (string values).
func line(at time.Time, id string, fields ...string) []byte {
	var st eventline.Stamper
	b := eventline.AppendHead(nil, &st, at, func(dst []byte) []byte { return append(dst, id...) }, netip.MustParseAddr("192.0.2.0"), "FR", []byte("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15"))
	for i := 0; i+1 < len(fields); i += 2 {
		b = eventline.AppendString(b, fields[i], []byte(fields[i+1]))
	}
	b = eventline.End(b)
	return b[:len(b)-1] // the stream hands a line without its newline
}

// messages are the lines of one file as the stream hands them over.
func messages(file string, lines ...[]byte) []streams.Message {
	var out []streams.Message
	var off int64
	for _, l := range lines {
		out = append(out, streams.Message{Value: l, Events: 1, File: file, Offset: off})
		off += int64(len(l)) + 1
	}
	return out
}

// catalog is the ads, campaigns, placements and links the events of these
// tests name: ads and campaigns below 100 (a campaign's advertiser is
// 1), placement "home" (id 7), link "spring" (id 3, two destinations).
type catalog struct{}

func (catalog) AdExists(_ context.Context, id int64) (bool, error) { return id < 100, nil }
func (catalog) CampaignAdvertiser(_ context.Context, id int64) (int64, bool, error) {
	return 1, id < 100, nil
}
func (catalog) PlacementID(_ context.Context, name string) (int64, bool, error) {
	return 7, name == "home", nil
}
func (catalog) Link(_ context.Context, key string) (marquee.Link, bool, error) {
	return marquee.Link{ID: 3, Destinations: []marquee.Destination{{URL: "https://a.test", Weight: 1}, {URL: "https://b.test", Weight: 1}}}, key == "spring", nil
}

// newEvents is the events stream of c, counting by catalog with report key
// "section".
func newEvents(c *clickhouse.Client) *clickhouse.Events {
	return clickhouse.NewEvents(c, reports.NewClassifier(nil, reports.NewKeySet([]string{"section"})), catalog{})
}

func count(t *testing.T, c *clickhouse.Client, where string) int {
	t.Helper()
	out, err := c.Query(context.Background(), "SELECT count() FROM events WHERE "+where+" FORMAT TabSeparated")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

// TestMigrateTwice: the schema applies once, and again harmlessly.
func TestMigrateTwice(t *testing.T) {
	c := clickhousetest.Open(t)
	if err := c.Migrate(context.Background()); err != nil {
		t.Fatalf("the second Migrate: %v", err)
	}
	files, _ := filepath.Glob("migrations/*.sql")
	out, err := c.Query(context.Background(), "SELECT count(), uniqExact(version) FROM schema_migrations FORMAT TabSeparated")
	if want := fmt.Sprintf("%d\t%d", len(files), len(files)); err != nil || strings.TrimSpace(string(out)) != want || len(files) < 2 {
		t.Errorf("schema_migrations rows, versions = %q, %v; want %s (each of the %d migrations recorded once)", out, err, want, len(files))
	}
}

// TestMigrateAfterAKill: an instance killed after a migration's
// statements and before it recorded them (here: every migration's, the
// record dropped) migrates again: the columns its ALTERs added are taken
// as added, not an error that stops the stream for good.
func TestMigrateAfterAKill(t *testing.T) {
	c := clickhousetest.Open(t)
	if err := c.Exec(context.Background(), "DROP TABLE schema_migrations"); err != nil {
		t.Fatal(err)
	}
	if err := c.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate over the applied schema with no record of it: %v", err)
	}
}

// TestMigrateAfterAKillInAView: a server killed while it made a
// materialized view (its inner table made and being filled, the view not
// yet recorded) leaves the table alone; the migration, applied again,
// drops it and makes the view, which then counts what is inserted.
func TestMigrateAfterAKillInAView(t *testing.T) {
	ctx := context.Background()
	c := clickhousetest.Open(t)
	for _, stmt := range []string{"DROP TABLE events_hourly", "DROP TABLE schema_migrations",
		"CREATE TABLE `.inner.events_hourly` (date Date, x UInt8) ENGINE = MergeTree(date, (x), 8192)"} {
		if err := c.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := c.Migrate(ctx); err != nil {
		t.Fatalf("Migrate with a view's table left alone: %v", err)
	}
	out, err := c.Query(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'events_hourly' AND engine = 'MaterializedView' FORMAT TabSeparated")
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Errorf("events_hourly views after the migration = %q, %v; want 1", out, err)
	}
	if _, err := c.Query(ctx, "SELECT sum(c_errors) FROM events_hourly FORMAT TabSeparated"); err != nil {
		t.Errorf("the view made again lacks its columns: %v", err)
	}
}

// TestEventsStoredOnce: a batch published again after its answer was lost
// (the stream cannot know whether it was stored) and a batch stored in
// part (its first day's insert done) are stored once; each row keeps the
// line whole (hostile values included) and its columns.
func TestEventsStoredOnce(t *testing.T) {
	c := clickhousetest.Open(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 26, 23, 59, 59, 0, time.UTC)
	hostile := "q\"uote \\ back\nnewline \u2028 日本"
	a := messages("host-a-1.ndjson.lz4",
		line(day, "e1", "type", "impression", "ad", "12", "placement", "home", "country", "FR", "kv", "section=sports"),
		line(day, "e2", "type", "click", "ad", "12", "referrer", hostile),
		line(day.Add(2*time.Second), "e3", "type", "impression", "ad", "13"), // the next day
	)
	a = append(a, streams.Message{Value: []byte(`not an event`), Events: 1, File: a[0].File, Offset: 999}) // skipped, as reports skip it
	ev := newEvents(c)
	if err := ev.Publish(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := count(t, c, "1"); n != 3 {
		t.Fatalf("after one publish: %d rows; want 3", n)
	}

	// The same batch again, as after a lost answer: a fresh stream (a
	// restart) asks the table first.
	ev = newEvents(c)
	if err := ev.Publish(ctx, a); err != nil {
		t.Fatal(err)
	}
	// A batch whose first part is stored: the rest, and a new file.
	b := append(a[1:3:3], messages("host-b-1.ndjson.lz4", line(day, "e4", "type", "impression", "ad", "12"))...)
	ev = newEvents(c)
	if err := ev.Publish(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n, distinct := count(t, c, "1"), count(t, c, "id IN ('e1','e2','e3','e4')"); n != 4 || distinct != 4 {
		t.Errorf("after publishing again: %d rows (%d of e1–e4); want 4, each once", n, distinct)
	}
	if n := count(t, c, "date = '2026-11-27' AND id = 'e3'"); n != 1 {
		t.Errorf("e3 in the day it was received (2026-11-27): %d rows; want 1", n)
	}

	out, err := c.Query(ctx, "SELECT id, type, ad_id, placement, country, geo, kv, referrer, file, file_offset, line FROM events ORDER BY id FORMAT JSONEachRow")
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	for l := range strings.Lines(string(out)) {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 4 {
		t.Fatalf("rows = %v", rows)
	}
	if r := rows[0]; r["type"] != "impression" || fmt.Sprint(r["ad_id"]) != "12" || r["placement"] != "home" || r["country"] != "FR" ||
		r["geo"] != "FR" || r["kv"] != "section=sports" || r["file"] != "host-a-1.ndjson.lz4" || fmt.Sprint(r["file_offset"]) != "0" || r["line"] != string(a[0].Value) {
		t.Errorf("e1's row = %v", r)
	}
	if r := rows[1]; r["referrer"] != hostile || r["line"] != string(a[1].Value) {
		t.Errorf("e2's row: referrer %q, line %q; want %q and the line whole", r["referrer"], r["line"], hostile)
	}
}

// TestUnsafeFileName: a file name that could not be quoted into SQL is
// refused, never sent.
func TestUnsafeFileName(t *testing.T) {
	c := clickhousetest.Open(t)
	ev := newEvents(c)
	msgs := messages("x') OR ('1", line(time.Now(), "e1", "type", "impression"))
	if err := ev.Publish(context.Background(), msgs); err == nil {
		t.Error("Publish with a file name holding quotes: no error")
	}
}

// TestDropDaysBefore: -events-retention drops the days whose every event
// is past it, of the events and of their daily rollup, and keeps the day
// the cutoff falls in.
func TestDropDaysBefore(t *testing.T) {
	c := clickhousetest.Open(t)
	ctx := context.Background()
	var msgs []streams.Message
	for i, day := range []string{"2026-10-01", "2026-10-02", "2026-10-03"} {
		at, _ := time.Parse(time.DateOnly, day)
		msgs = append(msgs, messages(fmt.Sprintf("host-%d.ndjson.lz4", i), line(at.Add(12*time.Hour), "e"+day, "type", "impression", "ad", "12", "kv", "section=a", "uid", "u1"))...)
	}
	if err := newEvents(c).Publish(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	n, err := c.DropDaysBefore(ctx, time.Date(2026, 10, 2, 6, 0, 0, 0, time.UTC))
	if err != nil || n != 6 {
		t.Fatalf("DropDaysBefore(2026-10-02 06:00) = %d, %v; want 6 (2026-10-01 of events and its five rollups)", n, err)
	}
	if got := count(t, c, "1"); got != 2 || count(t, c, "date = '2026-10-01'") != 0 {
		t.Errorf("after: %d rows, 2026-10-01 among them; want 2, not it", got)
	}
	for _, table := range []string{"events_cube", "events_cube_cp", "events_cube_kv", "events_hourly"} {
		out, err := c.Query(ctx, "SELECT min(date), sum(c_impressions) FROM "+table+" FORMAT TabSeparated")
		if err != nil || strings.TrimSpace(string(out)) != "2026-10-02\t2" {
			t.Errorf("%s after: %q, %v; want its first day 2026-10-02 and 2 impressions", table, out, err)
		}
	}
}

// sortedLines is out's lines in order.
func sortedLines(out string) string {
	lines := strings.Split(out, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestRollups: the report rollups sum what events holds — each event
// once, so a report read from a rollup equals one counted from the rows.
func TestRollups(t *testing.T) {
	c := clickhousetest.Open(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var lines [][]byte
	for i := range 50 {
		lines = append(lines, line(day.Add(time.Duration(i)*time.Hour), fmt.Sprintf("e%d", i), "type", []string{"impression", "click"}[i%2],
			"campaign", fmt.Sprint(1+i%3), "ad", fmt.Sprint(10+i%5), "placement", "home", "verified", "1", "cost", "2000000"))
	}
	msgs := messages("host-1.ndjson.lz4", lines...)
	for _, half := range [][]streams.Message{msgs[:20], msgs[:50]} { // the first 20 twice: stored once
		if err := newEvents(c).Publish(ctx, half); err != nil {
			t.Fatal(err)
		}
	}
	q := func(sql string) string {
		out, err := c.Query(ctx, sql+" FORMAT TabSeparated")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for _, rollup := range []struct{ rows, view string }{
		{"SELECT date, r_campaign, r_placement, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events WHERE counted = 1 GROUP BY date, r_campaign, r_placement",
			"SELECT date, r_campaign, r_placement, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events_cube_cp GROUP BY date, r_campaign, r_placement"},
		{"SELECT date, r_ad, r_country, device, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events WHERE counted = 1 GROUP BY date, r_ad, r_country, device",
			"SELECT date, r_ad, r_country, device, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events_cube GROUP BY date, r_ad, r_country, device"},
		{"SELECT toStartOfHour(time), r_ad, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events WHERE counted = 1 GROUP BY toStartOfHour(time), r_ad",
			"SELECT toDateTime(hour, 'UTC'), entity_id, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events_hourly WHERE entity = 'ad' GROUP BY hour, entity_id"},
		{"SELECT toStartOfHour(time), r_advertiser, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events WHERE counted = 1 GROUP BY toStartOfHour(time), r_advertiser",
			"SELECT toDateTime(hour, 'UTC'), entity_id, sum(c_impressions), sum(c_clicks), sum(c_spend_nanos) FROM events_hourly WHERE entity = 'advertiser' GROUP BY hour, entity_id"},
	} {
		raw, rolled := sortedLines(q(rollup.rows)), sortedLines(q(rollup.view))
		if raw != rolled || strings.Count(raw, "\n") < 5 {
			t.Errorf("the rollup differs from the rows:\n%s:\n%s\n%s:\n%s", rollup.rows, raw, rollup.view, rolled)
		}
	}
}
