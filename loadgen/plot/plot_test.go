package plot_test

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"marquee/loadgen"
	"marquee/loadgen/plot"
)

func run(server, kind string, round int, reqps float64, p99 float64) loadgen.RunReport {
	return loadgen.RunReport{Server: server, Kind: kind, Round: round, ReqPerSec: reqps, OK: 1000,
		Latency: loadgen.LatencySummary{P50: 100, P99: p99, P999: 2 * p99},
		Series:  []loadgen.Sample{{Elapsed: 1e9, ReqPerSec: reqps}},
		Curve:   []loadgen.CurvePoint{{Q: 0, LatencyUs: 10}, {Q: 0.9, LatencyUs: 100}, {Q: 0.99, LatencyUs: p99}, {Q: 1, LatencyUs: 3 * p99}}}
}

func TestWrite(t *testing.T) {
	rep := &loadgen.Report{Scenario: "ads", Runs: []loadgen.RunReport{run("hello", "measure", 1, 100, 900), run("target", "measure", 1, 90, 1000)}}
	var svg, img bytes.Buffer
	if err := plot.Write(&svg, rep, "x.svg"); err != nil || !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "target round 1") {
		t.Errorf("Write(svg) = %v; want an SVG naming the runs", err)
	}
	if err := plot.Write(&img, rep, "x.PNG"); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&img); err != nil {
		t.Errorf("Write(png) is not a PNG: %v", err)
	}
}
