package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// Scenario names a request mix and its parameters (see Paths).
type Scenario struct {
	Name      string  // "ads", "ad-by-id", "links", "events", "decisions", "vast" or "url"
	Seed      uint64  // the same seed gives the same requests
	Requests  int     // how many requests a generated scenario pre-builds
	Ads       int     // ad-by-id: ids 1–Ads
	Links     int     // links: codes of the first Links seeded links
	Users     int     // decisions, vast: user keys drawn from (1: one user, soon at every cap)
	ZipfS     float64 // ad-by-id, links: the Zipf exponent
	Path      string  // url: the one path
	PathsFile string  // url: a file of paths, one a line
	// Targeting and Campaigns shape the decisions scenario's key-values
	// (see DecisionPaths): "" none, "none", "rules", "sections".
	Targeting string
	Campaigns int
	// Bids is how many header-bidding bids each slot of the decisions
	// scenario carries (0: none).
	Bids int
}

// Keyed reports whether the scenario looks keys up through a cache (its
// requests must not repeat between runs, and its hit ratio is reported).
func (s Scenario) Keyed() bool { return s.Name == "ad-by-id" || s.Name == "links" }

// cache names the cache a keyed scenario goes through (its metrics'
// label).
func (s Scenario) cache() string {
	if s.Name == "links" {
		return "link"
	}
	return "ad"
}

// Paths returns the scenario's request paths.
func (s Scenario) Paths() ([]string, error) {
	switch s.Name {
	case "ads":
		return AdsPaths(s.Seed, s.Requests), nil
	case "ad-by-id":
		return AdByIDPaths(s.Seed, s.Requests, s.Ads, s.ZipfS)
	case "links":
		return LinkPaths(s.Seed, s.Requests, s.Links, s.ZipfS)
	case "events":
		return EventPaths(s.Seed, s.Requests, s.Ads), nil
	case "decisions":
		return DecisionPaths(s.Seed, s.Requests, s.Users, s.Targeting, s.Campaigns, s.Bids), nil
	case "vast":
		return VASTPaths(s.Seed, s.Requests, s.Users), nil
	}
	if s.Path != "" {
		return ReadPaths(strings.NewReader(s.Path))
	}
	f, err := os.Open(s.PathsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadPaths(f)
}

// KeyedRequests is how many requests a keyed scenario should pre-build
// for runs of d: enough for every run to send its own part of the trace
// at 150K req/s, between 1M and 8M (~100 bytes each).
func KeyedRequests(runs int, d time.Duration) int {
	return min(8_000_000, max(1_000_000, int(float64(runs)*d.Seconds()*150_000)))
}

// Bench is one benchmark: a scenario against a target, measured rounds
// alternating with a same-stack hello-world when Baseline is set.
type Bench struct {
	Scenario Scenario
	Target   string // base URL, http:// only
	Headers  []string
	Conns    int
	Duration time.Duration // of each run
	// Warmup is a closed-loop run against the target before measuring; it
	// also measures the body size the hello-world returns.
	Warmup  time.Duration
	Rounds  int
	Rate    float64 // open loop at this many req/s (0: closed loop)
	RatePct float64 // open loop at this fraction of a closed-loop maximum measured first
	// Baseline alternates every round with an in-process hello-world
	// answering what the scenario's responses look like.
	Baseline bool
	Timeout  time.Duration
	OK       func(status int) bool
	// Progress, if set, makes a callback for each run's samples.
	Progress func(label string, d time.Duration) func(Sample)
	// Warn receives warnings (a run that replayed another's requests).
	Warn io.Writer
}

// Runs is how many runs Bench makes against the target: the warm-up, the
// maximum of an open loop at a fraction of it, and the rounds.
func (b *Bench) Runs() int {
	runs := b.Rounds + 1
	if b.RatePct > 0 {
		runs++
	}
	return runs
}

// Run runs the benchmark on paths and fills rep's runs and summary. The
// target's runs each start their connections at their own part of the
// requests, so that no run replays what an earlier one sent (it would
// flatter a cache); for a keyed scenario the target's cache hit ratio
// over the measured runs is scraped from its /metrics.
func (b *Bench) Run(ctx context.Context, paths []string, rep *Report) error {
	u, err := url.Parse(b.Target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("target %q: want an http:// URL (https is not supported)", b.Target)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	reqs, err := BuildRequests(u.Host, paths, b.Headers)
	if err != nil {
		return err
	}
	share := len(reqs) / (b.Conns * b.Runs()) // requests a connection may send a run without repeating
	targetRuns := 0
	load := func(server, kind string, round int, addr string, reqs [][]byte, d time.Duration, rate float64) (RunReport, error) {
		label := fmt.Sprintf("%s %s %d", server, kind, round)
		offset := 0
		if server == "target" {
			offset = targetRuns * share
			targetRuns++
		}
		var progress func(Sample)
		if b.Progress != nil {
			progress = b.Progress(label, d)
		}
		cpu0 := processCPU()
		// About 40 points of throughput a run, 0.1–1 s apart.
		interval := min(time.Second, max(100*time.Millisecond, d/40))
		res, err := Run(ctx, Config{Addr: addr, Requests: reqs, Offset: offset, Conns: b.Conns, Duration: d,
			Rate: rate, Timeout: b.Timeout, OK: b.OK, Interval: interval, Progress: progress})
		if err != nil {
			return RunReport{}, fmt.Errorf("%s: %w", label, err)
		}
		if b.Scenario.Keyed() && server == "target" && res.Responses > uint64(share*b.Conns) && b.Warn != nil {
			fmt.Fprintf(b.Warn, "warning: %s sent %d requests, more than its %d-request share of the trace: "+
				"it replayed requests of other runs; raise -requests for an honest hit ratio\n", label, res.Responses, share*b.Conns)
		}
		run := NewRun(server, kind, round, rate, res, processCPU()-cpu0)
		rep.Runs = append(rep.Runs, run)
		return run, nil
	}

	avgBody := 0.0
	if b.Warmup > 0 {
		w, err := load("target", "warmup", 0, addr, reqs, b.Warmup, 0)
		if err != nil {
			return err
		}
		avgBody = w.AvgBody
	}
	var helloAddr string
	var helloReqs [][]byte
	if b.Baseline {
		if b.Warmup == 0 {
			return errors.New("a baseline needs a warm-up to measure the body size to return")
		}
		stop, a, err := startHello(b.Scenario.Name, int(avgBody+0.5))
		if err != nil {
			return err
		}
		defer stop()
		helloAddr = a
		if helloReqs, err = BuildRequests(a, paths, b.Headers); err != nil {
			return err
		}
	}
	rate := b.Rate
	if b.RatePct > 0 {
		m, err := load("target", "max", 0, addr, reqs, b.Duration, 0)
		if err != nil {
			return err
		}
		rate = b.RatePct * m.ReqPerSec
	}
	var cache0 CacheStats
	if b.Scenario.Keyed() {
		if cache0, err = scrapeCache(b.Target, b.Scenario.cache()); err != nil {
			return err
		}
	}
	for round := 1; round <= b.Rounds; round++ {
		if b.Baseline {
			if _, err := load("hello", "measure", round, helloAddr, helloReqs, b.Duration, rate); err != nil {
				return err
			}
		}
		if _, err := load("target", "measure", round, addr, reqs, b.Duration, rate); err != nil {
			return err
		}
	}
	if b.Scenario.Keyed() {
		c, err := scrapeCache(b.Target, b.Scenario.cache())
		if err != nil {
			return err
		}
		c.Hits, c.Misses = c.Hits-cache0.Hits, c.Misses-cache0.Misses
		if c.Hits+c.Misses > 0 {
			c.HitRatio = c.Hits / (c.Hits + c.Misses)
		}
		rep.Cache = &c
	}
	rep.Summarise()
	return nil
}

// startHello serves the hello-world baseline on a loopback port: a body of
// size bytes, or 204 No Content for size 0 (as the event beacon answers);
// for the links scenario, a 302 to a URL as long as a seeded link's.
func startHello(scenario string, size int) (stop func(), addr string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	var h Hello
	switch {
	case scenario == "links":
		h.Location = []byte("https://example.com/p/500000")
	case size > 0:
		h.Body = HelloBody(size)
	}
	hs := HelloServer(h)
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(ln) }()
	return func() { hs.Shutdown(); <-done }, ln.Addr().String(), nil
}

// scrapeCache reads a cache's hits and misses from the target's /metrics.
func scrapeCache(target, name string) (CacheStats, error) {
	c := CacheStats{Name: name}
	status, body, err := fasthttp.Get(nil, target+"/metrics")
	if err != nil || status != fasthttp.StatusOK {
		return c, fmt.Errorf("scrape %s/metrics for the cache hit ratio: status %d, %v", target, status, err)
	}
	label := `{cache="` + name + `"} `
	found := 0
	for line := range strings.Lines(string(body)) {
		for metric, dst := range map[string]*float64{"marquee_cache_hits_total": &c.Hits, "marquee_cache_misses_total": &c.Misses} {
			if v, ok := strings.CutPrefix(line, metric+label); ok {
				if *dst, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
					return c, fmt.Errorf("scrape %s: %q: %w", target, line, err)
				}
				found++
			}
		}
	}
	if found != 2 {
		return c, fmt.Errorf("%s/metrics has no marquee_cache_hits_total and misses_total for cache %q", target, name)
	}
	return c, nil
}

// ParseStatusSet parses "200-299,301" into a membership test.
func ParseStatusSet(s string) (func(int) bool, error) {
	var in [600]bool
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 100 || b > 599 || a > b {
			return nil, fmt.Errorf("-ok-status %q: want codes or ranges within 100-599", s)
		}
		for code := a; code <= b; code++ {
			in[code] = true
		}
	}
	return func(code int) bool { return code >= 0 && code < len(in) && in[code] }, nil
}

// AppendMarkdownRow appends the report's markdown row to the file name,
// writing the table header first when the file is new or empty.
func (rep *Report) AppendMarkdownRow(name string) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	row := rep.MarkdownRow()
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
		row = MarkdownHeader + row
	}
	if _, err := f.WriteString(row); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
