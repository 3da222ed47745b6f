package clickhouse

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee/eventline"
	"marquee/reportrow"
	"marquee/reports"
	"marquee/streams"
)

// Events inserts the collector's events into the events table: it is the
// streams.Broker of -analytics, so the files stay the source of truth and
// ClickHouse gets what it missed after an outage or a crash, replayed
// from the spool by the stream's cursor.
//
// Each event is stored once. A file's lines reach Publish in order, and
// each row keeps its file and offset. A batch is inserted as runs of one
// day each, in order — an INSERT into one partition of fewer than a
// million rows is stored whole or not at all — so the rows of any file
// are always a prefix of its lines. Whenever the table may hold part of
// what is published (the first publish of a process, and any publish
// after a failed one: an insert whose answer was lost may have been
// stored), Publish first asks the table for the largest offset it holds
// of each file in the batch and leaves out the lines up to it — once no
// insert of this instance's files is still running on the server: an
// insert whose client died (a process killed, a request timed out) may
// still be stored after the question, so each insert carries a query id
// of its instance's (insertTag) and the question waits for them to end.
//
// Each row also holds what reports count of its event (the report
// columns, migration 0003): read by package reports' Classifier and
// Lookup, the rule the embedded reports count by, so that Reports answers
// as they do.
//
// Publish is called by one goroutine at a time (the stream's).
type Events struct {
	c          *Client
	cls        *reports.Classifier
	res        reports.Resolver
	event      reports.Event // appendReport's scratch
	migrated   bool
	uncertain  bool // the table may hold lines not acknowledged yet
	rows       []byte
	fields     eventline.Fields
	quoted     []byte // appendText's scratch
	lastSecond []byte // second's: the last receivedAt's second, and its unix time
	lastUnix   int64
}

// NewEvents returns the events stream of c, reading what reports count
// of each event with cls and res (the embedded reports' GeoIP, report
// keys and resolver); the schema is migrated at the first publish
// (ClickHouse need not be up at start).
func NewEvents(c *Client, cls *reports.Classifier, res reports.Resolver) *Events {
	return &Events{c: c, cls: cls, res: res, uncertain: true}
}

// RunBytes is 0: a message is one event (a row).
func (e *Events) RunBytes() int { return 0 }

// Close ends the client's idle connections.
func (e *Events) Close() error {
	e.c.hc.CloseIdleConnections()
	return nil
}

// Publish inserts msgs (see Events).
func (e *Events) Publish(ctx context.Context, msgs []streams.Message) error {
	if !e.migrated {
		if err := e.c.Migrate(ctx); err != nil {
			return err
		}
		e.migrated = true
	}
	if e.uncertain {
		var err error
		if msgs, err = e.unstored(ctx, msgs); err != nil {
			return err
		}
	}
	for start := 0; start < len(msgs); {
		day := dayOf(msgs[start].Value)
		end := start + 1
		for end < len(msgs) && bytes.Equal(dayOf(msgs[end].Value), day) {
			end++
		}
		rows := e.rows[:0]
		lookup := reports.NewLookup(e.res)
		for _, m := range msgs[start:end] {
			var err error
			if rows, err = e.appendRow(ctx, rows, m, lookup); err != nil {
				e.cls.Forget()
				return err
			}
		}
		e.rows = rows
		e.cls.Forget()
		if len(rows) > 0 {
			var id [8]byte
			rand.Read(id[:])
			if err := e.c.Insert(ctx, "events ("+eventColumns+")", "RowBinary", rows, e.insertTag(msgs[start].File)+hex.EncodeToString(id[:])); err != nil {
				e.uncertain = true
				return err
			}
		}
		start = end
	}
	e.uncertain = false
	return nil
}

// unstored is msgs without the lines the table holds already: those at
// or before the largest offset it has of their file, looked for in the
// partitions of the batch's days and the day before each (a file holds
// a minute of events by default; -events-rotate-age is at most a day).
func (e *Events) unstored(ctx context.Context, msgs []streams.Message) ([]streams.Message, error) {
	var files, days []string // quoted for SQL
	for _, m := range msgs {
		name, err := fileName(m.File)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(files, name) {
			files = append(files, name)
		}
		if d := dayOf(m.Value); d != nil {
			t, _ := time.Parse(time.DateOnly, string(d))
			for _, day := range []string{string(d), t.AddDate(0, 0, -1).Format(time.DateOnly)} {
				if day = "'" + day + "'"; !slices.Contains(days, day) {
					days = append(days, day)
				}
			}
		}
	}
	if len(files) == 0 || len(days) == 0 {
		return msgs, nil
	}
	if err := e.awaitInserts(ctx, msgs[0].File); err != nil {
		return nil, err
	}
	out, err := e.c.Query(ctx, "SELECT file, max(file_offset) FROM events WHERE date IN ("+strings.Join(days, ",")+
		") AND file IN ("+strings.Join(files, ",")+") GROUP BY file FORMAT TabSeparated")
	if err != nil {
		return nil, err
	}
	stored := map[string]int64{}
	for line := range strings.Lines(string(out)) {
		file, off, ok := strings.Cut(strings.TrimSpace(line), "\t")
		n, err := strconv.ParseInt(off, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("clickhouse: the stored offsets: %q", line)
		}
		stored[file] = n
	}
	if len(stored) == 0 {
		return msgs, nil
	}
	kept := msgs[:0:0]
	for _, m := range msgs {
		if at, ok := stored[m.File]; !ok || m.Offset > at {
			kept = append(kept, m)
		}
	}
	return kept, nil
}

// insertTag is the head of the query ids of the inserts of file's
// instance: "marquee-<database>-<instance>-" (files are named
// <instance>-<seq>.ndjson.lz4, and an instance keeps its name across
// restarts).
func (e *Events) insertTag(file string) string {
	instance := file
	if i := strings.LastIndexByte(strings.TrimSuffix(strings.TrimSuffix(file, ".lz4"), ".ndjson"), '-'); i > 0 {
		instance = file[:i]
	}
	return "marquee-" + e.c.db + "-" + instance + "-"
}

// awaitInserts waits until the server runs no insert of file's instance
// (insertTag), polling until ctx ends.
func (e *Events) awaitInserts(ctx context.Context, file string) error {
	for {
		n, err := e.c.Running(ctx, e.insertTag(file))
		if err != nil || n == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dayOf is the UTC day of an event line ("2006-01-02", from the
// receivedAt the server opens it with: eventline.Stamp), or nil for a
// line without one.
func dayOf(line []byte) []byte {
	if at := eventline.Stamp(line); at != nil {
		return at[:len(time.DateOnly)]
	}
	return nil
}

// eventColumns are the columns appendRow writes, in its order.
var eventColumns = "date, time, id, type, ad_id, campaign_id, placement, link, domain, bidder, uid, country, geo, platform, ua, referrer, kv, " +
	"measured, verified, redirected, cost_nanos, attribution, conversion_value_micros, file, file_offset, line, " + reportColumns

// reportColumns are the report columns appendReport writes, in its order.
var reportColumns = "counted, bot, r_country, r_platform, browser, os, device, referrer_host, reach_uid, " +
	"r_ad, r_campaign, r_advertiser, r_placement, r_link, r_dest, r_cube, kv_keys, kv_values, c_" + strings.Join(reportrow.Columns[:], ", c_") + ", error_code"

// appendRow appends the row of m to rows in RowBinary — ClickHouse's
// cheapest format to read: each value as it is stored, strings after
// their length, no escaping — in the order of eventColumns. A line that
// is not an event the server wrote (no receivedAt) is left out, as
// reports leave it. The Lookup tells which entities exist; only its
// errors (the store's) fail a row.
func (e *Events) appendRow(ctx context.Context, rows []byte, m streams.Message, lookup *reports.Lookup) ([]byte, error) {
	f := &e.fields
	if !eventline.Scan(m.Value, f) {
		return rows, nil
	}
	sec, ok := e.second(f[eventline.ReceivedAt])
	if !ok {
		return rows, nil
	}
	rows = binary.LittleEndian.AppendUint16(rows, uint16(sec/86400)) // Date: days since 1970
	rows = binary.LittleEndian.AppendUint32(rows, uint32(sec))       // DateTime: seconds
	for _, field := range [...]int{eventline.ID, eventline.Type} {
		rows = e.appendText(rows, f[field])
	}
	for _, field := range [...]int{eventline.Ad, eventline.Campaign} {
		n, _ := reportrow.ParseCount(f[field])
		rows = binary.LittleEndian.AppendUint64(rows, uint64(n))
	}
	for _, field := range [...]int{eventline.Placement, eventline.Link, eventline.Domain, eventline.Bidder, eventline.UID, eventline.Country,
		eventline.Geo, eventline.Platform, eventline.UA, eventline.Referrer, eventline.KV} {
		rows = e.appendText(rows, f[field])
	}
	for _, field := range [...]int{eventline.Measured, eventline.Verified, eventline.Redirected} {
		rows = append(rows, flag(string(f[field]) == "1"))
	}
	cost, _ := reportrow.ParseCount(f[eventline.Cost])
	rows = binary.LittleEndian.AppendUint64(rows, uint64(cost))
	rows = e.appendText(rows, f[eventline.Attribution])
	value, _ := reportrow.ParseCount(f[eventline.ConvValue])
	rows = binary.LittleEndian.AppendUint64(rows, uint64(value))
	rows = appendString(rows, m.File)
	rows = binary.LittleEndian.AppendUint64(rows, uint64(m.Offset))
	rows = appendString(rows, m.Value)
	return e.appendReport(ctx, rows, lookup)
}

// appendReport appends the report columns of the line in e.fields (see
// reportColumns): zeros when reports do not count it.
func (e *Events) appendReport(ctx context.Context, rows []byte, lookup *reports.Lookup) ([]byte, error) {
	ev := &e.event
	var r reports.Resolved
	counted := e.cls.ReadFields(&e.fields, ev) == ""
	if counted {
		var err error
		if r, err = lookup.Resolve(ctx, ev); err != nil {
			return rows, err
		}
	} else {
		*ev = reports.Event{UID: ev.UID[:0], KVs: ev.KVs[:0], Skipped: ev.Skipped[:0]}
		r.Dest = -1
	}
	rows = append(rows, flag(counted), byte(ev.IVT)) // bot: the reason, 0 a person's
	country := ev.Country[:]
	if !counted {
		country = nil
	}
	rows = appendString(rows, country)
	for _, s := range [...]string{ev.Platform, ev.Browser, ev.OS, ev.Device, ev.Referrer} {
		rows = appendString(rows, s)
	}
	rows = appendString(rows, ev.UID)
	for _, id := range [...]int64{r.Ad, r.Campaign, r.Advertiser, r.Placement, r.Link} {
		rows = binary.LittleEndian.AppendUint64(rows, uint64(id))
	}
	rows = append(rows, byte(int8(r.Dest)), flag(r.Cube))
	rows = binary.AppendUvarint(rows, uint64(len(ev.KVs)))
	for _, kv := range ev.KVs {
		rows = appendString(rows, kv.Key)
	}
	rows = binary.AppendUvarint(rows, uint64(len(ev.KVs)))
	for _, kv := range ev.KVs {
		rows = appendString(rows, kv.Value)
	}
	fields := ev.Fields()
	for _, p := range fields[:len(fields)-5] { // 0 or 1 an event: UInt8
		rows = append(rows, byte(*p))
	}
	rows = binary.LittleEndian.AppendUint64(rows, uint64(ev.ConversionValue))
	rows = binary.LittleEndian.AppendUint64(rows, uint64(ev.SpendNanos))
	rows = append(rows, byte(ev.Unbilled))
	rows = binary.LittleEndian.AppendUint64(rows, uint64(ev.UnbilledNanos))
	rows = append(rows, byte(ev.Errors))
	return appendString(rows, ev.ErrorCode), nil
}

// flag is b as a UInt8.
func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// appendString appends b as a RowBinary String: its length (a varint),
// then its bytes.
func appendString[T string | []byte](rows []byte, b T) []byte {
	return append(binary.AppendUvarint(rows, uint64(len(b))), b...)
}

// appendText appends a field — a JSON string's contents as Scan gives
// them — unescaped, as a String: most have no escape and are copied.
func (e *Events) appendText(rows, raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return appendString(rows, raw)
	}
	e.quoted = append(append(append(e.quoted[:0], '"'), raw...), '"')
	var s string
	if json.Unmarshal(e.quoted, &s) != nil {
		return appendString(rows, raw) // not a JSON string's contents: kept as written
	}
	return appendString(rows, s)
}

// second is the unix second of a receivedAt, which the server writes as
// "2006-01-02T15:04:05.000000000Z"; the last second read is kept, as
// consecutive events share it.
func (e *Events) second(at []byte) (int64, bool) {
	if len(at) != 30 || at[10] != 'T' || at[29] != 'Z' {
		return 0, false
	}
	if e.lastSecond != nil && bytes.Equal(at[:19], e.lastSecond) {
		return e.lastUnix, true
	}
	t, err := time.Parse("2006-01-02T15:04:05", string(at[:19]))
	if err != nil {
		return 0, false
	}
	e.lastSecond, e.lastUnix = append(e.lastSecond[:0], at[:19]...), t.Unix()
	return e.lastUnix, true
}
