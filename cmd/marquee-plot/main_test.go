package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"marquee/loadgen"
)

// TestDrawsAReport: a report written as marquee bench -json writes it is
// drawn; a file that is not one is refused by name.
func TestDrawsAReport(t *testing.T) {
	dir := t.TempDir()
	rep := loadgen.Report{Scenario: "ads", Runs: []loadgen.RunReport{{Server: "target", Kind: "measure", Round: 1, ReqPerSec: 90, OK: 1000,
		Series: []loadgen.Sample{{Elapsed: 1e9, ReqPerSec: 90}},
		Curve:  []loadgen.CurvePoint{{Q: 0, LatencyUs: 10}, {Q: 0.99, LatencyUs: 100}, {Q: 1, LatencyUs: 300}}}}}
	j, _ := json.Marshal(rep)
	in, out := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg")
	os.WriteFile(in, j, 0o644)
	if err := run([]string{"-o", out, in}, io.Discard); err != nil {
		t.Fatalf("run = %v", err)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "target round 1") || !strings.Contains(string(b), "latency by percentile") {
		t.Errorf("%s is not the SVG of the two charts naming the run", out)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("nope"), 0o644)
	if err := run([]string{"-o", out, bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("run(bad.json) = %v; want an error naming the file", err)
	}
}
