package mysql_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store/mysql"
	"marquee/store/mysql/mysqltest"
	"marquee/store/storetest"
)

// open opens a store on dsn that logs to slog.Default().
func open(ctx context.Context, dsn string) (*mysql.Store, error) { return mysql.Open(ctx, dsn, nil) }

// A database from before link domains keeps its links, and its ids go on
// from theirs.
func TestUpgradeLinks(t *testing.T) {
	dsn := mysqltest.DSN(t)
	storetest.UpgradeLinks(t, dsn, open, func(q string) error {
		_, err := mysqltest.Raw(t, dsn).Exec(q)
		return err
	})
}

func TestConformance(t *testing.T) {
	storetest.Run(t, mysqltest.DSN, open)
}

// Instances starting together take turns on the migration lock: one
// brings the schema up to date, the others find it done. Without the
// lock each would find no version and record its own (two rows of
// schema_version), and the statements of a later migration that are not
// idempotent would fail on all but one.
func TestMigrationsTakeTurns(t *testing.T) {
	dsn := mysqltest.DSN(t)
	storetest.OpenTogether(t, dsn, open)
	var rows, version int
	if err := mysqltest.Raw(t, dsn).QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&rows, &version); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || version < 6 {
		t.Fatalf("schema_version after instances opened together: %d rows, version %d; want 1 row, version ≥ 6", rows, version)
	}
}

// lockedBuffer is a bytes.Buffer the driver's goroutines may write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// What the driver reports on its own (here: idle connections the server
// ended) reaches the store's log as JSON lines at warning level, not as
// plain lines on stderr; and the store carries on with new connections.
func TestDriverMessagesAreLogged(t *testing.T) {
	dsn := mysqltest.DSN(t)
	ctx := context.Background()
	var out lockedBuffer
	st, err := mysql.Open(ctx, dsn, slog.New(slog.NewJSONHandler(&out, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if n := mysqltest.KillConnections(t, dsn); n == 0 {
		t.Fatal("no connection of the store's to kill: the test proves nothing")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "mysql driver") && time.Now().Before(deadline) {
		st.Ping(ctx) // finds the dead idle connection, and says so
		time.Sleep(10 * time.Millisecond)
	}
	if err := st.Ping(ctx); err != nil {
		t.Errorf("Ping after the server ended the connections = %v; want a new connection", err)
	}
	var lines int
	for line := range strings.Lines(out.String()) {
		var rec struct{ Level, Msg, Store string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if strings.HasPrefix(rec.Msg, "mysql driver: ") && rec.Level == "WARN" && rec.Store == "mysql" {
			lines++
		}
	}
	if lines == 0 {
		t.Fatalf("log = %q; want a warning from the driver about the connection the server ended", out.String())
	}
}

// changelogRows fills dsn's changelog with n entries (as many writes
// would), in one statement a 10,000.
func changelogRows(t testing.TB, dsn string, n int) {
	t.Helper()
	raw := mysqltest.Raw(t, dsn)
	for done := 0; done < n; {
		batch := min(10_000, n-done)
		var q strings.Builder
		q.WriteString(`INSERT INTO changelog (entity, entity_id, entity_key, op, at) VALUES `)
		args := make([]any, 0, 2*batch)
		for i := range batch {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(`('ad', ?, '', 'put', ?)`)
			args = append(args, done+i+1, time.Now().UnixMilli())
		}
		if _, err := raw.Exec(q.String(), args...); err != nil {
			t.Fatal(err)
		}
		done += batch
	}
}

// The feed's poll (Changes after the newest seq) reads a range of the
// changelog's primary key, with no sort: cheap however long the
// changelog is.
func TestChangelogPollIsIndexed(t *testing.T) {
	dsn := mysqltest.DSN(t)
	st, err := open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	changelogRows(t, dsn, 20_000)
	rows, err := mysqltest.Raw(t, dsn).Query(`EXPLAIN SELECT seq, entity, entity_id, entity_key, op, at FROM changelog WHERE seq > 19990 ORDER BY seq LIMIT 1000`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatal("EXPLAIN returned no row")
	}
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		t.Fatal(err)
	}
	plan := map[string]string{}
	for i, c := range cols {
		plan[c] = vals[i].String
	}
	if plan["type"] != "range" || plan["key"] != "PRIMARY" || strings.Contains(plan["Extra"], "filesort") {
		t.Fatalf("the poll's plan is %v; want a range of PRIMARY with no filesort", plan)
	}
}

// BenchmarkPoll is the feed's poll when nothing changed, at 100,000
// changelog entries, next to a round trip that reads nothing (SELECT 1)
// on a pool configured the same way:
//
//	MARQUEE_TEST_MYSQL=mysql://root@127.0.0.1:3306/test go test ./store/mysql -run XXX -bench Poll
func BenchmarkPoll(b *testing.B) {
	dsn := mysqltest.DSN(b)
	ctx := context.Background()
	st, err := open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	changelogRows(b, dsn, 100_000)
	last, err := st.LastSeq(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("nothing-new", func(b *testing.B) {
		for b.Loop() {
			if changes, err := st.Changes(ctx, last, 1000); err != nil || len(changes) != 0 {
				b.Fatalf("Changes = %d, %v", len(changes), err)
			}
		}
	})
	raw := mysqltest.Raw(b, dsn)
	b.Run("select-1", func(b *testing.B) {
		for b.Loop() {
			var one int
			if err := raw.QueryRow(`SELECT 1`).Scan(&one); err != nil {
				b.Fatal(err)
			}
		}
	})
}
