package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"marquee/loadgen"
)

func bench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"bench"}, args...), func(string) string { return "" }, nil, &out, &errOut)
	if err != nil {
		t.Logf("marquee bench %q: %v; stderr:\n%s", args, err, errOut.String())
	}
	return out.String(), err
}

func readReport(t *testing.T, name string) loadgen.Report {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var rep loadgen.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rep
}

// Without -target, bench seeds and serves Marquee itself; with -baseline it
// alternates with a hello-world that returns the average body measured in
// the warm-up, and reports the ratio.
func TestBenchInProcessWithBaseline(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json") // its charts: cmd/marquee-plot's test
	out, err := bench(t, "-ads", "300", "-c", "4", "-d", "300ms", "-warmup", "200ms", "-rounds", "2",
		"-baseline", "-json", js)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "target/hello-world = ") || !strings.Contains(out, "errors: none") {
		t.Errorf("table lacks the ratio or the error line:\n%s", out)
	}
	rep := readReport(t, js)
	var kinds []string
	for _, r := range rep.Runs {
		kinds = append(kinds, r.Server+"/"+r.Kind)
	}
	want := []string{"target/warmup", "hello/measure", "target/measure", "hello/measure", "target/measure"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("runs = %v; want %v", kinds, want)
	}
	warm := rep.Runs[0]
	if warm.AvgBody < 100 {
		t.Errorf("average list body = %.0f bytes; want a real page of ads", warm.AvgBody)
	}
	for _, r := range rep.Runs[1:] {
		if r.ReqPerSec <= 0 || r.Errors != 0 || len(r.Series) == 0 || len(r.Curve) == 0 {
			t.Errorf("run %s/%d: %v req/s, %d errors, %d samples; want load without errors", r.Server, r.Round, r.ReqPerSec, r.Errors, len(r.Series))
		}
		if r.Server == "hello" && math.Abs(r.AvgBody-math.Round(warm.AvgBody)) > 0.5 {
			t.Errorf("hello-world body = %.1f bytes; want the target's average %.1f", r.AvgBody, warm.AvgBody)
		}
	}
	if rep.Ratio <= 0 || rep.Baseline <= 0 || rep.ReqPerSec <= 0 || rep.Ads != 300 {
		t.Errorf("report: ratio %v, baseline %v, req/s %v, ads %d", rep.Ratio, rep.Baseline, rep.ReqPerSec, rep.Ads)
	}
}

// Every id ad-by-id asks for was seeded: no 404s. -rate 50% measures the
// maximum first, then holds half of it.
func TestBenchAdByIDOpenLoop(t *testing.T) {
	js := filepath.Join(t.TempDir(), "r.json")
	if _, err := bench(t, "-scenario", "ad-by-id", "-ads", "200", "-c", "4", "-d", "400ms", "-warmup", "0",
		"-rounds", "1", "-rate", "50%", "-json", js); err != nil {
		t.Fatal(err)
	}
	rep := readReport(t, js)
	if len(rep.Runs) != 2 || rep.Runs[0].Kind != "max" || rep.Runs[1].Kind != "measure" {
		t.Fatalf("runs = %+v; want max then measure", rep.Runs)
	}
	max, open := rep.Runs[0], rep.Runs[1]
	if math.Abs(open.Rate-max.ReqPerSec/2) > 1 || open.ReqPerSec > 0.6*max.ReqPerSec {
		t.Errorf("open loop at %v req/s reached %v; want half of the maximum %v", open.Rate, open.ReqPerSec, max.ReqPerSec)
	}
	if rep.Errors != 0 {
		t.Errorf("%d errors; want none (every id exists)", rep.Errors)
	}
}

// A run whose requests fail says so loudly and exits non-zero; -ok-status
// lets a user declare what success is.
func TestBenchFailsLoudlyOnErrors(t *testing.T) {
	in := start(t, t.TempDir(), nil, "-insecure-admin")
	args := []string{"-target", in.url, "-scenario", "url", "-path", "/api/v1/ad/424242", "-c", "2", "-d", "200ms", "-warmup", "0", "-rounds", "1"}
	out, err := bench(t, args...)
	if err == nil || !strings.Contains(out, "!!! ERRORS") || !strings.Contains(out, "status 404×") {
		t.Errorf("bench of a 404 path = %v; want an error and the 404s in the table:\n%s", err, out)
	}
	if _, err := bench(t, append(args, "-ok-status", "404")...); err != nil {
		t.Errorf("with -ok-status 404: %v; want success", err)
	}
}

func TestBenchURLScenarioFromFile(t *testing.T) {
	in := start(t, t.TempDir(), nil, "-insecure-admin")
	paths := filepath.Join(t.TempDir(), "paths")
	os.WriteFile(paths, []byte("/api/v1/ad\n/healthz\n/api/v1/ad?limit=1\n"), 0o644)
	js := filepath.Join(t.TempDir(), "r.json")
	if _, err := bench(t, "-target", in.url, "-scenario", "url", "-paths", paths, "-c", "2", "-d", "200ms", "-warmup", "0", "-rounds", "1", "-json", js); err != nil {
		t.Fatal(err)
	}
	if rep := readReport(t, js); rep.Distinct != 3 || rep.Requests == 0 || rep.Errors != 0 {
		t.Errorf("report: %d distinct, %d requests, %d errors; want 3, some, 0", rep.Distinct, rep.Requests, rep.Errors)
	}
}

func TestBenchDumpPaths(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "paths")
	if _, err := bench(t, "-requests", "50", "-seed", "9", "-dump-paths", f); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f)
	if got, want := strings.Fields(string(b)), loadgen.AdsPaths(9, 50); !slices.Equal(got, want) {
		t.Errorf("dumped paths = %q…; want AdsPaths(9, 50)", got[:min(3, len(got))])
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-scenario", "nope"}, "-scenario"},
		{[]string{"-scenario", "url"}, "-path"},
		{[]string{"-rate", "fast"}, "-rate"},
		{[]string{"-rate", "150%"}, "-rate"},
		{[]string{"-ok-status", "99"}, "-ok-status"},
		{[]string{"-c", "0"}, "-c"},
		{[]string{"-target", "https://example.com", "-warmup", "0"}, "http://"},
	} {
		err := run(context.Background(), append([]string{"bench"}, tc.args...), func(string) string { return "" }, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench %q = %v; want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// The links scenario redirects (a 302 baseline), and reports the link
// cache's hit ratio over the measured runs from the target's /metrics.
func TestBenchLinksReportsHitRatio(t *testing.T) {
	js := filepath.Join(t.TempDir(), "r.json")
	out, err := bench(t, "-scenario", "links", "-links", "2000", "-requests", "20000", "-c", "4", "-d", "300ms",
		"-warmup", "200ms", "-rounds", "2", "-baseline", "-json", js, "-serve-flags", "-link-cache 200")
	if err != nil {
		t.Fatal(err)
	}
	rep := readReport(t, js)
	c := rep.Cache
	if c == nil || c.Name != "link" || c.HitRatio <= 0 || c.HitRatio >= 1 || !strings.Contains(out, "link cache: hit ratio") {
		t.Fatalf("cache report %+v; table:\n%s", c, out)
	}
	var measured uint64
	for _, r := range rep.Runs {
		if r.Server == "target" && r.Kind == "measure" {
			measured += r.Responses
		}
		if r.Errors > 0 || (r.Server == "target" && r.Status != nil) {
			t.Errorf("run %s/%s: %d errors, statuses %v; want every answer a 302", r.Server, r.Kind, r.Errors, r.Status)
		}
	}
	// Every measured redirect is one look-up; a few more were in flight
	// when a run ended (≤ one a connection), the warm-up's included: they
	// may reach the server after the scrape that opens the measurement.
	if got := uint64(c.Hits + c.Misses); got < measured || got > measured+3*4 {
		t.Errorf("hits + misses = %d; want the %d measured responses (+ ≤ 12 in flight)", got, measured)
	}
	if rep.Links != 2000 || rep.Ratio <= 0 {
		t.Errorf("report links %d, ratio %v", rep.Links, rep.Ratio)
	}
}
