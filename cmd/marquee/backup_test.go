package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store/sqlite"
	"marquee/store/storetest"
)

func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb strings.Builder
	err := run(t.Context(), args, func(string) string { return "" }, nil, &out, &errb)
	return out.String() + errb.String(), err
}

// TestVersion: marquee version names the Go version; /metrics has
// marquee_build_info with the same labels.
func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := runCmd(t, "version")
	if err != nil || !strings.HasPrefix(out, "marquee ") || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, "commit ") {
		t.Fatalf("marquee version = %q, %v; want the version, commit and Go version", out, err)
	}
	in := start(t, t.TempDir(), nil)
	m := in.get("/metrics")
	if !strings.Contains(m.body, `marquee_build_info{built="`) || !strings.Contains(m.body, `goversion="`+runtime.Version()+`"`) {
		t.Fatalf("/metrics has no marquee_build_info with the Go version")
	}
}

// TestHealthcheck: 0 (nil) when /readyz answers 200; an error when
// nothing listens or the answer is not 200.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	if out, err := runCmd(t, "healthcheck", "-url", in.url+"/readyz"); err != nil || !strings.Contains(out, `"status":"ready"`) {
		t.Fatalf("healthcheck of a ready server = %q, %v; want success", out, err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + l.Addr().String() + "/readyz"
	l.Close()
	if _, err := runCmd(t, "healthcheck", "-url", down, "-timeout", "1s"); err == nil {
		t.Fatal("healthcheck of a closed port succeeded")
	}
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"status":"starting"}`, http.StatusServiceUnavailable)
	}))
	defer notReady.Close()
	if out, err := runCmd(t, "healthcheck", "-url", notReady.URL+"/readyz"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("healthcheck of a 503 = %q, %v; want an error naming the 503", out, err)
	}
}

// TestBackupWhileWriting takes a backup while ads are being created, and
// restores it into a fresh data directory: every ad acknowledged before
// the backup started is there with its title, as are a link and the
// reports; restoring over an existing store needs -force.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := runCmd(t, "seed", "-data", dir, "-ads", "5", "-scheduled", "0", "-expired", "0", "-reports", "3"); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
	in := start(t, dir, nil)
	in.expect(in.admin("POST", "/api/v1/links", `{"code":"kept","url":"https://example.com/kept"}`), 201, "")
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			title := fmt.Sprintf("written %d", i)
			r := in.admin("POST", "/api/v1/ad", adBody(title, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), ""))
			if r.status == 201 {
				mu.Lock()
				acked = append(acked, title)
				mu.Unlock()
			}
		}
	})
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	file := filepath.Join(t.TempDir(), "backup.db")
	if out, err := runCmd(t, "backup", "-data", dir, "-to", file); err != nil {
		t.Fatalf("backup while writing: %v %s", err, out)
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	writer.Wait()
	if len(before) == 0 {
		t.Fatal("no write was acknowledged before the backup: the test proves nothing")
	}
	// One window for both reads: the default ends at "now", which moves
	// between them.
	day := time.Now().UTC().Truncate(24 * time.Hour)
	statsPath := "/api/v1/ad/1/stats?granularity=day&from=" + day.Add(-7*24*time.Hour).Format(time.RFC3339) + "&to=" + day.Add(24*time.Hour).Format(time.RFC3339)
	stats := in.get(statsPath).body

	if out, err := runCmd(t, "restore", "-data", dir, "-from", file); err == nil || !strings.Contains(err.Error(), "-force") {
		t.Fatalf("restore over the live store without -force = %q, %v; want a refusal naming -force", out, err)
	}
	fresh := t.TempDir()
	if out, err := runCmd(t, "restore", "-data", fresh, "-from", file); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(fresh, "marquee.db"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for i := int64(1); ; i++ {
		a, err := st.Ad(context.Background(), i)
		if err != nil {
			break
		}
		have[a.Title] = true
	}
	st.Close()
	for _, title := range before {
		if !have[title] {
			t.Errorf("ad %q was acknowledged before the backup started and is not in it", title)
		}
	}
	restored := start(t, fresh, nil, "-admin-token", in.token)
	restored.token = in.token
	restored.expect(restored.admin("GET", "/api/v1/links/kept", ""), 200, "")
	if got := restored.get(statsPath).body; got != stats {
		t.Errorf("ad 1's report after the restore:\n%s\nbefore:\n%s", got, stats)
	}
}

// TestRestoredStoreConformance runs the store conformance suite on
// databases that went through backup and restore.
func TestRestoredStoreConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(tb testing.TB) string {
		dir := tb.TempDir()
		st, err := sqlite.Open(context.Background(), filepath.Join(dir, "orig", "marquee.db"))
		if err != nil {
			tb.Fatal(err)
		}
		file := filepath.Join(dir, "backup.db")
		if err := st.Backup(context.Background(), file); err != nil {
			tb.Fatal(err)
		}
		st.Close()
		var out, errb strings.Builder
		if err := run(context.Background(), []string{"restore", "-data", filepath.Join(dir, "restored"), "-from", file},
			func(string) string { return "" }, nil, &out, &errb); err != nil {
			tb.Fatalf("restore: %v %s", err, errb.String())
		}
		return filepath.Join(dir, "restored", "marquee.db")
	}, sqlite.Open)
}
