package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee/store/sqlite"
)

// Set at build time by the release script (-ldflags "-X main.version=…
// -X main.commit=… -X main.built=…"); otherwise taken from the build info
// that `go build` records.
var version, commit, built string

// buildInfo returns the version, commit and build time of this binary.
func buildInfo() (v, c, t string) {
	v, c, t = version, commit, built
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && c == "":
				c = s.Value
			case s.Key == "vcs.time" && t == "":
				t = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	}
	if t == "" {
		t = "unknown"
	}
	return v, c, t
}

// runVersion is `marquee version`.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "version", "Prints the version, commit, build time and Go version of this binary.", stderr)
	if err := parseFlags(fs, args, func(string) string { return "" }); err != nil {
		return err
	}
	v, c, t := buildInfo()
	fmt.Fprintf(stdout, "marquee %s\ncommit %s\nbuilt %s\n%s %s/%s\n", v, c, t, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildInfoGauge is marquee_build_info: always 1, with the build as labels.
func buildInfoGauge() prometheus.Collector {
	v, c, t := buildInfo()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "marquee_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": v, "commit": c, "built": t, "goversion": runtime.Version()}})
	g.Set(1)
	return g
}

// runHealthcheck is `marquee healthcheck -url …`: exit status 0 when the
// URL answers 200 within the timeout, 1 otherwise — for container
// healthchecks in an image with no shell and no curl.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("healthcheck", "healthcheck [-url U] [-timeout D]", "Exits 0 when the URL answers 200 (for container healthchecks; the image has no shell).", stderr)
	target := fs.String("url", "http://127.0.0.1:8080/readyz", "the URL that must answer 200")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *target, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d %s", *target, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(stdout, "%s\n", strings.TrimSpace(string(body)))
	return nil
}

// runBackup is `marquee backup -to FILE`: a consistent online copy of the
// SQLite store, taken while the server runs. PostgreSQL has pg_dump,
// MySQL mysqldump.
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, data, db := accessFlags("backup", "backup -to FILE", "Writes a consistent copy of the SQLite store while the server runs (PostgreSQL: pg_dump; MySQL: mysqldump).", stderr)
	to := fs.String("to", "", "the backup file to write (must not exist)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	path := dataDB(*data, *db)
	switch {
	case *to == "":
		return errors.New("backup: -to FILE is required")
	case strings.Contains(path, "://"):
		return errors.New("backup: this is for the SQLite store; back PostgreSQL up with pg_dump, MySQL and MariaDB with mysqldump or mariadb-dump (docs/operations.md)")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("backup: no store at %s: %w", path, err)
	}
	if _, err := os.Stat(*to); err == nil {
		return fmt.Errorf("backup: %s exists; choose a new file", *to)
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	if err := st.Backup(ctx, *to); err != nil {
		return err
	}
	fi, err := os.Stat(*to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes) in %s\n", path, *to, fi.Size(), time.Since(start).Round(time.Millisecond))
	return nil
}

// runRestore is `marquee restore -from FILE`: the backup becomes the data
// directory's store. It refuses to replace a store that exists unless
// -force is given (stop the server first: a running server would keep the
// old file open).
func runRestore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, data, db := accessFlags("restore", "restore -from FILE [-force]", "Makes a backup the data directory's SQLite store (stop the server first).", stderr)
	from := fs.String("from", "", "the backup file (from marquee backup)")
	force := fs.Bool("force", false, "replace an existing store (stop the server first)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	path := dataDB(*data, *db)
	if *from == "" {
		return errors.New("restore: -from FILE is required")
	}
	if _, err := os.Stat(*from); err != nil {
		return fmt.Errorf("restore: the backup %s: %w", *from, err)
	}
	if strings.Contains(path, "://") {
		return errors.New("restore: this is for the SQLite store; restore PostgreSQL with pg_restore or psql, MySQL and MariaDB with mysql or mariadb (docs/operations.md)")
	}
	if _, err := os.Stat(path); err == nil && !*force {
		return fmt.Errorf("restore: a store exists at %s; stop the server and pass -force to replace it", path)
	}
	id, err := sqlite.Restore(ctx, *from, path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// A saved index belongs to the old store (its id differs): it is
	// ignored at start, and removed here so nobody wonders.
	os.Remove(filepath.Join(*data, "index.saved"))
	out, _ := json.Marshal(map[string]string{"restored": path, "from": *from, "storeId": id})
	fmt.Fprintf(stdout, "%s\n", out)
	return nil
}
