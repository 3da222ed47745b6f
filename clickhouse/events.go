package clickhouse

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee/eventline"
	"marquee/reportrow"
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
// of each file in the batch and leaves out the lines up to it.
//
// Publish is called by one goroutine at a time (the stream's).
type Events struct {
	c          *Client
	migrated   bool
	uncertain  bool // the table may hold lines not acknowledged yet
	rows       []byte
	fields     eventline.Fields
	quoted     []byte // appendText's scratch
	lastSecond []byte // second's: the last receivedAt's second, and its unix time
	lastUnix   int64
}

// NewEvents returns the events stream of c; the schema is migrated at the
// first publish (ClickHouse need not be up at start).
func NewEvents(c *Client) *Events { return &Events{c: c, uncertain: true} }

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
		for _, m := range msgs[start:end] {
			rows = e.appendRow(rows, m)
		}
		e.rows = rows
		if len(rows) > 0 {
			if err := e.c.Insert(ctx, "events ("+eventColumns+")", "RowBinary", rows); err != nil {
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
const eventColumns = "date, time, id, type, ad_id, campaign_id, placement, link, domain, bidder, uid, country, geo, platform, ua, referrer, kv, " +
	"measured, verified, redirected, cost_nanos, attribution, conversion_value_micros, file, file_offset, line"

// appendRow appends the row of m to rows in RowBinary — ClickHouse's
// cheapest format to read: each value as it is stored, strings after
// their length, no escaping — in the order of eventColumns. A line that
// is not an event the server wrote (no receivedAt) is left out, as
// reports leave it.
func (e *Events) appendRow(rows []byte, m streams.Message) []byte {
	f := &e.fields
	if !eventline.Scan(m.Value, f) {
		return rows
	}
	sec, ok := e.second(f[eventline.ReceivedAt])
	if !ok {
		return rows
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
		flag := byte(0)
		if string(f[field]) == "1" {
			flag = 1
		}
		rows = append(rows, flag)
	}
	cost, _ := reportrow.ParseCount(f[eventline.Cost])
	rows = binary.LittleEndian.AppendUint64(rows, uint64(cost))
	rows = e.appendText(rows, f[eventline.Attribution])
	value, _ := reportrow.ParseCount(f[eventline.ConvValue])
	rows = binary.LittleEndian.AppendUint64(rows, uint64(value))
	rows = appendString(rows, []byte(m.File))
	rows = binary.LittleEndian.AppendUint64(rows, uint64(m.Offset))
	return appendString(rows, m.Value)
}

// appendString appends b as a RowBinary String: its length (a varint),
// then its bytes.
func appendString(rows, b []byte) []byte {
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
	return appendString(rows, []byte(s))
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
