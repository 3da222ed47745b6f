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
	"slices"
	"strings"
	"time"

	"marquee/geoip"
	"marquee/reportmail"

	"marquee"

	"github.com/prometheus/client_golang/prometheus"

	"marquee/cache"
	"marquee/clickhouse"
	"marquee/collector"
	"marquee/objstore"
	"marquee/reports"
	"marquee/store"
	"marquee/streams"
	"marquee/streams/kafka"
	"marquee/streams/natsjs"
)

// eventsConfig is the event collector's part of marquee serve's flags.
type eventsConfig struct {
	codec          string
	rotateMB       int
	rotateAge      time.Duration
	flush          time.Duration
	durable        bool
	spoolMaxMB     int
	minFree        string
	minFreeBytes   int64 // minFree, parsed by parse: 0 the default, -1 off
	instance       string
	trustedProxies string
	proxies        []netip.Prefix // trustedProxies, parsed by parse
	s3             objstore.S3Config
	kafka, nats    string       // -events-kafka, -events-nats
	analytics      string       // -analytics: a ClickHouse DSN
	streams        []streamSpec // kafka, nats and analytics, parsed by parse
	// counting is how -analytics reads what reports count of an event
	// (the Tally's GeoIP, report keys and resolver), set before open;
	// nil stores its report columns empty.
	counting func() (*reports.Classifier, reports.Resolver)
}

// streamSpec is a parsed -events-kafka, -events-nats or -analytics: the
// broker's own options, and the forwarder's (key, backlog, batch).
type streamSpec struct {
	name    string
	broker  map[string]string
	key     string
	backlog int64
	batch   int
	linger  time.Duration
}

func (c *eventsConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.codec, "events-codec", "lz4", "event file encoding: lz4, zstd or none")
	fs.IntVar(&c.rotateMB, "events-rotate-mb", 64, "finish an event file after this many MiB of NDJSON")
	fs.DurationVar(&c.rotateAge, "events-rotate-age", time.Minute, "finish an event file after this long")
	fs.DurationVar(&c.flush, "events-flush", 200*time.Millisecond, "accepted events reach their file within this long (what a crash can lose outside -events-durable)")
	fs.BoolVar(&c.durable, "events-durable", false, "acknowledge an event only once it is written to its file (survives kill -9)")
	fs.IntVar(&c.spoolMaxMB, "events-spool-max-mb", 1024, "MiB of event files awaiting upload beyond which events get 503")
	fs.StringVar(&c.minFree, "events-min-free", "", "free space the event spool's filesystem keeps: below it events get 503 (bytes, with a unit: 512MiB; default 1GiB or 5% of the filesystem, whichever is smaller; off to disable)")
	fs.StringVar(&c.instance, "instance", "", "this instance's name in event file names (default: generated once, kept in <data>/instance)")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", "", "comma-separated CIDRs whose X-Forwarded-For is believed for an event's ip")
	fs.StringVar(&c.s3.URL, "events-s3", "", "ship finished event files to s3://bucket/prefix (default: keep them under <data>/events)")
	fs.StringVar(&c.s3.Endpoint, "events-s3-endpoint", "", "S3 endpoint host[:port] (default s3.amazonaws.com)")
	fs.StringVar(&c.s3.Region, "events-s3-region", "", "S3 region")
	fs.StringVar(&c.s3.AccessKey, "events-s3-access-key", "", "S3 access key")
	fs.StringVar(&c.s3.SecretKey, "events-s3-secret-key", "", "S3 secret key")
	fs.BoolVar(&c.s3.Insecure, "events-s3-insecure", false, "talk plain HTTP to the S3 endpoint")
	fs.StringVar(&c.kafka, "events-kafka", "", "also publish every event to Kafka: brokers=HOST:PORT[,HOST:PORT…],topic=NAME, "+
		"and optionally key=ad|link|user, compression=lz4|zstd|snappy|gzip|none, create=true, tls=true, tls-ca=FILE, "+
		"tls-server-name=NAME, sasl=plain|scram-sha-256|scram-sha-512, user=U, password=P, backlog=256MiB (docs/operations.md#streams)")
	fs.StringVar(&c.nats, "events-nats", "", "also publish every event to NATS JetStream: url=nats://HOST:PORT,subject=NAME, "+
		"and optionally stream=NAME, create=true (create the stream if absent), message-bytes=65536 (NDJSON runs; 0: one event a message), "+
		"key=ad|link|user, backlog=256MiB (docs/operations.md#streams)")
	fs.StringVar(&c.analytics, "analytics", "", "also keep every event in ClickHouse, inserted from the event files, each once, and answer every report from it: clickhouse://[user[:password]@]host[:8123]/database (docs/analytics.md)")
}

// parseStreams parses -events-kafka and -events-nats.
func (c *eventsConfig) parseStreams() error {
	c.streams = nil
	for _, s := range []struct {
		name, flag, value string
		known             []string
	}{{"kafka", "-events-kafka", c.kafka, kafka.Options}, {"nats", "-events-nats", c.nats, natsjs.Options}} {
		if s.value == "" {
			continue
		}
		opts, err := streams.ParseOptions(s.flag, s.value, append([]string{"key", "backlog"}, s.known...)...)
		if err != nil {
			return err
		}
		spec := streamSpec{name: s.name, key: opts["key"], broker: opts}
		if spec.key != "" && !slices.Contains(streams.Keys, spec.key) {
			return fmt.Errorf("%s: key=%q: want one of %s", s.flag, spec.key, strings.Join(streams.Keys, ", "))
		}
		if b := opts["backlog"]; b != "" {
			if spec.backlog, err = parseBytes(b); err != nil || spec.backlog < 1 {
				return fmt.Errorf("%s: backlog=%q: want bytes with a unit (256MiB, 1GB)", s.flag, b)
			}
		}
		delete(opts, "key")
		delete(opts, "backlog")
		c.streams = append(c.streams, spec)
	}
	if c.analytics != "" {
		if _, err := clickhouse.Open(c.analytics); err != nil {
			return err
		}
		if c.instance != "" && !clickhouse.SafeName(c.instance) {
			return fmt.Errorf("-instance %q: with -analytics, letters, digits, '.', '_' and '-' only (it names the event files ClickHouse's rows point to)", c.instance)
		}
		// One event a row, at most 50,000 an insert (each stored whole), and
		// at most one insert a second unless full: ClickHouse wants few
		// large inserts (docs/analytics.md).
		c.streams = append(c.streams, streamSpec{name: "clickhouse", broker: map[string]string{"dsn": c.analytics}, batch: 50_000, linger: time.Second})
	}
	return nil
}

// openStreams opens the forwarders of the parsed streams on the spool
// at dir (before the collector: it tells them of the files it completes).
func (c *eventsConfig) openStreams(dir string, log *slog.Logger, reg prometheus.Registerer) ([]*streams.Forwarder, error) {
	var out []*streams.Forwarder
	fail := func(err error) ([]*streams.Forwarder, error) {
		for _, f := range out {
			f.Close(context.Background())
		}
		return nil, err
	}
	for _, s := range c.streams {
		var b streams.Broker
		var err error
		switch s.name {
		case "kafka":
			b, err = kafka.Open(s.broker)
		case "nats":
			b, err = natsjs.Open(s.broker)
		case "clickhouse":
			var ch *clickhouse.Client
			if ch, err = clickhouse.Open(s.broker["dsn"]); err == nil {
				if c.counting == nil {
					return fail(errors.New("-analytics: no report rule to count events by"))
				}
				cls, res := c.counting()
				b = clickhouse.NewEvents(ch, cls, res)
			}
		}
		if err != nil {
			return fail(err)
		}
		f, err := streams.Open(streams.Config{Name: s.name, Dir: dir, Key: s.key, Backlog: s.backlog, Batch: s.batch, Linger: s.linger, Log: log, Registerer: reg}, b)
		if err != nil {
			b.Close()
			return fail(err)
		}
		out = append(out, f)
	}
	return out, nil
}

// parse parses -trusted-proxies into proxies, -events-min-free and the
// streams.
func (c *eventsConfig) parse() error {
	if err := c.parseStreams(); err != nil {
		return err
	}
	switch c.minFree {
	case "":
		c.minFreeBytes = 0
	case "off":
		c.minFreeBytes = -1
	default:
		n, err := parseBytes(c.minFree)
		if err != nil || n < 1 {
			return fmt.Errorf("-events-min-free %q: want bytes with a unit (512MiB, 2GB), or off", c.minFree)
		}
		c.minFreeBytes = n
	}
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

// open starts the collector on <data>/events, counting what it writes
// into the Tally that tally returns for this instance's name and spool,
// and forwarding it to the streams (each has recovered what its broker
// missed) and to others (webhooks).
func (c *eventsConfig) open(data string, log *slog.Logger, reg prometheus.Registerer, others []collector.Forwarder,
	tally func(instance, dir string) (collector.Tally, error)) (*collector.Collector, []*streams.Forwarder, error) {
	if c.rotateMB < 1 || c.spoolMaxMB < 1 || c.rotateAge <= 0 || c.flush <= 0 {
		return nil, nil, errors.New("-events-rotate-mb, -events-spool-max-mb, -events-rotate-age and -events-flush must be positive")
	}
	instance, err := instanceName(c.instance, data)
	if err != nil {
		return nil, nil, err
	}
	cfg := collector.Config{
		Dir: filepath.Join(data, "events"), Instance: instance, Codec: c.codec,
		RotateBytes: int64(c.rotateMB) << 20, RotateAge: c.rotateAge, FlushEvery: c.flush,
		Durable: c.durable, SpoolMax: int64(c.spoolMaxMB) << 20, MinFree: c.minFreeBytes,
	}
	if cfg.Tally, err = tally(instance, cfg.Dir); err != nil {
		return nil, nil, err
	}
	if c.s3.URL != "" {
		s3, err := objstore.NewS3(c.s3)
		if err != nil {
			return nil, nil, err
		}
		cfg.Shipper = s3
	}
	fws, err := c.openStreams(cfg.Dir, log, reg)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range fws {
		cfg.Forwarders = append(cfg.Forwarders, f)
	}
	cfg.Forwarders = append(cfg.Forwarders, others...)
	col, err := collector.New(cfg, log, reg)
	if err == nil {
		for _, f := range fws {
			err = errors.Join(err, f.Recover())
		}
		if err != nil {
			col.Close(context.Background())
		}
	}
	if err != nil {
		closeStreams(context.Background(), fws, log)
		return nil, nil, err
	}
	return col, fws, nil
}

// closeStreams lets the forwarders send what they hold until ctx is done
// (the rest is sent from the files at the next start) and closes them.
func closeStreams(ctx context.Context, fws []*streams.Forwarder, log *slog.Logger) {
	for _, f := range fws {
		if err := f.Close(ctx); err != nil {
			log.Warn("event stream closed with an error; the next start sends from the files what its broker lacks", "stream", f.Name(), "err", err)
		}
	}
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

const eventsUsage = `usage: marquee events cat [--] FILE…

Decodes event files (.ndjson.lz4, .ndjson.zst, .ndjson, and the .part of an
interrupted run) to NDJSON on standard output, in the order given.
`

// runEvents is `marquee events cat FILE…`: decode event files to NDJSON.
func runEvents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, eventsUsage, stdout)
	if err != nil {
		return err
	}
	if sub != "cat" {
		return unknownSubcommand("events", sub, "cat")
	}
	files := args[1:]
	if len(files) > 0 && files[0] == "--" {
		files = files[1:] // a file named like a flag follows
	} else if len(files) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, files[0]) {
		fmt.Fprint(stdout, eventsUsage)
		return flag.ErrHelp
	}
	if len(files) == 0 {
		return fmt.Errorf("events cat: no file given\n%s", eventsUsage)
	}
	for _, name := range files {
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

// reportsConfig is the reports' part of marquee serve's configuration.
type reportsConfig struct {
	flush           time.Duration
	pacingRefresh   time.Duration
	hourlyRetention time.Duration
	geoIP           string
	keysFlag        string
	keys            []string // -report-keys, checked
	smtp, smtpFrom  string   // -smtp, -smtp-from
	mailer          *reportmail.SMTP
	schedules       time.Duration // -report-schedules-every
}

func (c *reportsConfig) flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.flush, "reports-flush", 10*time.Second, "counted events reach the reports within this long")
	fs.DurationVar(&c.pacingRefresh, "pacing-refresh", 5*time.Second, "pacing and goals read the campaigns' verified delivery from the reports this often")
	fs.DurationVar(&c.hourlyRetention, "reports-hourly-retention", 90*24*time.Hour, "hourly report rows older than this are rolled into daily rows")
	fs.StringVar(&c.geoIP, "geoip", "", "a MaxMind-format database (GeoLite2-Country, GeoIP2-City, …): viewers' and events' countries (a City database: regions, cities, metros too); empty: the IP-to-country database Marquee vendors (third_party/ipdata, countries only); none: no GeoIP (every country ZZ)")
	reportKeysFlag(fs, &c.keysFlag)
	fs.StringVar(&c.smtp, "smtp", "", "the mail server of scheduled reports: smtp://user:pass@host:587 (STARTTLS), smtps://user:pass@host:465 (TLS), or smtp://127.0.0.1:25?tls=none (a relay on this machine); off when empty")
	fs.StringVar(&c.smtpFrom, "smtp-from", "", "the address scheduled reports are sent from (required with -smtp)")
	fs.DurationVar(&c.schedules, "report-schedules-every", time.Minute, "how often saved reports' schedules are checked for a period due")
}

// reportKeysFlag declares -report-keys (the serve's, and a rebuild's):
// the install's report keys until they are chosen in the console.
func reportKeysFlag(fs *flag.FlagSet, dst *string) {
	fs.StringVar(dst, "report-keys", "", fmt.Sprintf("up to %d key-value keys, comma-separated (e.g. section,pos), whose values reports count (by ad, campaign and placement, read with by=kv.KEY): stored as the install's report keys when none are; once chosen in the console (Reports page) or with PUT /api/v1/settings/report-keys, the stored keys win", reports.MaxReportKeys))
}

func (c *reportsConfig) parse() error {
	if c.flush <= 0 || c.pacingRefresh <= 0 || c.hourlyRetention < 48*time.Hour {
		return fmt.Errorf("-reports-flush and -pacing-refresh must be positive and -reports-hourly-retention at least 48h")
	}
	var err error
	if c.keys, err = reports.ParseReportKeys(c.keysFlag); err != nil {
		return fmt.Errorf("-report-keys: %w", err)
	}
	if c.schedules <= 0 {
		return fmt.Errorf("-report-schedules-every must be positive")
	}
	if c.smtp != "" {
		if c.mailer, err = reportmail.NewSMTP(c.smtp, c.smtpFrom, nil); err != nil {
			return err
		}
	} else if c.smtpFrom != "" {
		return fmt.Errorf("-smtp-from without -smtp: no mail server to send from")
	}
	return nil
}

// openGeoIP opens -geoip: the vendored database without one, nil for
// none.
func (c *reportsConfig) openGeoIP() (*geoip.DB, error) {
	switch c.geoIP {
	case "none":
		return nil, nil
	case "":
		return geoip.Builtin()
	}
	g, err := geoip.Open(c.geoIP)
	if err != nil {
		return nil, fmt.Errorf("-geoip: %w", err)
	}
	return g, nil
}

// rollUp moves hourly rows older than the retention (whole UTC days) into
// daily ones, and deletes the samples of requests older than forecasts
// read.
func (c *reportsConfig) rollUp(ctx context.Context, st interface {
	RollUpReports(ctx context.Context, cutoff int64) (int64, error)
	DeleteRequestSamples(ctx context.Context, before int64) (int64, error)
}, log *slog.Logger) {
	if _, err := st.DeleteRequestSamples(ctx, time.Now().Add(-reports.SampleRetention).Unix()); err != nil {
		log.Warn("reports: old samples of requests not deleted; retried in an hour", "err", err)
	}
	cutoff := time.Now().Add(-c.hourlyRetention).Unix() / 86400 * 86400
	n, err := st.RollUpReports(ctx, cutoff)
	switch {
	case err != nil:
		log.Warn("reports: hourly rows not rolled up; retried in an hour", "err", err)
	case n > 0:
		log.Info("reports: hourly rows rolled into daily ones", "rows", n)
	}
}

// resolver tells reports which ads and links exist, from look-ups whose
// KindNotFound error means "no such".
type resolver struct {
	ad        func(ctx context.Context, id int64) error
	link      func(ctx context.Context, code string) (marquee.Link, error)
	campaign  func(ctx context.Context, id int64) (marquee.Campaign, error)
	placement func(ctx context.Context, name string) (marquee.Placement, error)
}

// storeResolver answers from the store: campaigns and placements are read
// once per flush (a flush remembers what it resolved).
func storeResolver(st store.Store, ad func(ctx context.Context, id int64) error, link func(ctx context.Context, code string) (marquee.Link, error)) resolver {
	return resolver{ad: ad, link: link, campaign: st.Campaign, placement: st.Placement}
}

func (r resolver) CampaignAdvertiser(ctx context.Context, id int64) (int64, bool, error) {
	c, err := r.campaign(ctx, id)
	ok, err := found(err)
	return c.AdvertiserID, ok, err
}

func (r resolver) PlacementID(ctx context.Context, name string) (int64, bool, error) {
	p, err := r.placement(ctx, name)
	ok, err := found(err)
	return p.ID, ok, err
}

func (r resolver) AdExists(ctx context.Context, id int64) (bool, error) {
	return found(r.ad(ctx, id))
}

func (r resolver) Link(ctx context.Context, key string) (marquee.Link, bool, error) {
	l, err := r.link(ctx, key)
	ok, err := found(err)
	return l, ok, err
}

func found(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case marquee.KindOf(err) == marquee.KindNotFound:
		return false, nil
	}
	return false, err
}

// cacheResolver answers ads and links from the caches (a flood of
// unknown ids reaches the store once per id, then the cached miss
// answers), campaigns and placements from st.
func cacheResolver(st store.Store, ads *cache.Cache[int64, []byte], links *cache.Cache[string, marquee.Link]) resolver {
	return storeResolver(st, func(ctx context.Context, id int64) error { _, err := ads.Get(ctx, id); return err }, links.Get)
}

// runReports is `marquee reports rebuild`: recompute a range of this data
// dir's reports from its event files.
const reportsUsage = `usage: marquee reports rebuild -from T -to T [-data DIR] [-db DB]

Recomputes whole UTC days of a data directory's reports from its event
files, with that instance stopped (see marquee reports rebuild -h).
`

func runReports(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, reportsUsage, stdout)
	if err != nil {
		return err
	}
	if sub != "rebuild" {
		return unknownSubcommand("reports", sub, "rebuild")
	}
	fs := newFlags("reports rebuild", "reports rebuild -from T -to T [-data DIR] [-db DB]",
		"Recomputes whole UTC days of a data directory's reports from its event files (stop that instance first).", stderr)
	data := fs.String("data", "./data", "the data directory of the instance whose reports to rebuild")
	db := fs.String("db", "", dbUsage)
	from := fs.String("from", "", "start of the range, RFC 3339 (rounded down to a UTC day)")
	to := fs.String("to", "", "end of the range, RFC 3339 (rounded up to a UTC day)")
	retention := fs.Duration("reports-hourly-retention", 90*24*time.Hour, "as the server's: older hours are in daily rows and cannot be rebuilt")
	var keysFlag string
	reportKeysFlag(fs, &keysFlag)
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	f, errF := time.Parse(time.RFC3339Nano, *from)
	t, errT := time.Parse(time.RFC3339Nano, *to)
	switch {
	case errF != nil || errT != nil:
		return errors.New("-from and -to must be RFC 3339 timestamps")
	case !f.Before(t):
		return errors.New("-from must be before -to")
	case f.Before(time.Now().Add(-*retention)):
		return fmt.Errorf("-from %s: hours older than -reports-hourly-retention (%v) are rolled into daily rows and cannot be rebuilt", *from, *retention)
	}
	start, end := f.Unix()/86400*86400, (t.Unix()+86399)/86400*86400
	log := jsonLog(stderr)
	st, err := openExisting(ctx, dataDB(*data, *db), false, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	dir := filepath.Join(*data, "events")
	if parts, _ := filepath.Glob(filepath.Join(dir, "tmp", "*.part")); len(parts) > 0 {
		return fmt.Errorf("%s holds interrupted files: start and stop marquee serve on it first (it completes them)", dir)
	}
	instance, err := os.ReadFile(filepath.Join(*data, "instance"))
	if err != nil {
		return fmt.Errorf("the instance name of %s: %w", *data, err)
	}
	res := storeResolver(st, func(ctx context.Context, id int64) error { _, err := st.Ad(ctx, id); return err }, st.LinkTarget)
	flagKeys, err := reports.ParseReportKeys(keysFlag)
	if err != nil {
		return fmt.Errorf("-report-keys: %w", err)
	}
	// The install's keys, as the server counts them.
	keys := &reports.KeySet{}
	if ignored, err := keys.LoadKeys(ctx, st, flagKeys); err != nil {
		return err
	} else if ignored != "" {
		log.Warn("-report-keys is ignored: the install's report keys were chosen since", "flag", ignored, "keys", strings.Join(keys.Load(), ","))
	}
	b, err := reports.Rebuild(ctx, reports.Config{Store: st, Resolver: res, Slot: strings.TrimSpace(string(instance)), Log: log, Keys: keys},
		st, dir, start, end)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rebuilt %d report rows of %s from %s to %s\n", len(b.Rows), strings.TrimSpace(string(instance)),
		time.Unix(start, 0).UTC().Format(time.RFC3339), time.Unix(end, 0).UTC().Format(time.RFC3339))
	return nil
}

// parseBytes reads a size: a number of bytes, or one with a unit (B, KB,
// MB, GB, KiB, MiB, GiB).
func parseBytes(s string) (int64, error) {
	c, err := cache.ParseCapacity(s)
	if err != nil {
		return 0, err
	}
	if c.Bytes > 0 {
		return int64(c.Bytes), nil
	}
	return int64(c.Entries), nil
}
