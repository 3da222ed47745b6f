package loadgen

import (
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything a `marquee bench` invocation measured, as written to
// -json: the set-up, every run, and the medians the issues are judged by.
// Latencies are in microseconds.
type Report struct {
	Command  string `json:"command"`
	Scenario string `json:"scenario"`
	// ServeFlags are the extra flags of an in-process server.
	ServeFlags string      `json:"serveFlags,omitempty"`
	Target     string      `json:"target"`
	Ads        int         `json:"ads,omitempty"`
	Links      int         `json:"links,omitempty"`
	Conns      int         `json:"conns"`
	Duration   float64     `json:"durationSeconds"`
	Seed       uint64      `json:"seed"`
	Distinct   int         `json:"distinctRequests"`
	Machine    Machine     `json:"machine"`
	StartedAt  string      `json:"startedAt"`
	Runs       []RunReport `json:"runs"`

	// ReqPerSec is the median over the target's measured runs.
	ReqPerSec float64 `json:"reqPerSec"`
	// Baseline is the median over the hello-world's runs (with -baseline).
	Baseline float64 `json:"baselineReqPerSec,omitempty"`
	// Ratio is the median of the per-round ratios target/hello-world.
	Ratio float64 `json:"ratio,omitempty"`
	// P99Ratio is the median of the per-round ratios of the p99s,
	// target/hello-world: the tail goal of open-loop runs.
	P99Ratio float64 `json:"p99Ratio,omitempty"`
	// Latency and BaselineLatency are the medians over the measured runs
	// of each percentile.
	Latency         LatencySummary  `json:"latency"`
	BaselineLatency *LatencySummary `json:"baselineLatency,omitempty"`
	// Rate is the open-loop rate of the measured runs (0: closed loop).
	Rate float64 `json:"rate,omitempty"`
	// Errors and Requests add up every run against the target.
	Errors    uint64  `json:"errors"`
	Requests  uint64  `json:"requests"`
	ErrorRate float64 `json:"errorRate"`
	// Cache is the target's keyed cache over the measured runs, for the
	// scenarios that go through one (from its /metrics).
	Cache *CacheStats `json:"cache,omitempty"`
}

// CacheStats are a cache's hits and misses over some runs.
type CacheStats struct {
	Name     string  `json:"name"`
	Hits     float64 `json:"hits"`
	Misses   float64 `json:"misses"`
	HitRatio float64 `json:"hitRatio"`
}

// Machine describes where the figures were taken.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	OS         string `json:"os"`
}

// ThisMachine describes the running machine.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, CPU: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// RunReport is one load run in a report.
type RunReport struct {
	// Server is "target" or "hello" (the baseline).
	Server string `json:"server"`
	// Kind is "measure" (counted in the medians), "max" (the closed-loop
	// run that sizes a -rate N% run) or "warmup" (calibration, not counted).
	Kind  string  `json:"kind"`
	Round int     `json:"round"`
	Rate  float64 `json:"rate,omitempty"` // open loop, req/s; 0 = closed loop

	ReqPerSec float64           `json:"reqPerSec"`
	Responses uint64            `json:"responses"`
	OK        uint64            `json:"ok"`
	Errors    uint64            `json:"errors"`
	Status    map[string]uint64 `json:"status,omitempty"`
	Socket    map[string]uint64 `json:"socket,omitempty"`
	AvgBody   float64           `json:"avgBodyBytes"`
	Latency   LatencySummary    `json:"latency"`
	Curve     []CurvePoint      `json:"percentileCurve"`
	Series    []Sample          `json:"series"`
	// CPUPerReq is this process's CPU time per response, in µs. With
	// -target it is the generator's own cost; in-process it includes the
	// server.
	CPUPerReq float64 `json:"processCpuPerRequestUs"`
}

// LatencySummary holds the usual percentiles, in µs.
type LatencySummary struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// NewRun summarises a result; cpu is the process CPU time the run took.
func NewRun(server, kind string, round int, rate float64, r *Result, cpu time.Duration) RunReport {
	p := r.Latency.Percentiles()
	run := RunReport{
		Server: server, Kind: kind, Round: round, Rate: rate,
		ReqPerSec: r.ReqPerSec(), Responses: r.Responses, OK: r.OK, Errors: r.Errors(),
		Socket: r.Socket, AvgBody: r.AvgBody(),
		Latency: LatencySummary{us(p.P50), us(p.P90), us(p.P99), us(p.P999), us(p.Max), us(p.Mean)},
		Curve:   r.Latency.Curve(), Series: r.Series,
	}
	if len(r.Status) > 0 {
		run.Status = map[string]uint64{}
		for code, n := range r.Status {
			run.Status[strconv.Itoa(code)] = n
		}
	}
	if r.Responses > 0 {
		run.CPUPerReq = us(cpu) / float64(r.Responses)
	}
	return run
}

// Summarise fills the medians and error totals from the runs.
func (rep *Report) Summarise() {
	var target, hello, ratios, p99s []float64
	var targetLat, helloLat []LatencySummary
	rep.Errors, rep.Requests = 0, 0
	for _, r := range rep.Runs {
		if r.Kind != "measure" {
			continue
		}
		rep.Rate = r.Rate
		switch r.Server {
		case "target":
			target = append(target, r.ReqPerSec)
			targetLat = append(targetLat, r.Latency)
			rep.Errors += r.Errors
			rep.Requests += r.OK + r.Errors
		case "hello":
			hello = append(hello, r.ReqPerSec)
			helloLat = append(helloLat, r.Latency)
		}
	}
	rep.Latency = medianLatency(targetLat)
	if len(helloLat) > 0 {
		l := medianLatency(helloLat)
		rep.BaselineLatency = &l
	}
	for _, r := range rep.Runs {
		if r.Kind == "measure" && r.Server == "target" {
			for _, h := range rep.Runs {
				if h.Kind == "measure" && h.Server == "hello" && h.Round == r.Round && h.ReqPerSec > 0 {
					ratios = append(ratios, r.ReqPerSec/h.ReqPerSec)
					if h.Latency.P99 > 0 {
						p99s = append(p99s, r.Latency.P99/h.Latency.P99)
					}
				}
			}
		}
	}
	rep.ReqPerSec, rep.Baseline, rep.Ratio, rep.P99Ratio = median(target), median(hello), median(ratios), median(p99s)
	if rep.Requests > 0 {
		rep.ErrorRate = float64(rep.Errors) / float64(rep.Requests)
	}
}

// medianLatency takes the median of each percentile separately.
func medianLatency(ls []LatencySummary) LatencySummary {
	pick := func(f func(LatencySummary) float64) float64 {
		xs := make([]float64, len(ls))
		for i, l := range ls {
			xs[i] = f(l)
		}
		return median(xs)
	}
	return LatencySummary{
		P50:  pick(func(l LatencySummary) float64 { return l.P50 }),
		P90:  pick(func(l LatencySummary) float64 { return l.P90 }),
		P99:  pick(func(l LatencySummary) float64 { return l.P99 }),
		P999: pick(func(l LatencySummary) float64 { return l.P999 }),
		Max:  pick(func(l LatencySummary) float64 { return l.Max }),
		Mean: pick(func(l LatencySummary) float64 { return l.Mean }),
	}
}

// MarkdownHeader is the header of the table MarkdownRow writes rows of.
const MarkdownHeader = "| scenario | catalog | load | target req/s | hello-world req/s | ratio | p50 | p99 | p99.9 | hello-world p50 / p99 / p99.9 | cache hit ratio | errors |\n" +
	"|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"

// MarkdownRow is the report's summary as one row of MarkdownHeader's table:
// medians over the measured runs.
func (rep *Report) MarkdownRow() string {
	load := fmt.Sprintf("closed, %d conns", rep.Conns)
	if rep.Rate > 0 {
		load = fmt.Sprintf("open, %s/s", HumanInt(rep.Rate))
	}
	catalog := "–"
	switch {
	case rep.Links > 0:
		catalog = HumanInt(float64(rep.Links)) + " links"
	case rep.Ads > 0:
		catalog = HumanInt(float64(rep.Ads)) + " ads"
	}
	hit := "–"
	if rep.Cache != nil {
		hit = fmt.Sprintf("%.3f", rep.Cache.HitRatio)
	}
	hello, ratio, helloLat := "–", "–", "–"
	if rep.Baseline > 0 {
		hello, ratio = HumanInt(rep.Baseline), fmt.Sprintf("**%.3f**", rep.Ratio)
		b := rep.BaselineLatency
		helloLat = ms(b.P50) + " / " + ms(b.P99) + " / " + ms(b.P999)
	}
	l := rep.Latency
	scenario := rep.Scenario
	if rep.ServeFlags != "" {
		scenario += " (`" + rep.ServeFlags + "`)"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d of %s |\n", scenario, catalog, load,
		HumanInt(rep.ReqPerSec), hello, ratio, ms(l.P50), ms(l.P99), ms(l.P999), helloLat, hit, rep.Errors, HumanInt(float64(rep.Requests)))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// WriteTable writes the human summary: the set-up, one line per run, the
// medians, and the errors (loudly) if any.
func (rep *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "marquee bench: scenario %s against %s, %d connections, %gs a run\n",
		rep.Scenario, rep.Target, rep.Conns, rep.Duration)
	fmt.Fprintf(w, "machine: %d × %s, GOMAXPROCS %d, %s %s\n\n",
		rep.Machine.Cores, rep.Machine.CPU, rep.Machine.GOMAXPROCS, rep.Machine.Go, rep.Machine.OS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tserver\tmode\treq/s\tp50\tp90\tp99\tp99.9\tmax\terrors\tbody B\tCPU µs/req\t")
	for _, r := range rep.Runs {
		if r.Kind == "warmup" {
			continue
		}
		mode := "closed"
		if r.Rate > 0 {
			mode = "open " + HumanInt(r.Rate) + "/s"
		}
		round := strconv.Itoa(r.Round)
		if r.Kind == "max" {
			round = "max"
		}
		l := r.Latency
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.0f\t%.1f\t\n", round, r.Server, mode,
			HumanInt(r.ReqPerSec), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max), r.Errors, r.AvgBody, r.CPUPerReq)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(w, "target: %s req/s (median)\n", HumanInt(rep.ReqPerSec))
	if rep.Baseline > 0 {
		fmt.Fprintf(w, "hello-world: %s req/s (median); target/hello-world = %.3f (median of the per-round ratios)\n",
			HumanInt(rep.Baseline), rep.Ratio)
		fmt.Fprintf(w, "p99 target/hello-world = %.2f (median of the per-round ratios)\n", rep.P99Ratio)
	}
	if c := rep.Cache; c != nil {
		fmt.Fprintf(w, "%s cache: hit ratio %.3f over the measured runs (%s hits, %s misses)\n",
			c.Name, c.HitRatio, HumanInt(c.Hits), HumanInt(c.Misses))
	}
	if rep.Errors == 0 {
		fmt.Fprintf(w, "errors: none in %s requests\n", HumanInt(float64(rep.Requests)))
		return
	}
	fmt.Fprintf(w, "\n!!! ERRORS: %s of %s requests to the target failed (%.3f%%):",
		HumanInt(float64(rep.Errors)), HumanInt(float64(rep.Requests)), 100*rep.ErrorRate)
	totals := map[string]uint64{}
	for _, r := range rep.Runs {
		if r.Server == "target" && r.Kind == "measure" {
			for k, n := range r.Status {
				totals["status "+k] += n
			}
			for k, n := range r.Socket {
				totals[k] += n
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(totals)) {
		fmt.Fprintf(w, " %s×%d", k, totals[k])
	}
	fmt.Fprintln(w)
}

// ms formats microseconds as milliseconds.
func ms(us float64) string { return strconv.FormatFloat(us/1000, 'f', 2, 64) + "ms" }

// HumanInt formats a number rounded to an integer with thousands separators.
func HumanInt(f float64) string {
	s := strconv.FormatInt(int64(f+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
