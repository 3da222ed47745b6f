package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"marquee/tmpfs"
)

// TestStoreFullIs503, on a real tmpfs: ad writes that no longer fit get
// 503 "storage full" with Retry-After, never 500; the ads stored before
// stay; writes resume by themselves when space returns; /readyz and the
// metric say so meanwhile.
func TestStoreFullIs503(t *testing.T) {
	t.Parallel()
	mnt := tmpfs.Mount(t, 8<<20)
	in := start(t, mnt, nil, "-events-min-free", "off")
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	created := 0
	for range 5 {
		in.expect(in.admin("POST", "/api/v1/ad", adBody("before", from, to, "")), 201, "")
		created++
	}
	filler := tmpfs.Fill(t, mnt)
	var full response
	for i := range 2000 {
		r := in.admin("POST", "/api/v1/ad", adBody(fmt.Sprintf("fill %d %s", i, strings.Repeat("x", 200)), from, to, ""))
		if r.status == 201 {
			created++
			continue
		}
		full = r
		break
	}
	if full.status != 503 || full.body != `{"error":"storage full: the database's disk has no space for this write; retry later"}` || full.header.Get("Retry-After") == "" {
		t.Fatalf("a write on a full disk = %d %s (Retry-After %q); want 503 storage full with Retry-After", full.status, full.body, full.header.Get("Retry-After"))
	}
	if r := in.get("/readyz"); !strings.Contains(r.body, `"store":"full"`) {
		t.Errorf("/readyz on a full disk = %s; want store full", r.body)
	}
	if r := in.get("/metrics"); !strings.Contains(r.body, "marquee_store_full 1") {
		t.Error("marquee_store_full is not 1 on a full disk")
	}
	os.Remove(filler)
	in.expect(in.admin("POST", "/api/v1/ad", adBody("after", from, to, "")), 201, "")
	created++
	r := in.admin("GET", "/api/v1/ads?limit=1000", "")
	if !strings.Contains(r.body, fmt.Sprintf(`"total":%d`, created)) {
		t.Fatalf("after space returned, GET /api/v1/ads = %.200s…; want all %d ads acknowledged", r.body, created)
	}
	if r := in.get("/readyz"); !strings.Contains(r.body, `"store":"up"`) {
		t.Errorf("/readyz after space returned = %s", r.body)
	}
}

// dial opens a connection to in and returns it with a reader of it.
func dial(t *testing.T, in *instance) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// TestConnectionLimits: past -max-conns-per-ip a connection gets 429, past
// -max-conns 503, both JSON with Retry-After; a closed connection gives
// its place back.
func TestConnectionLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags  []string
		status string
		body   string
	}{
		{[]string{"-max-conns-per-ip", "3"}, "429", `{"error":"too many connections from your address; retry later"}`},
		{[]string{"-max-conns", "3", "-max-conns-per-ip", "0"}, "503", `{"error":"too many connections; retry later"}`},
	} {
		in := start(t, t.TempDir(), nil, tc.flags...)
		http.DefaultClient.CloseIdleConnections() // start's own, to /readyz
		var held []net.Conn
		eventually(t, 2*time.Second, func() string { // until the server has seen them closed
			for _, c := range held {
				c.Close()
			}
			held = nil
			for range 3 {
				c, r := dial(t, in)
				held = append(held, c)
				fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
				if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
					return fmt.Sprintf("%v: a connection within the limit got %q", tc.flags, line)
				}
			}
			return ""
		})
		c, r := dial(t, in)
		resp, _ := io.ReadAll(r)
		if !strings.HasPrefix(string(resp), "HTTP/1.1 "+tc.status) || !strings.Contains(string(resp), "Retry-After: 1") ||
			!strings.HasSuffix(string(resp), tc.body) {
			t.Fatalf("%v: the connection over the limit got %q; want %s %s", tc.flags, resp, tc.status, tc.body)
		}
		c.Close()
		held[0].Close()
		eventually(t, 2*time.Second, func() string {
			c, r := dial(t, in)
			defer c.Close()
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
				return "a closed connection did not give its place back: " + line
			}
			return ""
		})
		in.stop()
	}
}

// TestSlowClientCut: a client that trickles its headers is cut off at the
// read timeout, and others are served meanwhile.
func TestSlowClientCut(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-read-timeout", "500ms")
	c, r := dial(t, in)
	started := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		io.ReadAll(r) // returns when the server closes the connection
		closed <- time.Since(started)
	}()
	cut := func(took time.Duration) {
		if took > 2*time.Second {
			t.Fatalf("the trickling client was cut after %v; want about the read timeout (500ms)", took)
		}
		in.expect(in.get("/healthz"), 200, "")
	}
	header := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 100)
	for i := 0; i < len(header); i++ {
		if _, err := c.Write([]byte{header[i]}); err != nil {
			// Cut off: a write can see the close before the reader does.
			select {
			case took := <-closed:
				cut(took)
			case <-time.After(5 * time.Second):
				t.Fatalf("writing byte %d: %v, and the connection was not closed", i, err)
			}
			return
		}
		select {
		case took := <-closed:
			cut(took)
			return
		case <-time.After(50 * time.Millisecond):
		}
		if i%5 == 0 {
			in.expect(in.get("/healthz"), 200, "") // others are served meanwhile
		}
	}
	t.Fatal("the trickling client was never cut off")
}

// TestMemoryLimitFromCgroup: the soft memory limit is 90% of what a
// (fake) cgroup file says, -memory-limit overrides it, and without a
// limit none is set.
func TestMemoryLimitFromCgroup(t *testing.T) {
	t.Parallel()
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	fake := filepath.Join(t.TempDir(), "memory.max")
	fromFile := func() (uint64, error) { // a cgroup v2 memory.max
		b, err := os.ReadFile(fake)
		if err != nil {
			return 0, err
		}
		if s := strings.TrimSpace(string(b)); s != "max" {
			return strconv.ParseUint(s, 10, 64)
		}
		return 0, memlimit.ErrNoLimit
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	os.WriteFile(fake, []byte("1073741824\n"), 0o644)
	if got := setMemoryLimit("", fromFile, log); got != 1073741824*9/10 || debug.SetMemoryLimit(-1) != got {
		t.Errorf("limit from a 1 GiB cgroup = %d (runtime %d); want 90%%", got, debug.SetMemoryLimit(-1))
	}
	if got := setMemoryLimit("512MiB", fromFile, log); got != 512<<20 || debug.SetMemoryLimit(-1) != 512<<20 {
		t.Errorf("-memory-limit 512MiB = %d; want it over the cgroup's", got)
	}
	os.WriteFile(fake, []byte("max\n"), 0o644)
	if got := setMemoryLimit("", fromFile, log); debug.SetMemoryLimit(-1) != got || got < 1<<60 {
		t.Errorf("no cgroup limit: limit %d; want none", got)
	}
	if _, err := fromFile(); !errors.Is(err, memlimit.ErrNoLimit) {
		t.Fatal(err)
	}
}

// TestSavedIndexStartEqualsFullLoad: an instance stopped (saving its
// index) while the store changes, then started from its saved index and
// the changelog since, answers every list query exactly as an instance
// that loads everything from the store.
func TestSavedIndexStartEqualsFullLoad(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if err := run(t.Context(), []string{"seed", "-data", data, "-ads", "3000", "-seed", "5"}, func(string) string { return "" }, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	a := start(t, data, nil, "-insecure-admin")
	from, to := time.Now().Add(-time.Hour), time.Now().Add(48*time.Hour)
	a.expect(a.admin("POST", "/api/v1/ad", adBody("before stop", from, to, `[{"country":["TW"]}]`)), 201, "")
	a.expect(a.admin("DELETE", "/api/v1/ad/5", ""), 204, "")
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, "index.saved")); err != nil {
		t.Fatalf("no saved index after a clean stop: %v", err)
	}
	// Changes while it is down, by another instance on the same file.
	other := start(t, t.TempDir(), nil, "-db", filepath.Join(data, "marquee.db"), "-insecure-admin", "-saved-index", "off")
	other.expect(other.admin("POST", "/api/v1/ad", adBody("while down", from, to, `[{"platform":["ios"],"ageStart":20}]`)), 201, "")
	other.expect(other.admin("PUT", "/api/v1/ad/7", adBody("replaced while down", from, to, "")), 200, "")
	other.expect(other.admin("DELETE", "/api/v1/ad/8", ""), 204, "")

	restarted := start(t, data, nil, "-insecure-admin")
	if !strings.Contains(restarted.log.String(), "the saved index and the changelog since") {
		t.Fatalf("the restart did not use the saved index; log:\n%s", restarted.log)
	}
	queries := []string{"", "?limit=100", "?country=TW&limit=100", "?platform=ios&age=25&limit=100", "?offset=20&limit=50&gender=F"}
	r := rand.New(rand.NewPCG(9, 9))
	for range 200 {
		q := fmt.Sprintf("?offset=%d&limit=%d", r.IntN(100), 1+r.IntN(100))
		if r.IntN(2) == 0 {
			q += fmt.Sprintf("&age=%d", 1+r.IntN(100))
		}
		if r.IntN(2) == 0 {
			q += "&country=" + []string{"TW", "JP", "US", "DE"}[r.IntN(4)]
		}
		if r.IntN(2) == 0 {
			q += "&platform=" + []string{"android", "ios", "web"}[r.IntN(3)]
		}
		queries = append(queries, q)
	}
	for _, q := range queries {
		got, want := restarted.get("/api/v1/ad"+q), other.get("/api/v1/ad"+q)
		if got.status != 200 || got.body != want.body {
			t.Fatalf("GET /api/v1/ad%s from the saved index = %d %.300s; a full load = %.300s", q, got.status, got.body, want.body)
		}
	}
	if r := restarted.get("/api/v1/ad?limit=100&country=TW"); !strings.Contains(r.body, "before stop") {
		t.Errorf("the ad created before the stop is missing: %.300s", r.body)
	}
}

// TestDataIsPrivate: the data directory Marquee makes is its owner's
// alone (0700), and the SQLite database and its -wal and -shm (password
// and key hashes) are 0600 — also an existing database made readable.
func TestDataIsPrivate(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	in := start(t, data, nil)
	in.expect(in.admin("POST", "/api/v1/ad", adBody("A", time.Now(), time.Now().Add(time.Hour), "")), 201, "")
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if got := mode(data); got != 0o700 {
		t.Errorf("data dir mode = %o; want 700", got)
	}
	for _, f := range []string{"marquee.db", "marquee.db-wal", "marquee.db-shm", "admin-token"} {
		if got := mode(filepath.Join(data, f)); got != 0o600 {
			t.Errorf("%s mode = %o; want 600", f, got)
		}
	}
	in.stop()
	os.Chmod(filepath.Join(data, "marquee.db"), 0o644)
	start(t, data, nil).stop()
	if got := mode(filepath.Join(data, "marquee.db")); got != 0o600 {
		t.Errorf("a readable marquee.db, after a start: mode %o; want 600", got)
	}
}
