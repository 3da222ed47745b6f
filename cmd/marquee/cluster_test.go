package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"marquee/store/mysql/mysqltest"
	"marquee/store/postgres/pgtest"
)

// Tests of many instances on one PostgreSQL schema or one MySQL
// database: each instance is a whole `marquee serve` started through
// run().

// sharedDB is a database server that many instances share.
type sharedDB struct {
	name string // the store's kind, as dbKind says it
	// dsn makes a fresh database for a test (skipping it when the
	// server's variable is unset), dropped when the test ends.
	dsn func(testing.TB) string
	// flags go to every instance started on it.
	flags []string
	// killAll has the server kill every connection to dsn's database but
	// the one it asks on.
	killAll func(t testing.TB, dsn string) int
}

var sharedDBs = []sharedDB{
	// NOTIFY wakes PostgreSQL instances; the long poll shows it does.
	{name: "postgres", dsn: pgtest.DSN, flags: []string{"-poll", "500ms"}, killAll: killAllPG},
	// MySQL has no NOTIFY: instances poll (50 ms by default).
	{name: "mysql", dsn: mysqltest.DSN, killAll: mysqltest.KillConnections},
}

// eachShared runs test on every shared database, in parallel, each on a
// fresh database.
func eachShared(t *testing.T, test func(t *testing.T, db sharedDB, dsn string)) {
	for _, db := range sharedDBs {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			test(t, db, db.dsn(t))
		})
	}
}

// start starts an instance on dsn with the database's flags, then flags.
func (db sharedDB) start(t testing.TB, dsn string, flags ...string) *instance {
	t.Helper()
	return db.startIn(t, t.TempDir(), dsn, flags...)
}

// startIn is start with the data directory dir.
func (db sharedDB) startIn(t testing.TB, dir, dsn string, flags ...string) *instance {
	t.Helper()
	return start(t, dir, nil, append(append([]string{"-db", dsn, "-insecure-admin"}, db.flags...), flags...)...)
}

func startPG(t testing.TB, dsn string, flags ...string) *instance {
	t.Helper()
	return sharedDBs[0].start(t, dsn, flags...)
}

func killAllPG(t testing.TB, dsn string) int {
	var killed int
	rawPG(t, dsn).QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = current_setting('application_name') AND pid <> pg_backend_pid()`).Scan(&killed)
	return killed
}

// eventually retries check every 5 ms until it returns "" or within is up.
func eventually(t testing.TB, within time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// served returns every active ad an instance lists, in list order, as
// "title endAt".
func (in *instance) served() []string {
	var out []string
	for off := 0; ; off += 100 {
		r := in.do("GET", fmt.Sprintf("/api/v1/ad?limit=100&offset=%d", off), "", "", "")
		var page struct {
			Items []struct{ Title, EndAt string }
		}
		if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil {
			in.t.Fatalf("list: %d %s", r.status, r.body)
		}
		for _, it := range page.Items {
			out = append(out, it.Title+" "+it.EndAt)
		}
		if len(page.Items) < 100 {
			return out
		}
	}
}

func (in *instance) create(title string, endIn time.Duration) string {
	r := in.admin("POST", "/api/v1/ad", adBody(title, time.Now().Add(-time.Hour), time.Now().Add(endIn), ""))
	if r.status != 201 {
		in.t.Fatalf("create %s: %d %s", title, r.status, r.body)
	}
	var v struct{ ID string }
	json.Unmarshal([]byte(r.body), &v)
	return v.ID
}

func titles(served []string) []string {
	out := make([]string, len(served))
	for i, s := range served {
		out[i], _, _ = strings.Cut(s, " ")
	}
	return out
}

func TestThreeInstancesConverge(t *testing.T) {
	t.Parallel()
	eachShared(t, testThreeInstancesConverge)
}

func testThreeInstancesConverge(t *testing.T, db sharedDB, dsn string) {
	a, b, c := db.start(t, dsn), db.start(t, dsn), db.start(t, dsn)
	all := []*instance{a, b, c}
	sees := func(want ...string) func() string {
		return func() string {
			for i, in := range all {
				if got := titles(in.served()); !slices.Equal(got, want) {
					return fmt.Sprintf("instance %d serves %q; want %q", i, got, want)
				}
			}
			return ""
		}
	}
	// Read-your-writes on the writer, then everywhere within the bound.
	x := a.create("x", 2*time.Hour)
	if got := titles(a.served()); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("writer serves %q right after its write; want [x]", got)
	}
	eventually(t, time.Second, sees("x"))
	y := b.create("y", time.Hour)
	eventually(t, time.Second, sees("y", "x"))
	b.expect(b.admin("PUT", "/api/v1/ad/"+x, adBody("x2", time.Now().Add(-time.Hour), time.Now().Add(30*time.Minute), "")), 200, "")
	eventually(t, time.Second, sees("x2", "y"))
	c.expect(c.admin("DELETE", "/api/v1/ad/"+y, ""), 204, "")
	eventually(t, time.Second, sees("x2"))
	// GET by id follows too, also where it was cached before the change.
	eventually(t, time.Second, func() string {
		for i, in := range all {
			if r := in.do("GET", "/api/v1/ad/"+y, "", "", ""); r.status != 404 {
				return fmt.Sprintf("instance %d: GET deleted ad = %d", i, r.status)
			}
			if r := in.do("GET", "/api/v1/ad/"+x, "", "", ""); !strings.Contains(r.body, `"x2"`) {
				return fmt.Sprintf("instance %d: GET replaced ad = %s", i, r.body)
			}
		}
		return ""
	})

	// Concurrent creates, replaces and deletes on all three.
	var wg sync.WaitGroup
	for i, in := range all {
		wg.Go(func() {
			for k := range 15 {
				id := in.create(fmt.Sprintf("c%d-%d", i, k), time.Duration(k+2)*time.Hour)
				switch k % 3 {
				case 1:
					in.admin("PUT", "/api/v1/ad/"+id, adBody(fmt.Sprintf("r%d-%d", i, k), time.Now().Add(-time.Hour), time.Now().Add(time.Duration(k+3)*time.Hour), ""))
				case 2:
					in.admin("DELETE", "/api/v1/ad/"+id, "")
				}
			}
		})
	}
	wg.Wait()
	eventually(t, 2*time.Second, func() string {
		want := a.served()
		for i, in := range all[1:] {
			if got := in.served(); !slices.Equal(got, want) {
				return fmt.Sprintf("instance %d serves %d ads, instance 0 %d: not converged", i+1, len(got), len(want))
			}
		}
		if len(want) != 1+3*10 {
			return fmt.Sprintf("%d ads served; want 31", len(want))
		}
		return ""
	})
}

// An instance stopped while others create, replace and delete ads and
// links starts again (from its saved index) serving what it missed.
func TestRestartedInstanceCatchesUp(t *testing.T) { t.Parallel(); eachShared(t, testRestartCatchesUp) }

func testRestartCatchesUp(t *testing.T, db sharedDB, dsn string) {
	a := db.start(t, dsn)
	dir := t.TempDir()
	b := db.startIn(t, dir, dsn)
	kept, replaced, deleted := a.create("kept", time.Hour), a.create("replaced", 2*time.Hour), a.create("deleted", 3*time.Hour)
	a.expect(a.admin("POST", "/api/v1/links", `{"url":"https://old.example/","code":"moved"}`), 201, "")
	eventually(t, 2*time.Second, func() string {
		if got := titles(b.served()); !slices.Equal(got, []string{"kept", "replaced", "deleted"}) {
			return fmt.Sprintf("b serves %q before it stops", got)
		}
		return ""
	})
	b.expect(b.follow("GET", "moved"), 302, "")
	b.stop()
	a.expect(a.admin("PUT", "/api/v1/ad/"+replaced, adBody("replaced2", time.Now().Add(-time.Hour), time.Now().Add(30*time.Minute), "")), 200, "")
	a.expect(a.admin("DELETE", "/api/v1/ad/"+deleted, ""), 204, "")
	a.create("new", 4*time.Hour)
	a.expect(a.admin("PUT", "/api/v1/links/moved", `{"url":"https://new.example/"}`), 200, "")
	b2 := db.startIn(t, dir, dsn)
	if got := titles(b2.served()); !slices.Equal(got, []string{"replaced2", "kept", "new"}) {
		t.Fatalf("restarted b serves %q; want [replaced2 kept new]", got)
	}
	if r := b2.follow("GET", "moved"); r.header.Get("Location") != "https://new.example/" {
		t.Fatalf("restarted b redirects moved to %q", r.header.Get("Location"))
	}
	b2.expect(b2.do("GET", "/api/v1/ad/"+deleted, "", "", ""), 404, "")
	b2.expect(b2.do("GET", "/api/v1/ad/"+kept, "", "", ""), 200, "")
}

// A change whose notification never comes (written straight into the
// database, as if the NOTIFY were lost) arrives by the poll; a listener
// whose connection is killed reconnects.
func TestLostNotificationListenerKilled(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a, b := startPG(t, dsn), startPG(t, dsn)
	db := rawPG(t, dsn)
	ctx := context.Background()
	now := time.Now().UnixMilli()
	var id int64
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO ads (title, start_at, end_at, conditions, created_at, updated_at)
			VALUES ('silent', $1, $2, '[]', $1, $1) RETURNING id`, now-1000, now+3_600_000).Scan(&id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO changelog (entity, entity_id, op, at) VALUES ('ad', $1, 'put', $2)`, id, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, func() string {
		if got := titles(b.served()); !slices.Equal(got, []string{"silent"}) {
			return fmt.Sprintf("b serves %q; want the un-notified ad by poll", got)
		}
		return ""
	})

	var schema string
	db.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema)
	var killed int
	db.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`, schema).Scan(&killed)
	if killed != 2 {
		t.Fatalf("killed %d listener connections; want 2", killed)
	}
	a.create("after-kill", 2*time.Hour)
	eventually(t, 2*time.Second, func() string {
		if got := titles(b.served()); !slices.Equal(got, []string{"silent", "after-kill"}) {
			return fmt.Sprintf("b serves %q after its listener was killed", got)
		}
		return ""
	})

}

// The database goes away from one instance (its connections cut and new
// ones refused, through a proxy) while clients read it hard: no read
// fails, writes get 503 with Retry-After, /readyz says the store is down,
// and once the database is back the instance catches up on what other
// instances wrote meanwhile, without a restart.
func TestOutageReadsKeepWorkingAndRecover(t *testing.T) { t.Parallel(); eachShared(t, testOutage) }

func testOutage(t *testing.T, db sharedDB, dsn string) {
	u, _ := url.Parse(dsn)
	px := newProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = px.addr
	a := db.start(t, viaProxy.String())
	b := db.start(t, dsn)
	x := a.create("x", 2*time.Hour)
	a.expect(a.do("GET", "/api/v1/ad/"+x, "", "", ""), 200, "") // cached from here on

	var reads, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			repeat(stop, func() bool {
				for _, p := range []string{"/api/v1/ad?limit=10", "/api/v1/ad/" + x} {
					r := a.do("GET", p, "", "", "")
					reads.Add(1)
					if r.status != 200 {
						failed.Add(1)
					}
				}
				return true
			})
		})
	}
	time.Sleep(100 * time.Millisecond)
	px.cut()
	time.Sleep(200 * time.Millisecond)
	r := a.admin("POST", "/api/v1/ad", adBody("refused", time.Now().Add(-time.Hour), time.Now().Add(time.Hour), ""))
	if r.status != 503 || r.header.Get("Retry-After") != "1" || r.body != `{"error":"store unavailable; retry later"}` {
		t.Errorf("write during the outage = %d %s (Retry-After %q); want 503 with Retry-After", r.status, r.body, r.header.Get("Retry-After"))
	}
	if r := a.do("GET", "/readyz", "", "", ""); r.status != 200 || !strings.HasPrefix(r.body, `{"error":"store unavailable: `) ||
		!strings.HasSuffix(r.body, `","status":"ready","store":"down"}`) {
		t.Errorf("/readyz during the outage = %d %s; want 200 reporting the store down", r.status, r.body)
	}
	b.create("during-outage", time.Hour)
	time.Sleep(300 * time.Millisecond)
	px.restore()
	eventually(t, 5*time.Second, func() string {
		if got := titles(a.served()); !slices.Equal(got, []string{"during-outage", "x"}) {
			return fmt.Sprintf("a serves %q after the outage", got)
		}
		return ""
	})
	a.create("after", 3*time.Hour)
	close(stop)
	wg.Wait()
	if failed.Load() > 0 || reads.Load() < 100 {
		t.Errorf("%d of %d reads failed during the outage; want none of at least 100", failed.Load(), reads.Load())
	}
	if m := a.do("GET", "/metrics", "", "", "").body; !strings.Contains(m, `marquee_feed_reloads_total{reason="outage"} 1`) {
		t.Errorf("/metrics of a does not count one reload after the outage")
	}
	eventually(t, time.Second, func() string {
		if got := titles(b.served()); !slices.Equal(got, []string{"during-outage", "x", "after"}) {
			return fmt.Sprintf("b serves %q", got)
		}
		return ""
	})

	// And when the server kills every connection of the database under
	// load.
	if n := db.killAll(t, dsn); n == 0 {
		t.Fatalf("the server killed no connection of the instances")
	}
	// A write on a connection the server just killed fails cleanly (503);
	// the client retries, as Retry-After says.
	eventually(t, 3*time.Second, func() string {
		r := a.admin("POST", "/api/v1/ad", adBody("after-kill", time.Now().Add(-time.Hour), time.Now().Add(4*time.Hour), ""))
		switch r.status {
		case 201:
			return ""
		case 503:
			return "503 after retries: " + r.body
		}
		t.Fatalf("write after the kill = %d %s; want 201 or 503", r.status, r.body)
		return ""
	})
	eventually(t, 3*time.Second, func() string {
		if got := titles(b.served()); !slices.Equal(got, []string{"during-outage", "x", "after", "after-kill"}) {
			return fmt.Sprintf("b serves %q after connections were killed", got)
		}
		return ""
	})
}

func rawPG(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// proxy forwards TCP to a backend and can cut every connection and refuse
// new ones, then accept again on the same address.
type proxy struct {
	t       *testing.T
	addr    string
	backend string
	mu      sync.Mutex
	ln      net.Listener
	conns   []net.Conn
}

func newProxy(t *testing.T, backend string) *proxy {
	p := &proxy{t: t, backend: backend}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.backend)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// Two instances on one SQLite file converge by polling the changelog, and
// report the feed's metrics.
func TestTwoInstancesOnOneSQLiteFile(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "shared.db")
	a := start(t, t.TempDir(), nil, "-db", db, "-insecure-admin", "-poll", "50ms")
	b := start(t, t.TempDir(), nil, "-db", db, "-insecure-admin", "-poll", "50ms")
	id := a.create("x", time.Hour)
	eventually(t, 2*time.Second, func() string {
		if got := titles(b.served()); !slices.Equal(got, []string{"x"}) {
			return fmt.Sprintf("b serves %q; want [x]", got)
		}
		return ""
	})
	b.expect(b.admin("DELETE", "/api/v1/ad/"+id, ""), 204, "")
	eventually(t, 2*time.Second, func() string {
		if got := a.served(); len(got) != 0 {
			return fmt.Sprintf("a serves %q after b deleted it", got)
		}
		return ""
	})
	// The feed's metrics move once every view has applied the batch: the
	// index, which a.served reads, is the first of them.
	eventually(t, 2*time.Second, func() string {
		m := a.do("GET", "/metrics", "", "", "").body
		for _, want := range []string{"marquee_feed_last_applied_seq 2", "marquee_feed_store_up 1", "marquee_feed_apply_lag_seconds_count", "marquee_feed_changes_applied_total 2"} {
			if !strings.Contains(m, want) {
				return "/metrics lacks " + want
			}
		}
		return ""
	})
}

// observation is one answer a reader saw, and when it asked.
type observation struct {
	at  time.Time
	val string
}

// watch calls read in a loop until the returned stop is called, and
// returns what it saw.
func watch(read func() string) (stop func() []observation) {
	var seen []observation
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		repeat(done, func() bool {
			at := time.Now()
			seen = append(seen, observation{at, read()})
			return true
		})
	}()
	return func() []observation { close(done); <-finished; return seen }
}

// propagationBound is how long after a write's response another instance
// may still answer the old value (measured p99 ~15 ms; see
// docs/benchmarks.md).
const propagationBound = time.Second

// checkSwitch fails unless every answer asked for later than bound after
// written is want, and want was seen at all.
func checkSwitch(t *testing.T, what string, seen []observation, written time.Time, want string) {
	t.Helper()
	var first time.Time
	for _, o := range seen {
		if o.val == want && first.IsZero() {
			first = o.at
		}
		if o.at.After(written.Add(propagationBound)) && o.val != want {
			t.Fatalf("%s: %v after the write, B answered %q; want %q", what, o.at.Sub(written), o.val, want)
		}
		if !first.IsZero() && o.val != want {
			t.Fatalf("%s: B answered %q after it had answered %q", what, o.val, want)
		}
	}
	if first.IsZero() {
		t.Fatalf("%s: B never answered %q in %d reads", what, want, len(seen))
	}
	t.Logf("%s: B switched %v after A's response", what, first.Sub(written).Round(time.Microsecond))
}

// Every change on A reaches B's caches: a hot cached link or ad is never
// served stale past the propagation bound, a deleted one is gone, and a
// miss B cached before the key existed does not hide it.
func TestCachesInvalidatedAcrossInstances(t *testing.T) {
	t.Parallel()
	eachShared(t, testCachesInvalidated)
}

func testCachesInvalidated(t *testing.T, db sharedDB, dsn string) {
	a, b := db.start(t, dsn), db.start(t, dsn)
	redirect := func(code string) func() string {
		return func() string {
			r := b.follow("GET", code)
			return fmt.Sprintf("%d %s", r.status, r.header.Get("Location"))
		}
	}
	adTitle := func(id string) func() string {
		return func() string {
			r := b.do("GET", "/api/v1/ad/"+id, "", "", "")
			var v struct{ Title string }
			json.Unmarshal([]byte(r.body), &v)
			return fmt.Sprintf("%d %s", r.status, v.Title)
		}
	}

	// A link, hot in B's cache, replaced then deleted on A.
	a.expect(a.admin("POST", "/api/v1/links", `{"url":"https://old.example/","code":"hot"}`), 201, "")
	eventually(t, 2*time.Second, func() string {
		if got := redirect("hot")(); got != "302 https://old.example/" {
			return "B does not redirect hot yet: " + got
		}
		return ""
	})
	stop := watch(redirect("hot"))
	time.Sleep(50 * time.Millisecond)
	a.expect(a.admin("PUT", "/api/v1/links/hot", `{"url":"https://new.example/","redirect":307}`), 200, "")
	written := time.Now()
	time.Sleep(300 * time.Millisecond)
	checkSwitch(t, "link replaced", stop(), written, "307 https://new.example/")

	stop = watch(redirect("hot"))
	time.Sleep(50 * time.Millisecond)
	a.expect(a.admin("DELETE", "/api/v1/links/hot", ""), 204, "")
	written = time.Now()
	time.Sleep(300 * time.Millisecond)
	checkSwitch(t, "link deleted", stop(), written, "404 ")

	// A code B has looked up (and cached as missing) before A creates it.
	stop = watch(redirect("fresh"))
	time.Sleep(50 * time.Millisecond)
	a.expect(a.admin("POST", "/api/v1/links", `{"url":"https://fresh.example/","code":"fresh"}`), 201, "")
	written = time.Now()
	time.Sleep(300 * time.Millisecond)
	checkSwitch(t, "link created after a cached miss", stop(), written, "302 https://fresh.example/")

	// An import on A: with a generated code among its rows, one changelog
	// entry says any link may have changed, and B's cached link and
	// cached miss both go.
	stop = watch(redirect("fresh"))
	stopMiss := watch(redirect("imported"))
	time.Sleep(50 * time.Millisecond)
	r := a.do("POST", "/api/v1/links/import", a.token, "text/csv",
		"code,url\nfresh,https://fresh.example/v2\nimported,https://imported.example/\n,https://generated.example/\n")
	if r.status != 202 {
		t.Fatalf("import on A = %d %s", r.status, r.body)
	}
	a.waitJob(decodeJob(t, r).ID)
	written = time.Now()
	time.Sleep(300 * time.Millisecond)
	checkSwitch(t, "link replaced by an import", stop(), written, "302 https://fresh.example/v2")
	checkSwitch(t, "link created by an import after a cached miss", stopMiss(), written, "302 https://imported.example/")

	// An ad, hot in B's cache, replaced then deleted; the next id, cached
	// as missing, then created.
	id := a.create("before", time.Hour)
	eventually(t, 2*time.Second, func() string {
		if got := adTitle(id)(); got != "200 before" {
			return "B does not serve the ad yet: " + got
		}
		return ""
	})
	stop = watch(adTitle(id))
	time.Sleep(50 * time.Millisecond)
	a.expect(a.admin("PUT", "/api/v1/ad/"+id, adBody("after", time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "")), 200, "")
	written = time.Now()
	time.Sleep(300 * time.Millisecond)
	checkSwitch(t, "ad replaced", stop(), written, "200 after")

	stop = watch(adTitle(id))
	time.Sleep(50 * time.Millisecond)
	a.expect(a.admin("DELETE", "/api/v1/ad/"+id, ""), 204, "")
	written = time.Now()
	time.Sleep(300 * time.Millisecond)
	checkSwitch(t, "ad deleted", stop(), written, "404 ")

	n, _ := strconv.Atoi(id)
	next := strconv.Itoa(n + 1)
	stop = watch(adTitle(next))
	time.Sleep(50 * time.Millisecond)
	if got := a.create("next", time.Hour); got != next {
		t.Fatalf("created ad %s; want %s", got, next)
	}
	written = time.Now()
	time.Sleep(300 * time.Millisecond)
	checkSwitch(t, "ad created after a cached miss", stop(), written, "200 next")
}
