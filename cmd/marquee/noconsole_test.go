package main

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestBuildWithoutConsole builds marquee with -tags noconsole and runs it:
// the API answers, and /admin/ is a 404 like any unknown path.
func TestBuildWithoutConsole(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a binary: not in -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build with -tags noconsole")
	}
	bin := filepath.Join(t.TempDir(), "marquee")
	if out, err := exec.Command(goTool, "build", "-tags", "noconsole", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags noconsole: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(bin, "serve", "-addr", addr, "-data", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	get := func(path string) (int, string) {
		r, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	for range 200 {
		if s, _ := get("/readyz"); s == 200 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if s, b := get("/api/v1/ad?limit=1"); s != 200 || b != `{"items":[]}` {
		t.Errorf("GET /api/v1/ad without the console = %d %s; want 200 and an empty list", s, b)
	}
	if s, b := get("/admin/"); s != 404 {
		t.Errorf("GET /admin/ without the console = %d %s; want 404", s, b)
	}
}
