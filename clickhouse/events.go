package clickhouse

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee/eventline"
	"marquee/jsonstr"
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
	c         *Client
	migrated  bool
	uncertain bool // the table may hold lines not acknowledged yet
	rows      []byte
	fields    eventline.Fields
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
		for end < len(msgs) && dayOf(msgs[end].Value) == day {
			end++
		}
		rows := e.rows[:0]
		for _, m := range msgs[start:end] {
			rows = e.appendRow(rows, m)
		}
		e.rows = rows
		if len(rows) > 0 {
			if err := e.c.Insert(ctx, "events", rows); err != nil {
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
		if d := dayOf(m.Value); d != "" {
			t, _ := time.Parse(time.DateOnly, d)
			for _, day := range []string{d, t.AddDate(0, 0, -1).Format(time.DateOnly)} {
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

// dayOf is the UTC day of an event line ("2006-01-02", from its
// receivedAt, which the server writes first), or "" for a line without
// one.
func dayOf(line []byte) string {
	const key = `{"receivedAt":"`
	if len(line) >= len(key)+10 && bytes.HasPrefix(line, []byte(key)) {
		return string(line[len(key) : len(key)+10])
	}
	return ""
}

// appendRow appends the row of m (JSONEachRow) to rows; a line that is not
// an event the server wrote (no receivedAt) is left out, as reports leave
// it.
func (e *Events) appendRow(rows []byte, m streams.Message) []byte {
	f := &e.fields
	if !eventline.Scan(m.Value, f) {
		return rows
	}
	at := f[eventline.ReceivedAt]
	if len(at) != 30 || at[10] != 'T' {
		return rows
	}
	rows = append(rows, `{"date":"`...)
	rows = append(rows, at[:10]...)
	rows = append(rows, `","time":"`...)
	rows = append(rows, at[:10]...)
	rows = append(rows, ' ')
	rows = append(rows, at[11:19]...)
	rows = append(rows, '"')
	for _, s := range [...]struct {
		col   string
		field int
	}{
		{"id", eventline.ID}, {"type", eventline.Type}, {"placement", eventline.Placement}, {"link", eventline.Link},
		{"domain", eventline.Domain}, {"bidder", eventline.Bidder}, {"uid", eventline.UID}, {"country", eventline.Country},
		{"geo", eventline.Geo}, {"platform", eventline.Platform}, {"ua", eventline.UA}, {"referrer", eventline.Referrer},
		{"kv", eventline.KV}, {"attribution", eventline.Attribution},
	} {
		if v := f[s.field]; len(v) > 0 { // a string's JSON contents: copied as they are
			rows = append(append(append(append(append(rows, ',', '"'), s.col...), `":"`...), v...), '"')
		}
	}
	for _, n := range [...]struct {
		col   string
		field int
	}{{"ad_id", eventline.Ad}, {"campaign_id", eventline.Campaign}, {"cost_nanos", eventline.Cost}, {"conversion_value_micros", eventline.ConvValue}} {
		if v, ok := reportrow.ParseCount(f[n.field]); ok {
			rows = strconv.AppendInt(append(append(append(rows, ',', '"'), n.col...), `":`...), v, 10)
		}
	}
	for _, b := range [...]struct {
		col   string
		field int
	}{{"measured", eventline.Measured}, {"verified", eventline.Verified}, {"redirected", eventline.Redirected}} {
		if string(f[b.field]) == "1" {
			rows = append(append(append(rows, ',', '"'), b.col...), `":1`...)
		}
	}
	rows = append(rows, `,"file":`...)
	rows, _ = jsonstr.Append(rows, []byte(m.File))
	rows = append(rows, `,"file_offset":`...)
	rows = strconv.AppendInt(rows, m.Offset, 10)
	rows = append(rows, `,"line":`...)
	rows, _ = jsonstr.Append(rows, m.Value)
	return append(rows, '}', '\n')
}
