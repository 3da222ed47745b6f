// Package clickhouse keeps every event in ClickHouse for fleets
// (docs/analytics.md): a client of its HTTP interface, the schema and its
// migrations, Events, the stream (streams.Broker) that inserts what the
// collector writes, from the files, each event once, and Reports, which
// answers every report from those rows.
//
// It speaks plain HTTP (rows in RowBinary, answers in TabSeparated or
// JSONEachRow): the Go clients want servers far newer than the 18.16
// that Debian ships, and the HTTP interface is the one every version
// keeps. Everything it sends is SQL that 18.16 and current releases both
// accept. Event values never enter SQL text: rows travel in the request
// body. 18.16 has no query parameters, so the few strings a query names
// are quoted: event file names, checked first (fileName), and a report's
// filters and report key (literal, which escapes the two characters
// ClickHouse's string literals need escaped); numbers are formatted.
package clickhouse

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Client talks to one ClickHouse database over the HTTP interface. It is
// safe for concurrent use.
type Client struct {
	endpoint   string // http(s)://host:port/
	db         string
	user, pass string
	hc         *http.Client
}

// Open reads a DSN, clickhouse://[user[:password]@]host[:port]/database
// (port 8123 by default; ?secure=true for HTTPS), and returns its client.
// It does not connect.
func Open(dsn string) (*Client, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "clickhouse" || u.Host == "" {
		return nil, fmt.Errorf("-analytics %q: want clickhouse://[user[:password]@]host[:port]/database", redact(dsn))
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		db = "default"
	}
	if !identifier(db) {
		return nil, fmt.Errorf("-analytics: database %q: want letters, digits and _", db)
	}
	scheme := "http"
	if u.Query().Get("secure") == "true" {
		scheme = "https"
	}
	host := u.Host
	if u.Port() == "" {
		host += ":8123"
	}
	c := &Client{endpoint: scheme + "://" + host + "/", db: db, user: u.User.Username(),
		hc: &http.Client{Timeout: time.Minute}}
	c.pass, _ = u.User.Password()
	return c, nil
}

// redact is dsn without its password, for errors and logs.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return dsn
}

// Database is the client's database.
func (c *Client) Database() string { return c.db }

// identifier: a database or table name that needs no quoting.
func identifier(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	})
}

// Error is what ClickHouse answered to a request it refused.
type Error struct {
	Status int
	Body   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("clickhouse: %d %s", e.Status, strings.TrimSpace(e.Body))
}

// Do sends query, with body as the data it reads (an INSERT's rows) or
// nil, in the client's database, and returns the answer. withDB false
// sends it without a database (to create it).
func (c *Client) do(ctx context.Context, query string, body []byte, withDB bool) ([]byte, error) {
	return c.doAs(ctx, query, "", body, withDB)
}

// doAs is do under the query id id ("": the server's own).
func (c *Client) doAs(ctx context.Context, query, id string, body []byte, withDB bool) ([]byte, error) {
	q := url.Values{"query": {query}}
	if withDB {
		q.Set("database", c.db)
	}
	if id != "" {
		q.Set("query_id", id)
	}
	method, rd := http.MethodPost, io.Reader(bytes.NewReader(body))
	if body == nil {
		rd = strings.NewReader("") // the query alone, in the URL
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+"?"+q.Encode(), rd)
	if err != nil {
		return nil, err
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{Status: resp.StatusCode, Body: string(out)}
	}
	return out, nil
}

// Exec runs a statement that answers nothing.
func (c *Client) Exec(ctx context.Context, query string) error {
	_, err := c.do(ctx, query, nil, true)
	return err
}

// Query runs query and returns its answer (ask for FORMAT JSONEachRow).
func (c *Client) Query(ctx context.Context, query string) ([]byte, error) {
	return c.do(ctx, query, nil, true)
}

// Insert inserts rows, in format (RowBinary, JSONEachRow …), into into —
// a table and its columns, "events (date, time, …)", which the caller
// writes: never a value of a request's. One INSERT of fewer than
// max_insert_block_size rows (1,048,576 by default) into one partition is
// stored whole or not at all.
//
// id names the insert among the server's queries (system.processes) — ""
// for none —, so that a later process can wait for it (Running).
func (c *Client) Insert(ctx context.Context, into, format string, rows []byte, id string) error {
	_, err := c.doAs(ctx, "INSERT INTO "+into+" FORMAT "+format, id, rows, true)
	return err
}

// Running is how many queries the server is running whose id starts with
// prefix (SafeName characters only).
func (c *Client) Running(ctx context.Context, prefix string) (int, error) {
	if !SafeName(prefix) {
		return 0, ErrUnsafeName
	}
	out, err := c.do(ctx, "SELECT count() FROM system.processes WHERE position(query_id, '"+prefix+"') = 1 FORMAT TabSeparated", nil, false)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate creates the database if absent and applies the migrations it
// has not (migrations/NNNN_name.sql, in order), recording each in
// schema_migrations. Each migration is written to be applied again
// harmlessly (IF NOT EXISTS; an added column found is taken as added:
// addedBefore), so two instances starting together agree, and an
// instance killed in a migration, before recording it, applies it again.
func (c *Client) Migrate(ctx context.Context) error {
	if _, err := c.do(ctx, "CREATE DATABASE IF NOT EXISTS "+c.db, nil, false); err != nil {
		return err
	}
	if err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, applied DateTime('UTC')) ENGINE = TinyLog"); err != nil {
		return err
	}
	out, err := c.Query(ctx, "SELECT version FROM schema_migrations FORMAT TabSeparated")
	if err != nil {
		return err
	}
	done := map[int]bool{}
	for _, f := range strings.Fields(string(out)) {
		if v, err := strconv.Atoi(f); err == nil {
			done[v] = true
		}
	}
	entries, err := migrations.ReadDir("migrations")
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("clickhouse: migration %s: no version", name)
		}
		if done[v] {
			continue
		}
		sql, err := migrations.ReadFile(path.Join("migrations", name))
		if err != nil {
			return err
		}
		for _, stmt := range statements(string(sql)) {
			err := c.Exec(ctx, stmt)
			if inner := orphanedInner(stmt, err); inner != "" {
				// A view whose making was killed left its table behind:
				// drop it (it holds only part of what POPULATE copies) and
				// make the view again.
				if err = c.Exec(ctx, "DROP TABLE IF EXISTS "+c.db+".`"+inner+"`"); err == nil {
					err = c.Exec(ctx, stmt)
				}
			}
			if err != nil && !addedBefore(stmt, err) {
				return fmt.Errorf("clickhouse: migration %s: %w", name, err)
			}
		}
		if err := c.Exec(ctx, fmt.Sprintf("INSERT INTO schema_migrations VALUES (%d, now())", v)); err != nil {
			return err
		}
	}
	return nil
}

// addedBefore says err is an ALTER TABLE … ADD COLUMN's refusal of a
// column that exists: the statement was applied before, by a process
// stopped (killed) before it recorded its migration. An ALTER is all or
// nothing, and ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS.
func addedBefore(stmt string, err error) bool {
	head := strings.ToUpper(strings.TrimSpace(stmt))
	return strings.HasPrefix(head, "ALTER TABLE") && strings.Contains(head, "ADD COLUMN") &&
		strings.Contains(err.Error(), "Code: 44,") && strings.Contains(err.Error(), "already exists")
}

// orphanedInner is, when err is a CREATE MATERIALIZED VIEW's refusal
// because its inner table (".inner.NAME") exists without the view, that
// table's name; else "". ClickHouse makes a view's table first, then
// fills it (POPULATE), then records the view: a server killed between
// leaves the table alone, and the migration, applied again, could never
// make the view.
func orphanedInner(stmt string, err error) string {
	if err == nil || !strings.Contains(err.Error(), "Code: 57,") {
		return ""
	}
	f := strings.Fields(stmt)
	if len(f) < 4 || !strings.EqualFold(f[0], "CREATE") || !strings.EqualFold(f[1], "MATERIALIZED") || !strings.EqualFold(f[2], "VIEW") {
		return ""
	}
	name := f[3]
	if strings.EqualFold(name, "IF") && len(f) >= 7 { // IF NOT EXISTS name
		name = f[6]
	}
	inner := ".inner." + name
	if !strings.Contains(err.Error(), "."+inner+" already exists") {
		return ""
	}
	return inner
}

// statements splits a migration into its statements (separated by ";"
// at the end of a line), without its comments.
func statements(sql string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(sql) {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "--") || t == "" {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// ErrUnsafeName is a file name that may not be quoted into SQL.
var ErrUnsafeName = errors.New("clickhouse: an event file name holds characters other than letters, digits, '.', '_' and '-'")

// SafeName reports whether name (an event file's, an instance's) is of
// letters, digits, '.', '_' and '-' only: quoted into SQL as it is.
func SafeName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	})
}

// fileName is name quoted as a SQL string: event file names
// (<instance>-<seq>.ndjson.lz4) need no escaping, and anything else is
// refused.
func fileName(name string) (string, error) {
	if !SafeName(name) {
		return "", ErrUnsafeName
	}
	return "'" + name + "'", nil
}

// DropDaysBefore drops the days (partitions) of the events table and its
// rollups (the materialized views events_*) whose every event is older
// than cutoff — -events-retention —
// and returns how many partitions it dropped.
func (c *Client) DropDaysBefore(ctx context.Context, cutoff time.Time) (int, error) {
	out, err := c.Query(ctx, "SELECT DISTINCT table, partition FROM system.parts WHERE database = '"+c.db+
		"' AND (table = 'events' OR substring(table, 1, 14) = '.inner.events_') AND active FORMAT TabSeparated")
	if err != nil {
		return 0, err
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		table, p, _ := strings.Cut(strings.TrimSpace(line), "\t")
		day, err := time.Parse(time.DateOnly, p)
		if err != nil || day.AddDate(0, 0, 1).After(cutoff) {
			continue // not a day (another partitioning), or not all past
		}
		table = strings.TrimPrefix(table, ".inner.") // a materialized view's rows: dropped through the view
		if err := c.Exec(ctx, "ALTER TABLE "+table+" DROP PARTITION '"+day.Format(time.DateOnly)+"'"); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
