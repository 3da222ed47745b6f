package loadgen_test

import (
	"bytes"
	"strings"
	"testing"

	"marquee/loadgen"
)

func run(server, kind string, round int, reqps float64, errors uint64, p99 float64) loadgen.RunReport {
	return loadgen.RunReport{Server: server, Kind: kind, Round: round, ReqPerSec: reqps, OK: 1000, Errors: errors,
		Latency: loadgen.LatencySummary{P50: 100, P99: p99, P999: 2 * p99},
		Series:  []loadgen.Sample{{Elapsed: 1e9, ReqPerSec: reqps}},
		Curve:   []loadgen.CurvePoint{{Q: 0, LatencyUs: 10}, {Q: 0.9, LatencyUs: 100}, {Q: 0.99, LatencyUs: p99}, {Q: 1, LatencyUs: 3 * p99}}}
}

// The medians the issues are judged by: target req/s, hello-world req/s and
// the median of the per-round ratios (not the ratio of the medians);
// warm-up runs count for nothing.
func TestSummariseTakesMediansPerRound(t *testing.T) {
	rep := &loadgen.Report{Scenario: "ads", Conns: 64, Runs: []loadgen.RunReport{
		run("target", "warmup", 0, 1, 500, 1),
		run("hello", "measure", 1, 100, 0, 400),
		run("target", "measure", 1, 90, 0, 1000),
		run("hello", "measure", 2, 200, 0, 1000),
		run("target", "measure", 2, 100, 0, 3000),
		run("hello", "measure", 3, 100, 0, 4000),
		run("target", "measure", 3, 80, 2, 2000),
	}}
	rep.Summarise()
	if rep.ReqPerSec != 90 || rep.Baseline != 100 || rep.Ratio != 0.8 {
		t.Errorf("Summarise: target %v, hello %v, ratio %v; want 90, 100, 0.8 (ratios 0.9, 0.5, 0.8)", rep.ReqPerSec, rep.Baseline, rep.Ratio)
	}
	if rep.Latency.P99 != 2000 || rep.BaselineLatency == nil || rep.BaselineLatency.P99 != 1000 {
		t.Errorf("Summarise: p99 %v, baseline %+v; want 2000 and 1000", rep.Latency.P99, rep.BaselineLatency)
	}
	if rep.P99Ratio != 2.5 {
		t.Errorf("Summarise: p99 ratio %v; want 2.5 (per round 2.5, 3, 0.5; not 2000/1000)", rep.P99Ratio)
	}
	if rep.Errors != 2 || rep.Requests != 3002 {
		t.Errorf("Summarise: %d errors of %d; want 2 of 3002 (warm-up not counted)", rep.Errors, rep.Requests)
	}
	row := rep.MarkdownRow()
	if !strings.Contains(row, "| **0.800** |") || strings.Count(row, "|") != strings.Count(strings.SplitN(loadgen.MarkdownHeader, "\n", 2)[0], "|") {
		t.Errorf("MarkdownRow() = %q; want the ratio in a row of the header's width", row)
	}
}

func TestWriteTableShoutsAboutErrors(t *testing.T) {
	r := run("target", "measure", 1, 100, 7, 10)
	r.Status = map[string]uint64{"503": 5}
	r.Socket = map[string]uint64{"timeout": 2}
	rep := &loadgen.Report{Scenario: "ads", Runs: []loadgen.RunReport{r}}
	rep.Summarise()
	var b bytes.Buffer
	rep.WriteTable(&b)
	if out := b.String(); !strings.Contains(out, "!!! ERRORS: 7 of 1,007") || !strings.Contains(out, "status 503×5") || !strings.Contains(out, "timeout×2") {
		t.Errorf("WriteTable with errors:\n%s\nwant the count and each kind", out)
	}
	clean := &loadgen.Report{Scenario: "ads", Runs: []loadgen.RunReport{run("target", "measure", 1, 100, 0, 10)}}
	clean.Summarise()
	b.Reset()
	clean.WriteTable(&b)
	if out := b.String(); strings.Contains(out, "ERRORS") || !strings.Contains(out, "errors: none in 1,000 requests") {
		t.Errorf("WriteTable without errors:\n%s", out)
	}
}
