package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee"
	"marquee/feed"
	"marquee/index"
	"marquee/store/postgres"
	"marquee/store/sqlite"
	"marquee/web"
)

// serveConfig is the validated configuration of marquee serve.
type serveConfig struct {
	addr          string
	data          string
	db            string
	adminToken    string
	insecureAdmin bool
	compactEvery  time.Duration
	shutdownWait  time.Duration
	pprofAddr     string
	poll          time.Duration
	gapWait       time.Duration
	retention     time.Duration
	adCache       int
	events        eventsConfig
}

func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", ":8080", "listen address")
	fs.StringVar(&c.data, "data", "./data", "data directory (SQLite file, admin token)")
	fs.StringVar(&c.db, "db", "", "database: a SQLite file path (default <data>/marquee.db) or a postgres:// URL")
	fs.StringVar(&c.adminToken, "admin-token", "", "bearer token of admin routes (default: generated once, kept in <data>/admin-token)")
	fs.BoolVar(&c.insecureAdmin, "insecure-admin", false, "serve admin routes without a token (testing only)")
	fs.DurationVar(&c.compactEvery, "compact-every", time.Minute, "expired ads are dropped from memory within this long")
	fs.DurationVar(&c.shutdownWait, "shutdown-timeout", 10*time.Second, "how long shutdown waits for in-flight requests")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "", "serve net/http/pprof on this address (off when empty; keep it private)")
	fs.DurationVar(&c.poll, "poll", time.Second, "read the changelog at least this often (PostgreSQL also wakes on NOTIFY)")
	fs.DurationVar(&c.gapWait, "gap-wait", 10*time.Second, "reload when a hole in changelog seqs stays open this long")
	fs.DurationVar(&c.retention, "changelog-retention", 24*time.Hour, "changelog entries older than this are trimmed")
	fs.IntVar(&c.adCache, "ad-cache", 100_000, "ads kept in the cache of GET /api/v1/ad/{id}")
	c.events.flags(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return c, err
	}
	if c.db == "" {
		c.db = filepath.Join(c.data, "marquee.db")
	}
	if strings.Contains(c.db, "://") && !strings.HasPrefix(c.db, "postgres://") && !strings.HasPrefix(c.db, "postgresql://") {
		return c, fmt.Errorf("-db %q: want a SQLite file path or a postgres:// URL", c.db)
	}
	if c.compactEvery <= 0 || c.poll <= 0 || c.gapWait <= 0 || c.retention <= 0 {
		return c, fmt.Errorf("-compact-every, -poll, -gap-wait and -changelog-retention must be positive")
	}
	if c.adCache < 1 {
		return c, fmt.Errorf("-ad-cache must be ≥ 1, got %d", c.adCache)
	}
	if err := c.events.parse(); err != nil {
		return c, err
	}
	return c, nil
}

// runServe runs the server until ctx is done. Shutdown order: stop
// accepting and finish in-flight requests, write every accepted event and
// finish the files (uploads until the timeout), stop the changelog feed and
// the index's refresher, close the store.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, getenv, stderr)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, slog.New(slog.NewJSONHandler(stderr, nil)), nil)
}

// serve runs the server of cfg until ctx is done, calling ready (if not
// nil) with the listening address once requests are answered.
func serve(ctx context.Context, cfg serveConfig, log *slog.Logger, ready func(net.Addr)) error {
	token, err := adminToken(cfg, log)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg.db)
	if err != nil {
		return err
	}
	defer st.Close()

	reg := prometheus.NewRegistry()
	ix := index.New(time.Now)
	var cache *web.AdCache
	fd := feed.New(st, ix, log, reg, feed.Config{Poll: cfg.poll, GapWait: cfg.gapWait, Retention: cfg.retention,
		OnChange: func(ids []int64) {
			if cache != nil {
				cache.Invalidate(ids)
			}
		}})
	start := time.Now()
	if err := fd.Load(ctx); err != nil {
		return err
	}
	cache = web.NewAdCache(st, cfg.adCache)
	// Loading a large catalog leaves hundreds of MB of decoded rows behind;
	// hand them back to the OS now rather than when the scavenger gets to it.
	debug.FreeOSMemory()
	log.Info("index loaded", "ads", ix.Snapshot().Len(), "seq", fd.Position(), "took", time.Since(start).String())

	events, err := cfg.events.open(cfg.data, log, reg)
	if err != nil {
		return err
	}
	srv := web.NewServer(web.Config{AdminToken: token, InsecureAdmin: cfg.insecureAdmin, TrustedProxies: cfg.events.proxies},
		web.Deps{Log: log, Now: time.Now, Store: st, Index: ix, Feed: fd, Cache: cache, Events: events, Registry: reg})
	hs := srv.HTTPServer()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("listening", "addr", ln.Addr().String(), "db", redact(cfg.db))

	if cfg.pprofAddr != "" {
		stopPprof, err := servePprof(cfg.pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}

	bg, stopBG := context.WithCancel(context.Background())
	var background sync.WaitGroup
	background.Go(func() { ix.Run(bg, cfg.compactEvery) })
	background.Go(func() { fd.Run(bg) })

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err = <-served:
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownWait)
		err = hs.ShutdownWithContext(sctx)
		cancel()
	}
	// Every accepted event is written and its file finished; uploads get
	// the shutdown timeout, and what is left ships at the next start.
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownWait)
	if cerr := events.Close(sctx); cerr != nil {
		log.Error("event collector: events lost at shutdown", "err", cerr)
	}
	cancel()
	stopBG()
	background.Wait()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// adminToken returns the configured token; without one it reads the token
// kept under the data dir, generating it (mode 0600, logged once) on first
// start.
func adminToken(cfg serveConfig, log *slog.Logger) (string, error) {
	if cfg.insecureAdmin {
		log.Warn("admin routes are open to anyone: -insecure-admin is set")
		return "", nil
	}
	if cfg.adminToken != "" {
		return cfg.adminToken, nil
	}
	path := filepath.Join(cfg.data, "admin-token")
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := hex.EncodeToString(raw)
	if err := os.MkdirAll(cfg.data, 0o755); err != nil {
		return "", fmt.Errorf("create data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	log.Info("generated admin token; it is shown only this once and kept in the file", "token", token, "file", path)
	return token, nil
}

// servePprof serves the runtime profiles of net/http/pprof on addr, apart
// from the public listener.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { hs.Close() }, nil
}

// store is everything serve and seed need of a store: both stores
// provide it.
type store interface {
	web.AdStore
	feed.Source
	InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error
	Close() error
}

// openStore opens PostgreSQL for a postgres:// URL, else the SQLite file.
func openStore(ctx context.Context, db string) (store, error) {
	if strings.Contains(db, "://") {
		return postgres.Open(ctx, db)
	}
	return sqlite.Open(ctx, db)
}

// redact hides the password of a database URL for logs.
func redact(db string) string {
	if u, err := url.Parse(db); err == nil && u.User != nil {
		return u.Redacted()
	}
	return db
}
