package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee/collector"
	"marquee/objstore"
)

// eventsConfig is the event collector's part of marquee serve's flags.
type eventsConfig struct {
	codec          string
	rotateMB       int
	rotateAge      time.Duration
	flush          time.Duration
	durable        bool
	spoolMaxMB     int
	instance       string
	trustedProxies string
	proxies        []netip.Prefix // trustedProxies, parsed by parse
	s3             objstore.S3Config
}

func (c *eventsConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.codec, "events-codec", "lz4", "event file encoding: lz4, zstd or none")
	fs.IntVar(&c.rotateMB, "events-rotate-mb", 64, "finish an event file after this many MiB of NDJSON")
	fs.DurationVar(&c.rotateAge, "events-rotate-age", time.Minute, "finish an event file after this long")
	fs.DurationVar(&c.flush, "events-flush", 200*time.Millisecond, "accepted events reach their file within this long (what a crash can lose outside -events-durable)")
	fs.BoolVar(&c.durable, "events-durable", false, "acknowledge an event only once it is written to its file (survives kill -9)")
	fs.IntVar(&c.spoolMaxMB, "events-spool-max-mb", 1024, "MiB of event files awaiting upload beyond which events get 503")
	fs.StringVar(&c.instance, "instance", "", "this instance's name in event file names (default: generated once, kept in <data>/instance)")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", "", "comma-separated CIDRs whose X-Forwarded-For is believed for an event's ip")
	fs.StringVar(&c.s3.URL, "events-s3", "", "ship finished event files to s3://bucket/prefix (default: keep them under <data>/events)")
	fs.StringVar(&c.s3.Endpoint, "events-s3-endpoint", "", "S3 endpoint host[:port] (default s3.amazonaws.com)")
	fs.StringVar(&c.s3.Region, "events-s3-region", "", "S3 region")
	fs.StringVar(&c.s3.AccessKey, "events-s3-access-key", "", "S3 access key")
	fs.StringVar(&c.s3.SecretKey, "events-s3-secret-key", "", "S3 secret key")
	fs.BoolVar(&c.s3.Insecure, "events-s3-insecure", false, "talk plain HTTP to the S3 endpoint")
}

// parse parses -trusted-proxies into proxies.
func (c *eventsConfig) parse() error {
	c.proxies = nil
	for s := range strings.SplitSeq(c.trustedProxies, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return fmt.Errorf("-trusted-proxies: %q is not a CIDR or an address", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.proxies = append(c.proxies, p)
	}
	return nil
}

// open starts the collector on <data>/events.
func (c *eventsConfig) open(data string, log *slog.Logger, reg prometheus.Registerer) (*collector.Collector, error) {
	if c.rotateMB < 1 || c.spoolMaxMB < 1 || c.rotateAge <= 0 || c.flush <= 0 {
		return nil, errors.New("-events-rotate-mb, -events-spool-max-mb, -events-rotate-age and -events-flush must be positive")
	}
	instance, err := instanceName(c.instance, data)
	if err != nil {
		return nil, err
	}
	cfg := collector.Config{
		Dir: filepath.Join(data, "events"), Instance: instance, Codec: c.codec,
		RotateBytes: int64(c.rotateMB) << 20, RotateAge: c.rotateAge, FlushEvery: c.flush,
		Durable: c.durable, SpoolMax: int64(c.spoolMaxMB) << 20,
	}
	if c.s3.URL != "" {
		s3, err := objstore.NewS3(c.s3)
		if err != nil {
			return nil, err
		}
		cfg.Shipper = s3
	}
	return collector.New(cfg, log, reg)
}

// instanceName returns name, or the one kept under data (generated once).
func instanceName(name, data string) (string, error) {
	if name != "" {
		if strings.ContainsAny(name, "/\\ ") {
			return "", fmt.Errorf("-instance %q: no slashes or spaces", name)
		}
		return name, nil
	}
	name, _, err := kept(data, "instance", 0o644, func() string {
		host, _ := os.Hostname()
		host = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
				return r
			}
			return -1
		}, host)
		return strings.Trim(host+"-"+randomHex(3), "-")
	})
	return name, err
}

// runEvents is `marquee events cat FILE…`: decode event files to NDJSON.
func runEvents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 || args[0] != "cat" {
		fmt.Fprintln(stderr, "usage: marquee events cat FILE…   (decodes .ndjson.lz4, .ndjson.zst, .ndjson and .part files to stdout)")
		return errors.New("want: events cat FILE…")
	}
	for _, name := range args[1:] {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := catFile(name, stdout); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func catFile(name string, w io.Writer) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := collector.NewReader(name, f)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	return err
}
