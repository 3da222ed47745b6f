package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"marquee/clickhouse"
)

// clickhouseServer runs a ClickHouse server of its own (Debian's
// clickhouse-server, as the clickhouse user) on spare ports with its data
// in a temporary folder, so that a test can stop it and start it again
// with what it stored — a streamBroker for -analytics. Skipped without
// MARQUEE_TEST_CLICKHOUSE (a ClickHouse is installed where it is set) or
// where it cannot run.
type clickhouseServer struct {
	t                 *testing.T
	dir               string
	http, tcp, server int
	cmd               *exec.Cmd
	exited            chan error // cmd's Wait, once it has exited
	// polled is when received last asked, lastErr why it last failed: a
	// test's eventually asks every few ms, and a full read of the table
	// that often would load the server it waits for (received keeps
	// 200 ms between reads).
	polled  time.Time
	lastErr error
}

func newClickHouseServer(t *testing.T) *clickhouseServer {
	if os.Getenv("MARQUEE_TEST_CLICKHOUSE") == "" {
		t.Skip("MARQUEE_TEST_CLICKHOUSE is not set: no ClickHouse here (.ci/run installs and starts one)")
	}
	if _, err := os.Stat("/usr/sbin/clickhouse-server"); err != nil || os.Geteuid() != 0 {
		t.Skip("a ClickHouse of the test's own needs /usr/sbin/clickhouse-server and root (to run it as the clickhouse user)")
	}
	u, err := user.Lookup("clickhouse")
	if err != nil {
		t.Skip("no clickhouse user: ", err)
	}
	// Not t.TempDir: its parents are closed to other users.
	dir, err := os.MkdirTemp("", "marquee-clickhouse-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range []string{"", "tmp", "uf", "fs"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		os.Chown(filepath.Join(dir, d), uid, gid)
	}
	s := &clickhouseServer{t: t, dir: dir, http: spare(t), tcp: spare(t), server: spare(t)}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *clickhouseServer) dsn() string {
	return "clickhouse://127.0.0.1:" + strconv.Itoa(s.http) + "/marquee"
}

func (s *clickhouseServer) flags() []string { return []string{"-analytics", s.dsn()} }

func (s *clickhouseServer) start() {
	d := s.dir
	s.cmd = exec.Command("runuser", "-u", "clickhouse", "--", "/usr/sbin/clickhouse-server", "--config-file=/etc/clickhouse-server/config.xml", "--",
		"--path="+d+"/", "--tmp_path="+d+"/tmp/", "--user_files_path="+d+"/uf/", "--format_schema_path="+d+"/fs/",
		"--http_port="+strconv.Itoa(s.http), "--tcp_port="+strconv.Itoa(s.tcp), "--interserver_http_port="+strconv.Itoa(s.server),
		"--logger.log="+d+"/ch.log", "--logger.errorlog="+d+"/ch.err")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stop kills the server, not only runuser
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func(cmd *exec.Cmd) { exited <- cmd.Wait() }(s.cmd)
	s.exited = exited
	// Ready when it answers a query: a port that accepts is not enough (a
	// server that failed to listen on its other ports exits right after).
	probe := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; {
		select {
		case err := <-exited:
			s.cmd = nil
			s.t.Fatalf("clickhouse-server exited at start (%v); its errors:\n%s", err, s.errors())
		default:
		}
		if r, err := probe.Get("http://127.0.0.1:" + strconv.Itoa(s.http) + "/?query=SELECT%201"); err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if string(b) == "1\n" {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("clickhouse-server does not answer on %d after 60 s; its errors:\n%s", s.http, s.errors())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// errors is the end of the server's error log.
func (s *clickhouseServer) errors() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "ch.err"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (s *clickhouseServer) stop() {
	if s.cmd != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
		s.cmd = nil
	}
}

// received is every event in the events table, in the order received
// (receivedAt, to the nanosecond, from the line), with its id.
func (s *clickhouseServer) received(t *testing.T) []streamed {
	if wait := 200*time.Millisecond - time.Since(s.polled); wait > 0 {
		time.Sleep(wait)
	}
	s.polled = time.Now()
	c, err := clickhouse.Open(s.dsn())
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Query(context.Background(), "SELECT id, line FROM events ORDER BY visitParamExtractString(line, 'receivedAt') FORMAT JSONEachRow")
	if s.lastErr = err; err != nil {
		return nil // not created yet, or down
	}
	var got []streamed
	for l := range strings.Lines(string(out)) {
		var row struct{ ID, Line string }
		var line map[string]any
		if json.Unmarshal([]byte(l), &row) != nil || json.Unmarshal([]byte(row.Line), &line) != nil {
			t.Fatalf("row %q", l)
		}
		got = append(got, streamed{eid: row.ID, line: line})
	}
	return got
}

// storedOnce says which events the table holds more than once ("" when
// none does).
func storedOnce(got []streamed) string {
	seen := map[string]int{}
	var twice []string
	for _, s := range got {
		if seen[s.eid]++; seen[s.eid] == 2 {
			twice = append(twice, s.eid)
		}
	}
	if len(twice) > 0 {
		return fmt.Sprintf("%d events stored more than once (of %d rows), e.g. %s", len(twice), len(got), twice[0])
	}
	return ""
}

// TestAnalyticsKilledDuringInserts: Marquee killed (SIGKILL) three times
// while it inserts into ClickHouse — each time after inserts the stream's
// cursor may not have recorded yet — and started again on the same data:
// every acknowledged event is in the events table, each once.
func TestAnalyticsKilledDuringInserts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ch := newClickHouseServer(t)
	data := t.TempDir()
	var acked []string
	for round := range 3 {
		base, cmd := startChild(t, data, append([]string{"-events-durable", "-events-flush", "20ms", "-events-rotate-age", "300ms"}, ch.flags()...)...)
		stop := make(chan struct{})
		wait := streamLoadAs(base, fmt.Sprintf("r%du", round), stop, nil) // each round's users its own
		time.Sleep(time.Duration(700+300*round) * time.Millisecond)       // inserts flowing: the cursor is saved every 250 ms
		cmd.Process.Kill()
		cmd.Wait()
		close(stop)
		acked = append(acked, wait()...)
	}
	if len(acked) < 100 {
		t.Fatalf("only %d events acknowledged; the test needs load", len(acked))
	}
	start(t, data, nil, append([]string{"-insecure-admin", "-events-durable"}, ch.flags()...)...)
	eventually(t, 3*time.Minute, func() string {
		if msg := checkStreamed(ch.received(t), acked, false); msg != "" {
			return fmt.Sprintf("%s (the table's read: %v; the server's errors: %s)", msg, ch.lastErr, ch.errors())
		}
		return ""
	})
	if msg := storedOnce(ch.received(t)); msg != "" {
		t.Error(msg)
	}
}
