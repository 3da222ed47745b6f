package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee/fixture"
	"marquee/loadgen"
	"marquee/web"
)

// benchConfig is the validated configuration of marquee bench.
type benchConfig struct {
	bench        loadgen.Bench
	ads, links   int  // in-process: what to seed
	linkRules    bool // in-process links: with rules and destinations
	campaigns    int
	capAll       string // in-process: every campaign capped at this (seed -cap-campaigns)
	maxErrors    float64
	jsonFile     string
	mdFile       string
	dumpPaths    string
	serveArgs    []string
	writes       float64       // ad writes a second through every run
	writeToken   string        // their bearer token (in-process: generated)
	partners     int           // in-process decisions: demand partners on loopback
	partnerDelay time.Duration // how long each takes to answer
	slow         int           // trickling clients held through every run
	slowPerIP    int
	slowEvery    time.Duration
}

// headerFlags collects repeated -H flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

func parseBench(args []string, getenv func(string) string, stderr io.Writer) (benchConfig, error) {
	var c benchConfig
	b, sc := &c.bench, &c.bench.Scenario
	fs := newFlags("bench", "bench [flags]", "Loads a server (by default one started in-process) with a scenario and reports requests/s and latency; -baseline also loads a hello-world and reports the ratio.", stderr)
	fs.StringVar(&sc.Name, "scenario", "ads", "request mix: ads (mixed GET /api/v1/ad), ad-by-id (Zipf GET /api/v1/ad/{id}), links (Zipf GET /r/{code}), events (GET /e beacons), decisions (POST /api/v1/decisions of three slots; with -campaigns 1000 by default), vast (GET /vast of the video placement; -campaigns 1000 by default), url (-path or -paths)")
	fs.StringVar(&b.Target, "target", "", "base URL to load, e.g. http://127.0.0.1:8080 (default: start Marquee in-process on a temp dir, seeded with -ads)")
	fs.IntVar(&c.ads, "ads", 1000, "active ads to seed in-process; ad-by-id draws ids from 1 to this")
	fs.BoolVar(&c.linkRules, "link-rules", false, "links scenario: seed every link with 5 redirect rules and 2 weighted destinations, which the generator's requests (a desktop browser in English) meet none of")
	fs.IntVar(&c.links, "links", 100_000, "links to seed in-process (links scenario); links draws codes from the first this many seeded codes")
	fs.IntVar(&c.campaigns, "campaigns", 0, "campaigns to seed in-process (see marquee seed -campaigns): the seeded ads are put in them")
	fs.StringVar(&c.capAll, "cap-campaigns", "", "cap every seeded campaign at COUNT/WINDOW (see marquee seed -cap-campaigns; with -users 1, a user at every cap)")
	fs.StringVar(&sc.Targeting, "targeting", "", "decisions scenario: rules (every seeded campaign has a six-rule targeting tree, see marquee seed -targeting; the requests send key-values, a region and a desktop browser's User-Agent), none (the same requests, campaigns without trees: the baseline of rules), sections (campaign i targets section s<i>; each request one section); default: neither")
	fs.IntVar(&b.Conns, "c", 64, "concurrent keep-alive connections")
	fs.DurationVar(&b.Duration, "d", 10*time.Second, "duration of each run")
	fs.DurationVar(&b.Warmup, "warmup", 2*time.Second, "closed-loop warm-up against the target before measuring (also sizes the baseline's body)")
	rate := fs.String("rate", "", "open loop at this many req/s, or N% of the closed-loop maximum measured first (default: closed loop)")
	fs.IntVar(&b.Rounds, "rounds", 3, "measured runs against the target (alternating with the hello-world with -baseline)")
	fs.BoolVar(&b.Baseline, "baseline", false, "also load an in-process fasthttp hello-world returning the scenario's average body size, and report the ratio")
	fs.Uint64Var(&sc.Seed, "seed", 1, "random seed of the scenario (and of the seeded ads)")
	fs.IntVar(&c.partners, "partners", 0, "decisions scenario, in-process: demand partners on loopback the server asks for every slot (each bids; docs/demand.md)")
	fs.DurationVar(&c.partnerDelay, "partner-delay", 10*time.Millisecond, "how long each of -partners takes to answer")
	fs.IntVar(&sc.Bids, "bids", 0, "decisions scenario: header-bidding bids each slot carries (0: none; docs/benchmarks.md compares 5 with 0)")
	fs.IntVar(&sc.Users, "users", 100_000, "decisions and vast scenarios: how many user keys the requests draw from (1: one user, who soon reaches every frequency cap)")
	fs.IntVar(&sc.Requests, "requests", 10_000, "requests a generated scenario pre-builds and cycles through (for ad-by-id and links: 150K per second of every run, 1M–8M — a cache benchmark must not replay a short trace)")
	fs.Float64Var(&sc.ZipfS, "zipf-s", 1.01, "Zipf exponent of ad-by-id and links (> 1)")
	fs.StringVar(&sc.Path, "path", "", "url scenario: the one path to load")
	fs.StringVar(&sc.PathsFile, "paths", "", "url scenario: file of paths, one a line")
	var hdrs headerFlags
	fs.Var(&hdrs, "H", "extra request header \"Name: value\" (repeatable)")
	fs.DurationVar(&b.Timeout, "timeout", 5*time.Second, "per-request timeout")
	okStatus := fs.String("ok-status", "200-299", "status codes that count as success: codes and ranges, e.g. 200-299,301-308 (301-308 for the links scenario unless given)")
	fs.Float64Var(&c.maxErrors, "max-errors", 0.001, "fail (exit non-zero) when more than this fraction of requests fail")
	fs.StringVar(&c.jsonFile, "json", "", "write every figure to this JSON file")
	fs.StringVar(&c.mdFile, "md", "", "append the summary as a markdown table row to this file (header first if it is new)")
	serveFlags := fs.String("serve-flags", "", "extra flags for the in-process marquee serve, space-separated (e.g. \"-events-durable -events-codec zstd\")")
	fs.Float64Var(&c.writes, "writes", 0, "also write this many ads a second to the target through every run, as an admin client would (replacing seeded ads, or creating ads when -ads is 0)")
	fs.StringVar(&c.writeToken, "write-token", "", "bearer token (ads:write) of -writes against a -target (in-process: generated)")
	fs.IntVar(&c.slow, "slow-clients", 0, "also hold this many connections to the target through every run that trickle a request's headers a byte at a time and never finish (slowloris)")
	fs.IntVar(&c.slowPerIP, "slow-per-ip", 500, "slow clients per loopback source address (127.0.0.2, 127.0.0.3, …), below the target's -max-conns-per-ip")
	fs.DurationVar(&c.slowEvery, "slow-every", 2*time.Second, "a slow client sends one byte this often")
	fs.StringVar(&c.dumpPaths, "dump-paths", "", "write the scenario's paths to this file, one a line, and exit (for wrk or marquee hello -capture)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return c, err
	}
	b.Headers = hdrs
	sc.Ads, sc.Links = c.ads, c.links
	if (sc.Name == "decisions" || sc.Name == "vast") && !flagSet(fs, "campaigns") {
		c.campaigns = 1000
	}
	sc.Campaigns = c.campaigns
	// A desktop browser's User-Agent, unless -H sends one: the load is
	// people's traffic (a load generator's own is an HTTP library's,
	// invalid traffic that counts nothing: docs/ivt.md).
	if !slices.ContainsFunc(b.Headers, func(h string) bool { return strings.HasPrefix(strings.ToLower(h), "user-agent:") }) {
		b.Headers = append(b.Headers, "User-Agent: "+fixture.BenchUA)
	}
	if sc.Name == "links" && !flagSet(fs, "ok-status") {
		*okStatus = "301-308"
	}
	c.serveArgs = strings.Fields(*serveFlags)
	if len(c.serveArgs) > 0 && b.Target != "" {
		return c, errors.New("-serve-flags configures the in-process server: not with -target")
	}
	var problems []string
	if b.Conns < 1 {
		problems = append(problems, "-c must be ≥ 1")
	}
	if b.Duration <= 0 || b.Warmup < 0 || b.Timeout <= 0 {
		problems = append(problems, "-d and -timeout must be positive, -warmup ≥ 0")
	}
	if c.writes < 0 || c.writes > 0 && b.Target != "" && c.writeToken == "" {
		problems = append(problems, "-writes must be ≥ 0, and needs -write-token with -target")
	}
	if c.slow < 0 || c.slowPerIP < 1 || c.slowEvery <= 0 {
		problems = append(problems, "-slow-clients must be ≥ 0, -slow-per-ip ≥ 1 and -slow-every positive")
	}
	if c.partners < 0 || c.partners > 0 && (sc.Name != "decisions" || b.Target != "") || c.partnerDelay < 0 {
		problems = append(problems, "-partners must be ≥ 0, for the decisions scenario of the in-process server; -partner-delay ≥ 0")
	}
	if b.Rounds < 1 || sc.Requests < 1 {
		problems = append(problems, "-rounds and -requests must be ≥ 1")
	}
	if b.Target == "" && (c.ads < 0 || c.links < 0) {
		problems = append(problems, "-ads and -links must be ≥ 0")
	}
	if sc.Bids < 0 || sc.Bids > web.MaxBids || sc.Bids > 0 && sc.Name != "decisions" {
		problems = append(problems, fmt.Sprintf("-bids: want 0 to %d, for the decisions scenario", web.MaxBids))
	}
	switch sc.Targeting {
	case "", "none", fixture.TargetingRules, fixture.TargetingSections:
		if sc.Targeting != "" && sc.Name != "decisions" {
			problems = append(problems, "-targeting shapes the decisions scenario only")
		}
	default:
		problems = append(problems, fmt.Sprintf("-targeting %q: want rules, none or sections", sc.Targeting))
	}
	switch sc.Name {
	case "ads", "ad-by-id", "links", "events", "decisions", "vast":
	case "url":
		if (sc.Path == "") == (sc.PathsFile == "") {
			problems = append(problems, "-scenario url needs exactly one of -path and -paths")
		}
	default:
		problems = append(problems, fmt.Sprintf("-scenario %q: want ads, ad-by-id, links, events, decisions, vast or url", sc.Name))
	}
	if *rate != "" {
		if pct, ok := strings.CutSuffix(*rate, "%"); ok {
			v, err := strconv.ParseFloat(pct, 64)
			if err != nil || v <= 0 || v > 100 {
				problems = append(problems, fmt.Sprintf("-rate %q: want a percentage in (0, 100]", *rate))
			}
			b.RatePct = v / 100
		} else if v, err := strconv.ParseFloat(*rate, 64); err != nil || v <= 0 {
			problems = append(problems, fmt.Sprintf("-rate %q: want req/s > 0 or N%%", *rate))
		} else {
			b.Rate = v
		}
	}
	ok, err := loadgen.ParseStatusSet(*okStatus)
	if err != nil {
		problems = append(problems, err.Error())
	}
	b.OK = ok
	if sc.Keyed() && !flagSet(fs, "requests") {
		sc.Requests = loadgen.KeyedRequests(b.Runs(), b.Duration)
	}
	if len(problems) > 0 {
		return c, errors.New(strings.Join(problems, "; "))
	}
	return c, nil
}

// flagSet reports whether the flag was given (on the command line or in
// the environment: parseFlags sets both).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// runBench loads a target (by default an in-process Marquee) with a
// scenario and reports what it measured. Shutdown order: the load stops,
// then the hello-world, then the in-process server.
func runBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseBench(args, getenv, stderr)
	if err != nil {
		return err
	}
	b := cfg.bench
	paths, err := b.Scenario.Paths()
	if err != nil {
		return err
	}
	if cfg.dumpPaths != "" {
		return os.WriteFile(cfg.dumpPaths, []byte(strings.Join(paths, "\n")+"\n"), 0o644)
	}
	rep := &loadgen.Report{
		Command: "marquee bench " + strings.Join(args, " "), Scenario: b.Scenario.Name, Target: b.Target,
		Conns: b.Conns, Duration: b.Duration.Seconds(), Seed: b.Scenario.Seed, Distinct: len(paths),
		Machine: loadgen.ThisMachine(), StartedAt: time.Now().UTC().Format(time.RFC3339),
	}
	if b.Target == "" {
		if cfg.writes > 0 {
			cfg.writeToken = randomHex(16)
			cfg.serveArgs = append(cfg.serveArgs, "-admin-token", cfg.writeToken)
		}
		stop, addr, err := startInProcess(ctx, cfg, stderr)
		if err != nil {
			return err
		}
		defer stop()
		b.Target = "http://" + addr
		rep.Ads = cfg.ads
		if b.Scenario.Name == "links" {
			rep.Ads, rep.Links = 0, cfg.links
		}
		rep.Target = "in-process Marquee"
		rep.ServeFlags = strings.Join(cfg.serveArgs, " ")
	}
	b.Progress, b.Warn = liveProgress(stderr), stderr
	var writer *loadgen.AdWriter
	if cfg.writes > 0 {
		writer = &loadgen.AdWriter{Target: b.Target, Token: cfg.writeToken, PerSec: cfg.writes, Ads: rep.Ads}
		wctx, stopWrites := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { writer.Run(wctx); close(done) }()
		defer func() { stopWrites(); <-done }()
	}
	var slow *loadgen.SlowClients
	if cfg.slow > 0 {
		if slow, err = loadgen.NewSlowClients(b.Target, cfg.slow, cfg.slowPerIP, cfg.slowEvery); err != nil {
			return err
		}
		sctx, stopSlow := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { slow.Run(sctx); close(done) }()
		defer func() { stopSlow(); <-done }()
		for i := 0; i < 100 && slow.Open.Load() < int64(cfg.slow)*9/10; i++ { // let them connect
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err := b.Run(ctx, paths, rep); err != nil {
		return err
	}
	rep.WriteTable(stdout)
	if slow != nil {
		fmt.Fprintf(stdout, "slow clients: %d open at the end of %d, %d cut by the server and reopened, %d dials failed\n",
			slow.Open.Load(), cfg.slow, slow.Cut.Load(), slow.Failed.Load())
	}
	if writer != nil {
		fmt.Fprintf(stdout, "ad writes: %d at %g/s through the runs, %d failed\n", writer.Sent.Load(), cfg.writes, writer.Failed.Load())
		if writer.Failed.Load() > 0 {
			return fmt.Errorf("%d of %d ad writes failed", writer.Failed.Load(), writer.Sent.Load())
		}
	}
	if cfg.jsonFile != "" {
		j, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.jsonFile, append(j, '\n'), 0o644); err != nil {
			return err
		}
	}
	if cfg.mdFile != "" {
		if err := rep.AppendMarkdownRow(cfg.mdFile); err != nil {
			return err
		}
	}
	if rep.ErrorRate > cfg.maxErrors || rep.Requests == 0 {
		return fmt.Errorf("%d of %d requests failed (%.3f%%), more than -max-errors %.3f%%",
			rep.Errors, rep.Requests, 100*rep.ErrorRate, 100*cfg.maxErrors)
	}
	return nil
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
	seedArgs := []string{"-data", dir, "-ads", strconv.Itoa(cfg.ads), "-seed", strconv.FormatUint(cfg.bench.Scenario.Seed, 10),
		"-scheduled", "0", "-expired", "0"}
	if cfg.bench.Scenario.Name == "links" {
		seedArgs = append(seedArgs, "-links", strconv.Itoa(cfg.links))
		if cfg.linkRules {
			seedArgs = append(seedArgs, "-link-rules")
		}
	}
	if cfg.campaigns > 0 {
		seedArgs = append(seedArgs, "-campaigns", strconv.Itoa(cfg.campaigns))
	}
	if cfg.capAll != "" {
		seedArgs = append(seedArgs, "-cap-campaigns", cfg.capAll)
	}
	if t := cfg.bench.Scenario.Targeting; t == fixture.TargetingRules || t == fixture.TargetingSections {
		seedArgs = append(seedArgs, "-targeting", t)
	}
	if err := runSeed(ctx, seedArgs, noEnv, io.Discard, stderr); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	// The seed leaves up to gigabytes of dirty pages that the kernel would
	// write back during the measured runs, stalling the server now and
	// then (at 1,000,000 ads: p99 5× the hello-world's, against 1.5× for
	// a server started after the disk was in sync); and its garbage in
	// this process's heap.
	stopBuyers := func() {}
	if cfg.partners > 0 {
		addrs, stop, err := fakeBuyers(cfg.partners, cfg.partnerDelay, cfg.bench.Scenario.Seed, stderr)
		if err == nil {
			stopBuyers = stop
			err = addPartners(ctx, dataDB(dir, ""), addrs, stderr)
		}
		if err != nil {
			stopBuyers()
			os.RemoveAll(dir)
			return nil, "", fmt.Errorf("partners: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		stopBuyers()
		os.RemoveAll(dir)
		return nil, "", err
	}
	runtime.GC()
	// One load generator is one address and a few users, far past any
	// velocity threshold: the rule is off unless -serve-flags turns it on.
	scfg, err := parseServe(append([]string{"-addr", "127.0.0.1:0", "-data", dir, "-ivt-user-events", "-1", "-ivt-address-events", "-1", "-ivt-campaign-clicks", "-1", "-ivt-max-click-rate", "-1"}, cfg.serveArgs...), noEnv, stderr)
	if err != nil {
		stopBuyers()
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
		return func() { cancel(); <-served; stopBuyers(); os.RemoveAll(dir) }, a.String(), nil
	case err := <-served:
		cancel()
		stopBuyers()
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("in-process server: %w", err)
	}
}

// syncDir flushes every file under dir to disk.
func syncDir(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}

// liveProgress returns, for a terminal, a factory of progress callbacks that
// redraw one status line; otherwise nil (quiet).
func liveProgress(stderr io.Writer) func(label string, d time.Duration) func(loadgen.Sample) {
	if !isTerminal(stderr) {
		return nil
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
