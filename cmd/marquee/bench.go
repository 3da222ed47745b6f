package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"marquee/loadgen"
)

// benchConfig is the validated configuration of marquee bench.
type benchConfig struct {
	scenario  string
	target    string
	ads       int
	links     int
	conns     int
	duration  time.Duration
	warmup    time.Duration
	rate      float64 // open loop, req/s
	ratePct   float64 // open loop at this fraction of a measured maximum
	rounds    int
	baseline  bool
	seed      uint64
	distinct  int
	zipfS     float64
	path      string
	pathsFile string
	headers   []string
	timeout   time.Duration
	ok        func(int) bool
	maxErrors float64
	jsonFile  string
	plotFile  string
	mdFile    string
	dumpPaths string
	serveArgs []string
}

// headerFlags collects repeated -H flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

func parseBench(args []string, getenv func(string) string, stderr io.Writer) (benchConfig, error) {
	var c benchConfig
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.scenario, "scenario", "ads", "request mix: ads (mixed GET /api/v1/ad), ad-by-id (Zipf GET /api/v1/ad/{id}), links (Zipf GET /r/{code}), events (GET /e beacons), url (-path or -paths)")
	fs.StringVar(&c.target, "target", "", "base URL to load, e.g. http://127.0.0.1:8080 (default: start Marquee in-process on a temp dir, seeded with -ads)")
	fs.IntVar(&c.ads, "ads", 1000, "active ads to seed in-process; ad-by-id draws ids from 1 to this")
	fs.IntVar(&c.links, "links", 100_000, "links to seed in-process (links scenario); links draws codes from the first this many seeded codes")
	fs.IntVar(&c.conns, "c", 64, "concurrent keep-alive connections")
	fs.DurationVar(&c.duration, "d", 10*time.Second, "duration of each run")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "closed-loop warm-up against the target before measuring (also sizes the baseline's body)")
	rate := fs.String("rate", "", "open loop at this many req/s, or N% of the closed-loop maximum measured first (default: closed loop)")
	fs.IntVar(&c.rounds, "rounds", 3, "measured runs against the target (alternating with the hello-world with -baseline)")
	fs.BoolVar(&c.baseline, "baseline", false, "also load an in-process fasthttp hello-world returning the scenario's average body size, and report the ratio")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed of the scenario (and of the seeded ads)")
	fs.IntVar(&c.distinct, "requests", 10_000, "requests a generated scenario pre-builds and cycles through (for ad-by-id and links: 150K per second of every run, 1M–8M — a cache benchmark must not replay a short trace)")
	fs.Float64Var(&c.zipfS, "zipf-s", 1.01, "Zipf exponent of ad-by-id (> 1)")
	fs.StringVar(&c.path, "path", "", "url scenario: the one path to load")
	fs.StringVar(&c.pathsFile, "paths", "", "url scenario: file of paths, one a line")
	var hdrs headerFlags
	fs.Var(&hdrs, "H", "extra request header \"Name: value\" (repeatable)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "per-request timeout")
	okStatus := fs.String("ok-status", "200-299", "status codes that count as success: codes and ranges, e.g. 200-299,301-308 (default 301-308 for links)")
	fs.Float64Var(&c.maxErrors, "max-errors", 0.001, "fail (exit non-zero) when more than this fraction of requests fail")
	fs.StringVar(&c.jsonFile, "json", "", "write every figure to this JSON file")
	fs.StringVar(&c.plotFile, "plot", "", "draw throughput over time and the latency percentile curve to this .svg or .png file")
	fs.StringVar(&c.mdFile, "md", "", "append the summary as a markdown table row to this file (header first if it is new)")
	serveFlags := fs.String("serve-flags", "", "extra flags for the in-process marquee serve, space-separated (e.g. \"-events-durable -events-codec zstd\")")
	fs.StringVar(&c.dumpPaths, "dump-paths", "", "write the scenario's paths to this file, one a line, and exit (for wrk or marquee hello -capture)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return c, err
	}
	c.headers = hdrs
	if c.scenario == "links" && !flagSet(fs, "ok-status") {
		*okStatus = "301-308"
	}
	c.serveArgs = strings.Fields(*serveFlags)
	if len(c.serveArgs) > 0 && c.target != "" {
		return c, errors.New("-serve-flags configures the in-process server: not with -target")
	}
	var problems []string
	if c.conns < 1 {
		problems = append(problems, "-c must be ≥ 1")
	}
	if c.duration <= 0 || c.warmup < 0 || c.timeout <= 0 {
		problems = append(problems, "-d and -timeout must be positive, -warmup ≥ 0")
	}
	if c.rounds < 1 || c.distinct < 1 {
		problems = append(problems, "-rounds and -requests must be ≥ 1")
	}
	if c.target == "" && (c.ads < 0 || c.links < 0) {
		problems = append(problems, "-ads and -links must be ≥ 0")
	}
	switch c.scenario {
	case "ads", "ad-by-id", "links", "events":
	case "url":
		if (c.path == "") == (c.pathsFile == "") {
			problems = append(problems, "-scenario url needs exactly one of -path and -paths")
		}
	default:
		problems = append(problems, fmt.Sprintf("-scenario %q: want ads, ad-by-id, links, events or url", c.scenario))
	}
	if *rate != "" {
		if pct, ok := strings.CutSuffix(*rate, "%"); ok {
			v, err := strconv.ParseFloat(pct, 64)
			if err != nil || v <= 0 || v > 100 {
				problems = append(problems, fmt.Sprintf("-rate %q: want a percentage in (0, 100]", *rate))
			}
			c.ratePct = v / 100
		} else if v, err := strconv.ParseFloat(*rate, 64); err != nil || v <= 0 {
			problems = append(problems, fmt.Sprintf("-rate %q: want req/s > 0 or N%%", *rate))
		} else {
			c.rate = v
		}
	}
	ok, err := parseStatusSet(*okStatus)
	if err != nil {
		problems = append(problems, err.Error())
	}
	c.ok = ok
	if keyed(c.scenario) && !flagSet(fs, "requests") {
		c.distinct = keyedRequests(c)
	}
	if len(problems) > 0 {
		return c, errors.New(strings.Join(problems, "; "))
	}
	return c, nil
}

// keyedRequests is how many requests a keyed scenario pre-builds by
// default: enough for every run to send its own part of the trace at 150K
// req/s (see runBench), between 1M and 8M (~100 bytes each, in the
// process).
func keyedRequests(c benchConfig) int {
	runs := c.rounds + 1 // the warm-up
	if c.ratePct > 0 {
		runs++ // the maximum
	}
	return min(8_000_000, max(1_000_000, int(float64(runs)*c.duration.Seconds()*150_000)))
}

// keyed reports whether a scenario looks keys up through a cache.
func keyed(scenario string) bool { return scenario == "ad-by-id" || scenario == "links" }

// cacheOf names the cache a keyed scenario goes through (its metrics'
// label).
func cacheOf(scenario string) string {
	if scenario == "links" {
		return "link"
	}
	return "ad"
}

// flagSet reports whether the flag was given (on the command line or in
// the environment: parseFlags sets both).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseStatusSet parses "200-299,301" into a membership test.
func parseStatusSet(s string) (func(int) bool, error) {
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

// runBench loads a target (by default an in-process Marquee) with a
// scenario and reports what it measured. Shutdown order: the load stops,
// then the hello-world, then the in-process server.
func runBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseBench(args, getenv, stderr)
	if err != nil {
		return err
	}
	paths, err := benchPaths(cfg)
	if err != nil {
		return err
	}
	if cfg.dumpPaths != "" {
		return os.WriteFile(cfg.dumpPaths, []byte(strings.Join(paths, "\n")+"\n"), 0o644)
	}

	target := cfg.target
	if target == "" {
		stop, addr, err := startInProcess(ctx, cfg, stderr)
		if err != nil {
			return err
		}
		defer stop()
		target = "http://" + addr
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("-target %q: want an http:// URL (https is not supported)", target)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	reqs, err := loadgen.BuildRequests(u.Host, paths, cfg.headers)
	if err != nil {
		return err
	}

	rep := &loadgen.Report{
		Command: "marquee bench " + strings.Join(args, " "), Scenario: cfg.scenario, Target: target,
		Conns: cfg.conns, Duration: cfg.duration.Seconds(), Seed: cfg.seed, Distinct: len(paths),
		Machine: loadgen.ThisMachine(), StartedAt: time.Now().UTC().Format(time.RFC3339),
	}
	if cfg.target == "" {
		rep.Ads = cfg.ads
		if cfg.scenario == "links" {
			rep.Ads, rep.Links = 0, cfg.links
		}
		rep.Target = "in-process Marquee"
		rep.ServeFlags = strings.Join(cfg.serveArgs, " ")
	}
	live := liveProgress(stderr)
	// Each run against the target starts its connections at a different
	// part of the requests, so that runs do not replay what earlier runs
	// sent (it would flatter a cache). runs is how many there will be.
	runs := cfg.rounds + 1
	if cfg.ratePct > 0 {
		runs++
	}
	share := len(reqs) / (cfg.conns * runs) // requests a connection may send a run without repeating
	targetRuns := 0
	load := func(server, kind string, round int, addr string, reqs [][]byte, d time.Duration, rate float64) (loadgen.RunReport, error) {
		label := fmt.Sprintf("%s %s %d", server, kind, round)
		offset := 0
		if server == "target" {
			offset = targetRuns * share
			targetRuns++
		}
		cpu0 := processCPU()
		// About 40 points of throughput a run, 0.1–1 s apart.
		interval := min(time.Second, max(100*time.Millisecond, d/40))
		res, err := loadgen.Run(ctx, loadgen.Config{Addr: addr, Requests: reqs, Offset: offset, Conns: cfg.conns, Duration: d,
			Rate: rate, Timeout: cfg.timeout, OK: cfg.ok, Interval: interval, Progress: live(label, d)})
		if err != nil {
			return loadgen.RunReport{}, fmt.Errorf("%s: %w", label, err)
		}
		if keyed(cfg.scenario) && server == "target" && res.Responses > uint64(share*cfg.conns) {
			fmt.Fprintf(stderr, "warning: %s sent %d requests, more than its %d-request share of the trace: "+
				"it replayed requests of other runs; raise -requests for an honest hit ratio\n", label, res.Responses, share*cfg.conns)
		}
		run := loadgen.NewRun(server, kind, round, rate, res, processCPU()-cpu0)
		rep.Runs = append(rep.Runs, run)
		return run, nil
	}

	avgBody := 0.0
	if cfg.warmup > 0 {
		w, err := load("target", "warmup", 0, addr, reqs, cfg.warmup, 0)
		if err != nil {
			return err
		}
		avgBody = w.AvgBody
	}
	var helloAddr string
	var helloReqs [][]byte
	if cfg.baseline {
		if cfg.warmup == 0 {
			return errors.New("-baseline needs a -warmup to measure the body size to return")
		}
		stop, a, err := startHello(cfg.scenario, int(avgBody+0.5))
		if err != nil {
			return err
		}
		defer stop()
		helloAddr = a
		if helloReqs, err = loadgen.BuildRequests(a, paths, cfg.headers); err != nil {
			return err
		}
	}
	rate := cfg.rate
	if cfg.ratePct > 0 {
		m, err := load("target", "max", 0, addr, reqs, cfg.duration, 0)
		if err != nil {
			return err
		}
		rate = cfg.ratePct * m.ReqPerSec
	}
	var cache0 loadgen.CacheStats
	if keyed(cfg.scenario) {
		if cache0, err = scrapeCache(target, cacheOf(cfg.scenario)); err != nil {
			return err
		}
	}
	for round := 1; round <= cfg.rounds; round++ {
		if cfg.baseline {
			if _, err := load("hello", "measure", round, helloAddr, helloReqs, cfg.duration, rate); err != nil {
				return err
			}
		}
		if _, err := load("target", "measure", round, addr, reqs, cfg.duration, rate); err != nil {
			return err
		}
	}
	if keyed(cfg.scenario) {
		c, err := scrapeCache(target, cacheOf(cfg.scenario))
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
	rep.WriteTable(stdout)
	if cfg.jsonFile != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.jsonFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if cfg.plotFile != "" {
		if err := writePlot(rep, cfg.plotFile); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	if cfg.mdFile != "" {
		if err := appendRow(cfg.mdFile, rep); err != nil {
			return err
		}
	}
	if rep.ErrorRate > cfg.maxErrors || rep.Requests == 0 {
		return fmt.Errorf("%d of %d requests failed (%.3f%%), more than -max-errors %.3f%%",
			rep.Errors, rep.Requests, 100*rep.ErrorRate, 100*cfg.maxErrors)
	}
	return nil
}

// benchPaths returns the request paths of the configured scenario.
func benchPaths(cfg benchConfig) ([]string, error) {
	switch cfg.scenario {
	case "ads":
		return loadgen.AdsPaths(cfg.seed, cfg.distinct), nil
	case "ad-by-id":
		return loadgen.AdByIDPaths(cfg.seed, cfg.distinct, cfg.ads, cfg.zipfS)
	case "links":
		return loadgen.LinkPaths(cfg.seed, cfg.distinct, cfg.links, cfg.zipfS)
	case "events":
		return loadgen.EventPaths(cfg.seed, cfg.distinct), nil
	}
	if cfg.path != "" {
		return loadgen.ReadPaths(strings.NewReader(cfg.path))
	}
	f, err := os.Open(cfg.pathsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return loadgen.ReadPaths(f)
}

// startInProcess seeds a temporary data dir with cfg.ads active ads and
// serves it on a loopback port. stop shuts the server down and removes the
// directory.
func startInProcess(ctx context.Context, cfg benchConfig, stderr io.Writer) (stop func(), addr string, err error) {
	dir, err := os.MkdirTemp("", "marquee-bench-")
	if err != nil {
		return nil, "", err
	}
	noEnv := func(string) string { return "" } // MARQUEE_* of a real server must not leak in
	seedArgs := []string{"-data", dir, "-ads", strconv.Itoa(cfg.ads), "-seed", strconv.FormatUint(cfg.seed, 10),
		"-scheduled", "0", "-expired", "0"}
	if cfg.scenario == "links" {
		seedArgs = append(seedArgs, "-links", strconv.Itoa(cfg.links))
	}
	if err := runSeed(ctx, seedArgs, noEnv, io.Discard, stderr); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	scfg, err := parseServe(append([]string{"-addr", "127.0.0.1:0", "-data", dir}, cfg.serveArgs...), noEnv, stderr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	sctx, cancel := context.WithCancel(ctx)
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	go func() { served <- serve(sctx, scfg, log, func(a net.Addr) { ready <- a }) }()
	select {
	case a := <-ready:
		return func() { cancel(); <-served; os.RemoveAll(dir) }, a.String(), nil
	case err := <-served:
		cancel()
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("in-process server: %w", err)
	}
}

// startHello serves the hello-world baseline on a loopback port: a body of
// size bytes, or 204 No Content for size 0 (as the event beacon answers);
// for the links scenario, a 302 to a URL as long as a seeded link's.
func startHello(scenario string, size int) (stop func(), addr string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	var h loadgen.Hello
	switch {
	case scenario == "links":
		h.Location = []byte("https://example.com/p/500000")
	case size > 0:
		h.Body = loadgen.HelloBody(size)
	}
	hs := loadgen.HelloServer(h)
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(ln) }()
	return func() { hs.Shutdown(); <-done }, ln.Addr().String(), nil
}

// scrapeCache reads a cache's hits and misses from the target's /metrics.
func scrapeCache(target, name string) (loadgen.CacheStats, error) {
	c := loadgen.CacheStats{Name: name}
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

// liveProgress returns, for a terminal, a factory of progress callbacks that
// redraw one status line; otherwise a factory of nil callbacks (quiet).
func liveProgress(stderr io.Writer) func(label string, d time.Duration) func(loadgen.Sample) {
	if !isTerminal(stderr) {
		return func(string, time.Duration) func(loadgen.Sample) { return nil }
	}
	return func(label string, d time.Duration) func(loadgen.Sample) {
		return func(s loadgen.Sample) {
			fmt.Fprintf(stderr, "\r\033[K%-22s %5.1fs/%gs  %8.0f req/s  %d errors", label, s.Elapsed.Seconds(), d.Seconds(), s.ReqPerSec, s.Errors)
			if s.Elapsed >= d {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}
	}
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func writePlot(rep *loadgen.Report, name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := rep.WritePlot(f, name); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// appendRow appends the report's markdown row to name, writing the table
// header first when the file is new or empty.
func appendRow(name string, rep *loadgen.Report) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	row := rep.MarkdownRow()
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
		row = loadgen.MarkdownHeader + row
	}
	if _, err := f.WriteString(row); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
