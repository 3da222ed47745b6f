package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeSection returns the first ```sh block of the README section
// headed heading.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	if next := strings.Index(rest, "\n## "); next >= 0 {
		rest = rest[:next]
	}
	_, block, ok := strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("README.md section %q has no ```sh block", heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestReadmeFirstFiveMinutes runs the README's "The first five minutes"
// as written, in a new directory: this binary stands for `go run
// ./cmd/marquee` (the same main), and the server gets a free port instead
// of 8080 — the only two changes. Each answer the README shows (a "# {…}"
// line, … for what varies) must be what the commands printed.
func TestReadmeFirstFiveMinutes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for the reports' flush (11 s)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the README's commands use curl: apt-get install -y curl")
	}
	script := readmeSection(t, "The first five minutes")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := strings.NewReplacer("go run ./cmd/marquee", `"$MARQUEE_SELF"`, "localhost:8080", "localhost:"+strconv.Itoa(port)).Replace(script)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", "trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n"+run)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "MARQUEE_TEST_RUN_MAIN=1", "MARQUEE_SELF="+self, "MARQUEE_ADDR=127.0.0.1:"+strconv.Itoa(port))
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	if err != nil {
		t.Fatalf("the README's first five minutes failed: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	for _, line := range strings.Split(script, "\n") {
		want, ok := strings.CutPrefix(line, "# {")
		if !ok {
			continue
		}
		parts := strings.Split("{"+want, "…")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		if !regexp.MustCompile(strings.Join(parts, ".*")).Match(out) {
			t.Errorf("the README shows %q; the commands printed:\n%s", "{"+want, out)
		}
	}
}
