package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"marquee/attribution"
	"marquee/geoip"
	"marquee/ivt"
	"marquee/reportmail"
	"marquee/supply"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
	"marquee/billing"
	"marquee/cache"
	"marquee/clickhouse"
	"marquee/clicks"
	"marquee/collector"
	"marquee/console"
	"marquee/counters"
	"marquee/delivery"
	"marquee/demand"
	"marquee/feed"
	"marquee/index"
	"marquee/linkroute"
	"marquee/objstore"
	"marquee/payments"
	"marquee/privacy"
	"marquee/reports"
	serving "marquee/serve" // the package; serve is this command's function
	"marquee/store"
	"marquee/store/mysql"
	"marquee/store/postgres"
	"marquee/store/sqlite"
	"marquee/streams"
	"marquee/tracking"
	"marquee/web"
	"marquee/webhooks"
)

// serveConfig is the validated configuration of marquee serve.
type serveConfig struct {
	addr              string
	data              string
	db                string
	adminToken        string
	insecureAdmin     bool
	metricsToken      string
	cookieSecure      bool
	auditKeep         time.Duration
	accessFlush       time.Duration
	maxConns          int
	maxConnsPerIP     int
	memoryLimit       string
	readTimeout       time.Duration
	savedIndex        string
	compactEvery      time.Duration
	shutdownWait      time.Duration
	pprofAddr         string
	poll              time.Duration
	gapWait           time.Duration
	retention         time.Duration
	adCache           cache.Capacity
	linkCache         cache.Capacity
	assetCache        cache.Capacity
	trackingKey       string
	trackingPrevious  string
	webhooksHTTP      bool // -webhooks-allow-http
	webhooksPrivate   bool // -webhooks-allow-private
	demandTmax        time.Duration
	demandPrivate     bool // -demand-notices-allow-private
	trackingTTL       time.Duration
	counters          string
	capsMemory        string
	budgetSync        time.Duration
	budgetStale       time.Duration
	privacyMode       privacy.Mode // -privacy, parsed
	privacy           string
	currency          string // -currency, checked
	privacyKey        string
	tcfVendor         uint
	privacyRules      *privacy.Rules // -privacy-rules, read
	eventsRetention   time.Duration
	remnant           string
	bidding           delivery.Bidding // -bid-adjustments, checked
	clickFlush        time.Duration
	countRequests     bool            // -count-requests
	forecastSample    int             // -forecast-sample
	linkDomains       web.LinkDomains // -link-domains, -default-domain, -unknown-hosts
	reportMailDomains []string        // -report-mail-domains, lower case
	invoiceIssuer     string          // -invoice-issuer
	seller            supply.Network  // -seller-domain, -seller-name, -seller-contact, -seller-cert-id, checked
	adsTxtURL         string          // -ads-txt-url, checked
	adsTxtEvery       time.Duration   // -ads-txt-every
	adsTxtPrivate     bool            // -ads-txt-allow-private
	adsTxtEnforce     bool            // -ads-txt-enforce
	monthlyBilling    bool            // -monthly-billing
	stripe            payments.Config // -stripe-key, -stripe-api, -stripe-webhook-secret (Key "": none)
	creativeOrigin    string          // -creative-origin, checked: scheme://host[:port]
	publicURL         string          // -public-url, checked: scheme://host[:port]
	keepEmails        bool            // -events-keep-emails
	ivt               ivt.Config      // -ivt-*, the ranges read
	siteAlarm         float64         // -ivt-site-alarm (0: off)
	siteAlarmMin      int64           // -ivt-site-alarm-min
	events            eventsConfig
	reports           reportsConfig
}

func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := newFlags("serve", "serve [flags]", "Runs the server: the ad, link and event routes, the API and the console at /admin/.", stderr)
	fs.StringVar(&c.addr, "addr", ":8080", "listen address")
	fs.StringVar(&c.data, "data", "./data", "data directory (SQLite file, admin token)")
	fs.StringVar(&c.db, "db", "", dbUsage)
	fs.StringVar(&c.adminToken, "admin-token", "", "bearer token of admin routes (default: generated once, kept in <data>/admin-token)")
	fs.BoolVar(&c.insecureAdmin, "insecure-admin", false, "serve admin routes without a token (testing only)")
	fs.StringVar(&c.metricsToken, "metrics-token", "", "when set, /metrics needs Authorization: Bearer <this token> (open by default, as Prometheus expects)")
	fs.BoolVar(&c.cookieSecure, "cookie-secure", false, "mark the session cookie Secure on plain HTTP too (behind a TLS-terminating proxy)")
	fs.DurationVar(&c.auditKeep, "audit-retention", 8760*time.Hour, "audit log entries older than this are deleted")
	fs.IntVar(&c.maxConns, "max-conns", 20000, "connections served at once; more are refused (503)")
	fs.IntVar(&c.maxConnsPerIP, "max-conns-per-ip", 1000, "connections from one client IP at once (0: no limit; raise it behind a proxy that pools many)")
	fs.StringVar(&c.savedIndex, "saved-index", "", "where the index is saved at shutdown and loaded from at start, then caught up from the changelog (default <data>/index.saved; off to always load from the store)")
	fs.DurationVar(&c.readTimeout, "read-timeout", web.ReadTimeout, "a client has this long to send a request's headers and body; one that trickles them is cut off")
	fs.StringVar(&c.memoryLimit, "memory-limit", "", "soft memory limit of the Go runtime (bytes with a unit: 2GiB); default 90% of the container's cgroup limit, none without one")
	fs.DurationVar(&c.accessFlush, "access-flush", 10*time.Second, "how often when keys and sessions were last used is written (batched, never per request)")
	fs.DurationVar(&c.compactEvery, "compact-every", time.Minute, "expired ads are dropped from memory within this long")
	fs.DurationVar(&c.shutdownWait, "shutdown-timeout", 10*time.Second, "how long shutdown waits for in-flight requests")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "", "serve net/http/pprof on this address (off when empty; keep it private)")
	fs.DurationVar(&c.poll, "poll", 0, "read the changelog at least this often (default 50ms on MySQL, 1s otherwise; PostgreSQL also wakes on NOTIFY)")
	fs.DurationVar(&c.gapWait, "gap-wait", 10*time.Second, "reload when a hole in changelog seqs stays open this long")
	fs.DurationVar(&c.retention, "changelog-retention", 24*time.Hour, "changelog entries older than this are trimmed")
	adCache := fs.String("ad-cache", "100000", "capacity of the cache of GET /api/v1/ad/{id}: entries, or bytes with a unit (256MiB)")
	linkCache := fs.String("link-cache", "100000", "capacity of the cache of GET /r/{code}: entries, or bytes with a unit (256MiB)")
	fs.StringVar(&c.trackingKey, "tracking-key", "", "key that signs tracking URLs, at least 16 bytes (default: generated once, kept in <data>/tracking-key)")
	fs.StringVar(&c.trackingPrevious, "tracking-previous-key", "", "the key before -tracking-key: its URLs are still accepted while they last (rotation)")
	fs.BoolVar(&c.webhooksHTTP, "webhooks-allow-http", false, "let webhooks POST to http:// URLs (default: https only)")
	fs.BoolVar(&c.webhooksPrivate, "webhooks-allow-private", false, "let webhooks reach loopback, private and link-local addresses (default: refused, against server-side request forgery)")
	fs.DurationVar(&c.trackingTTL, "tracking-ttl", 24*time.Hour, "how long tracking URLs work")
	fs.DurationVar(&c.demandTmax, "demand-tmax", serving.DefaultTmax, "how long a decision waits for its demand partners' bids when its placement sets no tmax (docs/demand.md)")
	fs.BoolVar(&c.demandPrivate, "demand-notices-allow-private", false, "let demand partners' win, loss and billing notices reach loopback, private and link-local addresses (default: refused, against server-side request forgery)")
	fs.StringVar(&c.remnant, "remnant", delivery.RemnantWeight, "how remnant campaigns compete: weight (a lottery by weight, as every tier) or ecpm (the highest eCPM from the price wins; CPC and CPA weighed by the reports' click and conversion rates)")
	fs.StringVar(&c.privacy, "privacy", "balanced", "what events keep of visitors: balanced (truncated addresses, pseudonymous user ids), strict (as balanced, pseudonyms rotated daily, user keys only with a consent signal) or off (full addresses and ids, unless consent is withheld); docs/privacy.md")
	fs.StringVar(&c.privacyKey, "privacy-key", "", "secret of the pseudonyms of user ids, at least 16 bytes, the same on every instance (default: derived from -tracking-key or the key kept under -data)")
	bidAdjustments := fs.String("bid-adjustments", "", "header bidding: each bidder's factor on its bids' CPMs, \"appnexus=0.9,rubicon=0.85\" (none: 1)")
	fs.StringVar(&c.currency, "currency", reports.DefaultCurrency, "ISO 4217 code of every price and spend (one currency per install: change it only before anything is priced)")
	rulesFile := fs.String("privacy-rules", "", "a JSON file of activity controls: rules that deny (or allow, never past what a request's signals deny) an activity for a component under conditions (docs/privacy.md#rules)")
	fs.UintVar(&c.tcfVendor, "tcf-vendor", 0, "your IAB TCF vendor id: a TCF consent string must also give this vendor consent (0: only purpose 1 is checked)")
	fs.DurationVar(&c.eventsRetention, "events-retention", 0, "event files kept under <data>/events are deleted this long after they were written (0: kept); shipped files follow the bucket's lifecycle rule; with -analytics, ClickHouse's days past it are dropped too")
	fs.StringVar(&c.counters, "counters", "memory", "where frequency caps count: memory (exact for one instance) or redis://host:6379/0 (shared by every instance)")
	fs.StringVar(&c.capsMemory, "caps-memory", "256MiB", "with -counters memory, the most memory the users' frequency cap serves take (bytes with a unit); past it the users least likely to return are forgotten (docs/operations.md#frequency-caps)")
	assetCache := fs.String("asset-cache", "64MiB", "capacity of the cache of GET /assets/…, the creatives' images: bytes with a unit, or entries")
	fs.DurationVar(&c.clickFlush, "click-flush", 2*time.Second, "how often counted clicks are added to the store")
	fs.DurationVar(&c.budgetSync, "budget-sync", 100*time.Millisecond, "how often this instance adds its spend to the shared counters (-counters) and reads every budget's (docs/api.md#budgets)")
	fs.DurationVar(&c.budgetStale, "budget-stale", delivery.DefaultStaleAfter, "budgeted campaigns stop serving when no sync has reached the spend counters for this long (fail closed)")
	fs.IntVar(&c.forecastSample, "forecast-sample", 20, "requests kept of each placement and hour, per instance, for forecasts (0: none kept; forecasts then have no sample to read targetings from)")
	fs.BoolVar(&c.countRequests, "count-requests", true, "count each decision's slots and what became of them: requests, fill rate and why slots stay empty (false: placements' reports have no requests)")
	fs.BoolVar(&c.keepEmails, "events-keep-emails", false, "keep what looks like an email address in beacons' values as sent (default: each is written as [email]: event files must not become a list of people's addresses)")
	fs.StringVar(&c.publicURL, "public-url", "", "the server's public origin, https://ads.example.net: the head of the absolute URLs it answers (decisions' tracking and frame URLs, VAST, VMAP, invitation and payment links) whatever a request's Host says (none: each request's own)")
	fs.StringVar(&c.creativeOrigin, "creative-origin", "", "where HTML creatives and third-party tags are framed, a host of their own pointing at this server: https://creatives.example (none: this server's own origin; set it before outside advertisers' creatives run)")
	datacenters := fs.Bool("ivt-datacenters", true, "the hosting and cloud networks Marquee vendors (third_party/ipdata: AWS, Google Cloud, Azure, OVHcloud, Hetzner… by AS number) are data centres: their traffic is invalid (datacenter; docs/ivt.md#data-centres)")
	ivtRanges := fs.String("ivt-ip-ranges", "", "comma-separated files of data-centre address ranges (a CIDR prefix or an address a line, # comments): their traffic is invalid (docs/ivt.md#data-centres)")
	fs.DurationVar(&c.ivt.MinClickDelay, "ivt-min-click-delay", ivt.DefaultMinClickDelay, "a click sooner than this after its impression counted is invalid traffic (fastClick; negative: off)")
	fs.DurationVar(&c.ivt.MinConversionDelay, "ivt-min-conversion-delay", ivt.DefaultMinConversionDelay, "a conversion sooner than this after its click is invalid traffic (fastConversion; negative: off)")
	fs.IntVar(&c.ivt.UserEvents, "ivt-user-events", ivt.DefaultUserEvents, "a user's decisions and tracking events a minute (per instance) past which its traffic is invalid (velocity), and what it was billed that minute is credited (negative: off)")
	fs.IntVar(&c.ivt.AddressEvents, "ivt-address-events", ivt.DefaultAddressEvents, "an address's decisions and tracking events a minute (per instance) past which its traffic is invalid (velocity), and what it was billed that minute is credited (negative: off)")
	fs.IntVar(&c.ivt.IPv6Prefix, "ivt-ipv6-prefix", ivt.DefaultIPv6Prefix, "the leading bits of an IPv6 address that the address rules and sign-in throttles count as one client (64: a subscriber's /64; 56 where networks hand out /56s; 32 to 128)")
	fs.IntVar(&c.ivt.CampaignClicks, "ivt-campaign-clicks", ivt.DefaultCampaignClicks, "a campaign's verified clicks an hour from one address (per instance) past which its clicks are invalid (clickLimit; negative: off)")
	fs.IntVar(&c.ivt.ClickRateMin, "ivt-click-rate-min", ivt.DefaultClickRateMin, "an address's verified clicks an hour (per instance) from which its click rate is judged (negative: off)")
	fs.Float64Var(&c.siteAlarm, "ivt-site-alarm", 0, "a site whose last hour's invalid share of slots asked for is more than this (0.2: 20%), with at least -ivt-site-alarm-min of them, raises an alarm: a site.quality webhook and a badge on the site in the console (0: off; docs/ivt.md#site-quality)")
	fs.Int64Var(&c.siteAlarmMin, "ivt-site-alarm-min", supply.DefaultAlarmMinRequests, "the least slots asked for (people's and invalid) in a site's hour for -ivt-site-alarm to judge it")
	fs.Float64Var(&c.ivt.MaxClickRate, "ivt-max-click-rate", ivt.DefaultMaxClickRate, "the share of an address's verified impressions its clicks may be in an hour, once it made -ivt-click-rate-min of them: past it, its clicks are invalid (clickRate) and what its clicks billed that hour is credited (negative: off)")
	fs.BoolVar(&c.monthlyBilling, "monthly-billing", false, "an hour into each month (UTC), issue every advertiser's invoice and every site's statement for the month before (those not issued already)")
	fs.StringVar(&c.stripe.Key, "stripe-key", "", "Stripe secret API key (sk_…): prepaid advertisers top up their balances by card through Stripe Checkout (docs/api.md#prepaid-balances; none: no card payments). Best given as MARQUEE_STRIPE_KEY")
	fs.StringVar(&c.stripe.API, "stripe-api", "", "Stripe API base URL (none: Stripe's own; tests point it at stripe-mock)")
	fs.StringVar(&c.stripe.WebhookSecret, "stripe-webhook-secret", "", "signing secret (whsec_…) of the Stripe webhook endpoint that posts to /stripe/webhook; required with -stripe-key. Best given as MARQUEE_STRIPE_WEBHOOK_SECRET")
	fs.StringVar(&c.seller.Domain, "seller-domain", "", "the network's canonical domain (ads.example.net): the first field of its publishers' ads.txt lines and the asi of its schain; sellers.json is published at /sellers.json once it is set (docs/api.md#sellers-and-adstxt)")
	fs.StringVar(&c.seller.Name, "seller-name", "", "the network's business name, as buyers know it")
	fs.StringVar(&c.seller.Contact, "seller-contact", "", "sellers.json's contact_email: whom buyers ask about the network's inventory")
	fs.StringVar(&c.seller.CertID, "seller-cert-id", "", "the network's Trustworthy Accountability Group id (TAG-ID): the ads.txt lines' fourth field and sellers.json's identifiers")
	fs.StringVar(&c.adsTxtURL, "ads-txt-url", supply.DefaultAdsTxtURL, "where a site's domain's ads.txt is read, {domain} replaced by the domain (with -seller-domain)")
	fs.DurationVar(&c.adsTxtEvery, "ads-txt-every", supply.DefaultAdsTxtEvery, "how often each site's ads.txt is checked (one instance a site; each at a moment of its own within the last tenth of the period)")
	fs.BoolVar(&c.adsTxtEnforce, "ads-txt-enforce", false, "a site whose last ads.txt check found none of its domains authorising the network serves but bills nothing (invalid traffic, reason unauthorized; needs -seller-domain)")
	fs.BoolVar(&c.adsTxtPrivate, "ads-txt-allow-private", false, "let ads.txt checks reach loopback, private and link-local addresses (default: refused, against server-side request forgery)")
	fs.StringVar(&c.invoiceIssuer, "invoice-issuer", "Marquee", "who invoices and statements are issued by: your company's name, as the documents print it")
	reportMailDomains := fs.String("report-mail-domains", "", "comma-separated domains an advertiser's or a publisher's account may schedule reports to besides its own logins' addresses (none: its logins' only)")
	linkDomains := fs.String("link-domains", "", "comma-separated hosts that short links may belong to, each its own namespace of codes (go.brand.example,links.other.example)")
	defaultDomain := fs.String("default-domain", "", "the host of the default domain's links (shown in the console; a link given it is on the default domain)")
	unknownHosts := fs.String("unknown-hosts", "default", "what /r/{code} on a host that is not a link domain serves: default (the default domain's links) or 404")
	c.events.flags(fs)
	c.reports.flags(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return c, err
	}
	c.db = dataDB(c.data, c.db)
	switch c.savedIndex {
	case "":
		c.savedIndex = filepath.Join(c.data, "index.saved")
	case "off":
		c.savedIndex = ""
	}
	kind, err := dbKind(c.db)
	if err != nil {
		return c, err
	}
	pollSet := false
	fs.Visit(func(f *flag.Flag) { pollSet = pollSet || f.Name == "poll" })
	if !pollSet {
		c.poll = defaultPoll(kind)
	}
	if c.eventsRetention < 0 {
		return c, errors.New("-events-retention: want a duration ≥ 0 (0: kept)")
	}
	if c.forecastSample < 0 || c.forecastSample > reports.MaxSampleSize {
		return c, fmt.Errorf("-forecast-sample: want 0 to %d requests an hour and placement", reports.MaxSampleSize)
	}
	if c.compactEvery <= 0 || c.poll <= 0 || c.gapWait <= 0 || c.retention <= 0 || c.auditKeep <= 0 || c.accessFlush <= 0 {
		return c, fmt.Errorf("-compact-every, -poll, -gap-wait, -changelog-retention, -audit-retention and -access-flush must be positive")
	}
	if c.adCache, err = cache.ParseCapacity(*adCache); err != nil {
		return c, fmt.Errorf("-ad-cache: %w", err)
	}
	if c.assetCache, err = cache.ParseCapacity(*assetCache); err != nil {
		return c, fmt.Errorf("-asset-cache: %w", err)
	}
	if c.linkCache, err = cache.ParseCapacity(*linkCache); err != nil {
		return c, fmt.Errorf("-link-cache: %w", err)
	}
	if c.clickFlush <= 0 {
		return c, fmt.Errorf("-click-flush must be positive")
	}
	if c.budgetSync <= 0 || c.budgetStale <= c.budgetSync {
		return c, fmt.Errorf("-budget-sync must be positive and -budget-stale longer than it")
	}
	if c.linkDomains, err = web.ParseLinkDomains(*linkDomains, *defaultDomain, *unknownHosts); err != nil {
		return c, err
	}
	if c.maxConns < 1 || c.maxConnsPerIP < 0 || c.readTimeout <= 0 {
		return c, fmt.Errorf("-max-conns and -read-timeout must be positive and -max-conns-per-ip at least 0")
	}
	// The values a flag holds on its own are checked here, before
	// anything is created on disk (keys, the database and the GeoIP file
	// are checked as they are opened).
	if c.privacyMode, err = privacy.ParseMode(c.privacy); err != nil {
		return c, usageError{fmt.Errorf("-privacy: %w", err)}
	}
	if c.seller, err = c.seller.Check(); err != nil {
		return c, usageError{err}
	}
	if u, err := url.Parse(strings.ReplaceAll(c.adsTxtURL, "{domain}", "d.example")); err != nil || (u.Scheme != "https" && u.Scheme != "http") || !strings.Contains(c.adsTxtURL, "{domain}") {
		return c, usageError{fmt.Errorf("-ads-txt-url %q: want an http(s) URL with {domain} in it", c.adsTxtURL)}
	}
	if c.adsTxtEnforce && c.seller.Domain == "" {
		return c, usageError{errors.New("-ads-txt-enforce needs -seller-domain: without it no ads.txt is checked, and no site could bill")}
	}
	if c.siteAlarm < 0 || c.siteAlarm >= 1 {
		return c, usageError{fmt.Errorf("-ivt-site-alarm %v: want an invalid share from 0 (off) to below 1 (0.2: 20%%)", c.siteAlarm)}
	}
	if c.siteAlarmMin < 1 {
		return c, usageError{fmt.Errorf("-ivt-site-alarm-min %d: want 1 or more slots", c.siteAlarmMin)}
	}
	if c.adsTxtEvery < time.Minute {
		return c, usageError{fmt.Errorf("-ads-txt-every %v: want a minute or more", c.adsTxtEvery)}
	}
	if c.currency, err = reports.ParseCurrency(c.currency); err != nil {
		return c, usageError{fmt.Errorf("-currency: %w", err)}
	}
	if (c.stripe.Key == "") != (c.stripe.WebhookSecret == "") {
		return c, usageError{errors.New("-stripe-key and -stripe-webhook-secret go together: a payment is credited only by a webhook signed with the secret")}
	}
	if c.stripe.API != "" {
		if u, err := url.Parse(c.stripe.API); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return c, usageError{fmt.Errorf("-stripe-api %q: want an http(s) URL", c.stripe.API)}
		}
	}
	if *rulesFile != "" {
		r, err := privacy.ReadRules(*rulesFile)
		if err != nil {
			return c, usageError{fmt.Errorf("-privacy-rules: %w", err)}
		}
		c.privacyRules = r
	}
	if c.tcfVendor > 65535 {
		return c, usageError{fmt.Errorf("-tcf-vendor %d: want a TCF vendor id, 1-65535", c.tcfVendor)}
	}
	var files []string
	for _, f := range strings.Split(*ivtRanges, ",") {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	r, err := ivt.ReadRanges(*datacenters, files...)
	if err != nil {
		return c, usageError{fmt.Errorf("-ivt-ip-ranges: %w", err)}
	}
	c.ivt.Ranges = r
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"ivt-min-click-delay", c.ivt.MinClickDelay}, {"ivt-min-conversion-delay", c.ivt.MinConversionDelay}} {
		if f.v == 0 {
			return c, usageError{fmt.Errorf("-%s 0: want a duration, or a negative one to turn the rule off", f.name)}
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"ivt-user-events", c.ivt.UserEvents}, {"ivt-address-events", c.ivt.AddressEvents}, {"ivt-campaign-clicks", c.ivt.CampaignClicks},
		{"ivt-click-rate-min", c.ivt.ClickRateMin}} {
		if f.v == 0 {
			return c, usageError{fmt.Errorf("-%s 0: want a count, or a negative number to turn the rule off", f.name)}
		}
	}
	if c.ivt.IPv6Prefix < 32 || c.ivt.IPv6Prefix > 128 {
		return c, usageError{fmt.Errorf("-ivt-ipv6-prefix %d: want 32 to 128 bits (64: a subscriber's /64)", c.ivt.IPv6Prefix)}
	}
	if c.ivt.MaxClickRate == 0 || c.ivt.MaxClickRate > 1 {
		return c, usageError{fmt.Errorf("-ivt-max-click-rate %v: want a share of impressions above 0 and at most 1, or a negative number to turn the rule off", c.ivt.MaxClickRate)}
	}
	for _, o := range []struct {
		name, example string
		v             *string
	}{{"creative-origin", "https://creatives.example", &c.creativeOrigin}, {"public-url", "https://ads.example.net", &c.publicURL}} {
		if *o.v == "" {
			continue
		}
		u, err := url.Parse(*o.v)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
			return c, usageError{fmt.Errorf("-%s %q: want an origin such as %s (a scheme and a host, no path)", o.name, *o.v, o.example)}
		}
		*o.v = u.Scheme + "://" + strings.ToLower(u.Host)
	}
	for _, d := range strings.Split(*reportMailDomains, ",") {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			c.reportMailDomains = append(c.reportMailDomains, d)
		}
	}
	if c.bidding, err = delivery.ParseBidding(*bidAdjustments, c.currency); err != nil {
		return c, usageError{fmt.Errorf("-bid-adjustments: %w", err)}
	}
	if err := delivery.CheckRemnant(c.remnant); err != nil {
		return c, usageError{fmt.Errorf("-remnant: %w", err)}
	}
	if n, err := parseBytes(c.capsMemory); err != nil || n < 1<<20 {
		return c, fmt.Errorf("-caps-memory %q: want bytes with a unit, at least 1MiB", c.capsMemory)
	}
	if c.memoryLimit != "" {
		if n, err := parseBytes(c.memoryLimit); err != nil || n < 64<<20 {
			return c, fmt.Errorf("-memory-limit %q: want bytes with a unit, at least 64MiB", c.memoryLimit)
		}
	}
	if err := c.events.parse(); err != nil {
		return c, err
	}
	if err := c.reports.parse(); err != nil {
		return c, err
	}
	return c, nil
}

// runServe runs the server until ctx is done. Shutdown order: stop
// accepting and finish in-flight requests, flush click counts, write every
// accepted event and finish the files (uploads until the timeout), flush
// the reports' counts, stop the changelog feed, the index's refresher and
// the flush loops, close the store.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, getenv, stderr)
	if err != nil {
		return err
	}
	// An address that cannot be listened on fails before the data
	// directory, its keys and its store are made (listening itself waits
	// until the index is loaded, so that no connection waits for it).
	if ln, err := net.Listen("tcp", cfg.addr); err != nil {
		return fmt.Errorf("-addr %s: %w", cfg.addr, err)
	} else {
		ln.Close()
	}
	return serve(ctx, cfg, jsonLog(stderr), func(addr net.Addr) {
		if isTerminal(stdout) {
			if link := setupLink(cfg.data); link != "" {
				fmt.Fprintf(stdout, "\nNo user yet. Open this link within an hour to make yourself the owner:\n\n    %s\n\n", link)
			}
		}
	})
}

// serve runs the server of cfg until ctx is done, calling ready (if not
// nil) with the listening address once requests are answered. It is the
// start-up steps in their order — open, load, collect, listen, start the
// loops, serve — and then the shutdown, in the reverse order of what
// depends on what (see stop).
func serve(ctx context.Context, cfg serveConfig, log *slog.Logger, ready func(net.Addr)) error {
	setMemoryLimit(cfg.memoryLimit, memlimit.FromCgroup, log)
	n := &node{cfg: cfg, log: log, reg: prometheus.NewRegistry()}
	if cfg.countRequests {
		n.requests = reports.NewRequests()
	}
	if cfg.forecastSample > 0 {
		n.samples = reports.NewSamples(cfg.forecastSample)
	}
	n.bids = reports.NewBids()
	defer n.close()
	// pprof first, so that what an instance does before it is ready (a
	// large catalog's load) can be profiled too.
	if cfg.pprofAddr != "" {
		var err error
		if n.stopPprof, err = servePprof(cfg.pprofAddr, log); err != nil {
			return err
		}
	}
	if err := n.open(ctx); err != nil {
		return err
	}
	if err := n.load(ctx); err != nil {
		return err
	}
	if err := n.collect(ctx); err != nil {
		return err
	}
	// Pacing, eCPM and the budgets' floors from the reports before the
	// first decision: an instance that restarted with memory counters
	// never lets a budget spent before it be spent again.
	if err := n.refreshDelivered(ctx); err != nil {
		log.Warn("campaigns' delivery not read at start; pacing and budgets read it at the next -pacing-refresh", "err", err)
	}
	hs, ln, err := n.listen()
	if err != nil {
		return err
	}
	stopLoops := n.startLoops()
	n.welcome(ctx, ln.Addr())
	err = n.serveUntil(ctx, hs, ln, ready)
	n.stop(stopLoops)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// node is one running Marquee: what serve opens, step by step.
type node struct {
	cfg serveConfig
	log *slog.Logger
	reg *prometheus.Registry

	st         store.Store // open
	ix         *index.Index
	ads        *cache.Cache[int64, []byte]
	links      *cache.Cache[string, marquee.Link]
	assets     *cache.Cache[string, web.Image]
	engine     *delivery.Engine
	counters   capCounters
	money      moneyCounters // spend and touches: memory, or Redis with -counters
	touches    *attribution.Recorder
	privacy    *privacy.Policy
	signer     *tracking.Signer
	assetStore web.AssetStore
	access     *auth.Auth
	fd         *feed.Feed
	storeID    string
	ivt        *ivt.Filter     // invalid traffic's rules; velocity shared through velocity
	velocity   *counters.Redis // -counters redis://…: the velocity counts every instance shares (nil: each its own)
	kept       *counters.Redis // -counters redis://…: partners' markup and billing notices every instance reads (nil: each its own)
	counter    *clicks.Counter // load
	geo        *geoip.DB       // collect
	tally      *reports.Tally
	requests   *reports.Requests     // decisions' slots, flushed by tally
	samples    *reports.Samples      // decisions' requests sampled for forecasts, flushed by tally
	reportKeys *reports.KeySet       // the install's report keys (the setting), kept current by the feed
	bids       *reports.Bids         // header bidding's bids and wins, flushed by tally
	schedules  *reportmail.Scheduler // listen: saved reports' emails (nil without -smtp)
	monthly    *billing.Monthly      // listen: the month's invoices and statements (nil without -monthly-billing)
	sites      *serving.Sites        // the sites decisions check (domains, ads.txt)
	adsTxt     *supply.Watcher       // listen: sites' ads.txt checked (nil without -seller-domain)
	quality    *supply.QualityWatch  // listen: sites' hours judged (nil without -ivt-site-alarm)
	events     *collector.Collector
	streams    []*streams.Forwarder // collect; closed after events
	hooks      *webhooks.Dispatcher // open; closed after events
	demand     *demand.Exchange     // open; closed with the webhooks
	stopPprof  func()               // serve, before open
}

// open opens the store and builds what reads it: the index, the two
// caches, auth and the feed (not yet loaded).
func (n *node) open(ctx context.Context) error {
	token, err := adminToken(n.cfg, n.log)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, n.cfg.db, n.log)
	if err != nil {
		return err // st may be a typed nil: close must not see it
	}
	n.st = st
	if n.storeID, err = n.st.StoreID(ctx); err != nil {
		return err
	}
	n.reportKeys = &reports.KeySet{}
	ignored, err := n.reportKeys.LoadKeys(ctx, n.st, n.cfg.reports.keys)
	if err != nil {
		return err
	}
	if ignored != "" {
		n.log.Warn("-report-keys is ignored: the install's report keys were chosen since (the console's Reports page, PUT /api/v1/settings/report-keys)",
			"flag", ignored, "keys", strings.Join(n.reportKeys.Load(), ","))
	}
	n.reg.MustRegister(buildInfoGauge())
	n.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_store_full",
		Help: "1 while the last store write failed because the database's disk was full (writes get 503 until space returns)."},
		func() float64 { return map[bool]float64{false: 0, true: 1}[n.st.Full()] }))
	n.ix = index.New(time.Now)
	n.ads = web.NewAdCache(n.st, n.cfg.adCache, n.reg)
	n.links = web.NewLinkCache(n.st, n.cfg.linkCache, n.reg)
	if n.assetStore, err = assetStore(n.cfg, n.st); err != nil {
		return err
	}
	n.assets = web.NewAssetCache(n.assetStore, n.cfg.assetCache, n.reg)
	if n.counters, err = openCounters(n.cfg, n.reg, n.log); err != nil {
		return err
	}
	n.engine = delivery.New(n.counters)
	if n.money, err = openMoney(n.cfg, n.storeID); err != nil {
		return err
	}
	if n.cfg.counters != "" && n.cfg.counters != "memory" {
		// Invalid-traffic velocity across instances, under the store's id
		// as spend is.
		if n.velocity, err = counters.NewRedis(n.cfg.counters, "marquee:ivt:"+n.storeID+":"); err != nil {
			return err
		}
		n.cfg.ivt.Shared = n.velocity
		// Partners' winning markup and billing notices, for every
		// instance (docs/demand.md#across-instances).
		if n.kept, err = counters.NewRedis(n.cfg.counters, "marquee:demand:"+n.storeID+":"); err != nil {
			return err
		}
	}
	n.ivt = ivt.New(n.cfg.ivt)
	n.engine.SetBudgets(delivery.NewBudgets(n.money, n.cfg.budgetStale))
	n.touches = attribution.NewRecorder(n.money)
	n.engine.SetBidding(n.cfg.bidding)
	if err := n.engine.SetRemnant(n.cfg.remnant); err != nil {
		return fmt.Errorf("-remnant: %w", err)
	}
	if n.signer, err = trackingSigner(n.cfg); err != nil {
		return err
	}
	key, err := serverKey(n.cfg)
	if err != nil {
		return err
	}
	if n.privacy, err = privacyPolicy(n.cfg, key); err != nil {
		return err
	}
	if n.hooks, err = webhooks.New(webhooks.Config{Key: key, AllowPrivate: n.cfg.webhooksPrivate, Log: n.log, Registerer: n.reg}, n.st); err != nil {
		return err
	}
	n.access = auth.New(n.st, token, n.reg)
	n.access.ClientBits = n.cfg.ivt.IPv6Prefix
	// The views in memory the feed keeps current, in the order a batch
	// reaches them: the index first (the plan's ads are read for it).
	n.sites = serving.NewSites(n.cfg.adsTxtEnforce)
	dc := demand.Config{Currency: n.cfg.currency, Rules: n.cfg.privacyRules, Log: n.log, AllowPrivateNotices: n.cfg.demandPrivate}
	if n.kept != nil {
		dc.Shared = n.kept
	}
	n.demand = demand.New(dc)
	views := []marquee.Applier{n.ix, n.engine.From(n.st), n.sites.From(n.st), n.demand.From(n.st), web.AdCacheView(n.ads), web.LinkCacheView(n.links, &n.cfg.linkDomains),
		n.access, n.hooks, n.reportKeys.From(n.st), counters.Eraser(n.counters, n.log), counters.Eraser(counters.TouchEraser{M: n.money}, n.log)}
	n.fd = feed.New(n.st, views, n.log, n.reg, feed.Config{Poll: n.cfg.poll, GapWait: n.cfg.gapWait, Retention: n.cfg.retention, Saved: n.ix})
	return nil
}

// load fills the index: from the index saved at the last clean shutdown
// and the changelog since, or from the store.
func (n *node) load(ctx context.Context) error {
	start := time.Now()
	restored := false
	var err error
	if n.cfg.savedIndex == "" {
		err = n.fd.Load(ctx)
	} else {
		restored, err = n.fd.Start(ctx, n.cfg.savedIndex, n.storeID)
	}
	if err != nil {
		return err
	}
	n.counter = clicks.New(n.st, n.fd, n.log, n.reg)
	// Loading a large catalog leaves hundreds of MB of decoded rows behind;
	// hand them back to the OS now rather than when the scavenger gets to it.
	debug.FreeOSMemory()
	n.log.Info("index loaded", "ads", n.ix.Snapshot().Len(), "seq", n.fd.Position(), "took", time.Since(start).String(),
		"from", map[bool]string{true: "the saved index and the changelog since", false: "the store"}[restored])
	return nil
}

// collect opens the event collector with the Tally that counts what it
// writes. Reports count what the collector writes: the Tally learns how
// far the interrupted files are counted before the collector completes
// them, and counts what the ledger misses once it has.
func (n *node) collect(ctx context.Context) error {
	var err error
	if n.geo, err = n.cfg.reports.openGeoIP(); err != nil {
		return err
	}
	n.cfg.events.counting = func() (*reports.Classifier, reports.Resolver) {
		return reports.NewClassifier(n.geo, n.reportKeys), cacheResolver(n.st, n.ads, n.links)
	}
	n.events, n.streams, err = n.cfg.events.open(n.cfg.data, n.log, n.reg, []collector.Forwarder{n.hooks}, func(instance, dir string) (collector.Tally, error) {
		n.tally = reports.New(reports.Config{Store: n.st, Resolver: cacheResolver(n.st, n.ads, n.links), GeoIP: n.geo, Slot: instance, Log: n.log,
			Keys: n.reportKeys, Requests: n.requests, Samples: n.samples, Bids: n.bids}, n.reg)
		return n.tally, n.tally.LoadPending(ctx, dir)
	})
	if err != nil {
		return err
	}
	if err := n.tally.Recover(ctx, filepath.Join(n.cfg.data, "events")); err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), n.cfg.shutdownWait)
		n.events.Close(cctx) // its shipper waits for the recovery that failed: give it the shutdown timeout
		closeStreams(cctx, n.streams, n.log)
		cancel()
		n.events, n.streams = nil, nil
		return err
	}
	return nil
}

// linkGeo is the GeoIP links' country rules read: none without -geoip.
func (n *node) linkGeo() linkroute.Geo {
	if n.geo == nil {
		return nil
	}
	return n.geo
}

// listen builds the HTTP edge and opens its listener (and pprof's, when
// asked).
func (n *node) listen() (*fasthttp.Server, net.Listener, error) {
	cfg := n.cfg
	var read reports.Reader = n.st
	if cfg.events.analytics != "" {
		ch, err := clickhouse.Open(cfg.events.analytics)
		if err != nil {
			return nil, nil, err
		}
		read = clickhouse.NewReports(ch, n.st) // every report from the events there (docs/analytics.md)
	}
	reporter := reports.NewReporter(read, cfg.reports.hourlyRetention)
	reporter.Currency, reporter.Keys, reporter.Bids = cfg.currency, n.reportKeys, n.st
	var sender web.ReportSender
	var mailer web.Mailer // invitations: by the reports' mail server, when there is one
	if cfg.reports.mailer != nil {
		mailer = cfg.reports.mailer
	}
	if cfg.reports.mailer != nil {
		n.schedules = &reportmail.Scheduler{Store: n.st, Mailer: cfg.reports.mailer, Now: time.Now, Log: n.log}
		sender = n.schedules
	}
	// Serving's rules, and the one Ledger every decision and event leaves
	// its counts and its spend in.
	var geo serving.Geo
	if n.geo != nil {
		geo = n.geo
	}
	svc := serving.New(serving.Config{Engine: n.engine, Signer: n.signer, TTL: cfg.trackingTTL, Now: time.Now,
		Lines:          serving.NewLines(n.events, n.privacy, geo),
		Ledger:         serving.NewLedger(serving.LedgerConfig{Sink: n.events, Engine: n.engine, Requests: n.requests, Samples: n.samples, Bids: n.bids}),
		SharedCounters: n.cfg.counters != "memory" && n.cfg.counters != "", ReportKeys: n.reportKeys,
		Touches: n.touches, Conversions: n.st, Currency: cfg.currency, IVT: n.ivt, Sites: n.sites, Demand: n.demand, Tmax: cfg.demandTmax, SChain: cfg.seller.SChain})
	var pay billing.Payments // card top-ups: through Stripe, when configured
	if cfg.stripe.Key != "" {
		sc := cfg.stripe
		sc.Log = n.log
		p, err := payments.New(sc)
		if err != nil {
			return nil, nil, err
		}
		pay = p
	}
	// What buyers verify: each site's ads.txt checked, with the network's
	// identity.
	var adsTxt web.AdsTxtChecker
	if cfg.seller.Known() {
		forbidden := webhooks.Forbidden
		if cfg.adsTxtPrivate {
			forbidden = nil
		}
		n.adsTxt = &supply.Watcher{Store: n.st, Every: cfg.adsTxtEvery, Delay: time.Minute, Now: time.Now, Log: n.log,
			Checker: supply.NewChecker(supply.CheckerConfig{Network: cfg.seller, URL: cfg.adsTxtURL, Forbidden: forbidden})}
		adsTxt = n.adsTxt
	}
	if cfg.siteAlarm > 0 {
		n.quality = &supply.QualityWatch{Store: n.st, Reports: reporter, Rate: cfg.siteAlarm, MinRequests: cfg.siteAlarmMin,
			Settle: max(supply.DefaultAlarmSettle, 3*cfg.reports.flush), Now: time.Now, Log: n.log}
		if n.hooks != nil {
			n.quality.Notify = n.hooks
		}
	}
	// The back office: balances, top-ups and documents, for the edge and
	// for monthly billing alike.
	catalogs := reports.NewCatalogs(n.st)
	money := billing.New(billing.Config{Store: n.st, Payments: pay, Spend: n.engine.Budgets(), Reports: reporter,
		Catalogs: catalogs, Currency: cfg.currency, Mailer: mailer, Log: n.log, Now: time.Now})
	srv := web.NewServer(web.Config{InsecureAdmin: cfg.insecureAdmin, CookieSecure: cfg.cookieSecure, MetricsToken: cfg.metricsToken,
		TrustedProxies: cfg.events.proxies, MaxConns: cfg.maxConns, MaxConnsPerIP: cfg.maxConnsPerIP, ReadTimeout: cfg.readTimeout,
		WebhooksAllowHTTP: cfg.webhooksHTTP, GeoPlaces: n.geo.Places(), LinkDomains: cfg.linkDomains, ReportMailDomains: cfg.reportMailDomains, InvoiceIssuer: cfg.invoiceIssuer, CreativeOrigin: cfg.creativeOrigin,
		PublicURL: cfg.publicURL, Seller: cfg.seller},
		web.Deps{Log: n.log, Now: time.Now, Store: n.st, Index: n.ix, Feed: n.fd,
			Caches: web.Caches{Ads: n.ads, Links: n.links}, GeoIP: n.linkGeo(), Clicks: n.counter, Registry: n.reg,
			Reports: reporter, Auth: n.access, Uploads: web.Uploads{Store: n.assetStore, Cache: n.assets}, Serve: svc, Webhooks: n.hooks, Console: console.Handler(n.cfg.creativeOrigin),
			Erasure: web.Erasing{Counters: n.counters, EventsRetention: cfg.eventsRetention}, ReportSender: sender, Mailer: mailer, Billing: money, AdsTxt: adsTxt})
	if n.schedules != nil { // what a schedule's mail attaches: the reports themselves
		n.schedules.Reports = &reports.Multis{Reporter: reporter, Placements: n.st, Catalogs: catalogs}
	}
	if cfg.monthlyBilling {
		n.monthly = &billing.Monthly{Service: money, Log: n.log, Now: time.Now}
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	ln = srv.Listen(ln)
	n.log.Info("listening", "addr", ln.Addr().String(), "db", redact(cfg.db))
	return srv.HTTPServer(), ln, nil
}

// startLoops starts the background loops — index compaction, the feed,
// the click, report and last-use flushes, the trimming of access records
// and the reports' roll-up — and returns what stops them and waits.
func (n *node) startLoops() (stop func()) {
	cfg, log := n.cfg, n.log
	bg, cancel := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	flush := func(d time.Duration, f func(context.Context) error, what string) {
		loops.Go(func() {
			every(bg, d, func() {
				if err := f(bg); err != nil {
					log.Warn(what+" not flushed; kept for the next flush", "err", err)
				}
			})
		})
	}
	hourly := func(f func()) {
		loops.Go(func() {
			f()
			every(bg, time.Hour, f)
		})
	}
	loops.Go(func() { every(bg, time.Second, func() { n.ix.Refresh(cfg.compactEvery) }) })
	loops.Go(func() { n.fd.Run(bg) })
	flush(cfg.clickFlush, n.counter.Flush, "click counts")
	flush(cfg.reports.flush, n.tally.Flush, "reports")
	flush(cfg.accessFlush, n.access.Flush, "keys' and sessions' last use")
	flush(cfg.reports.pacingRefresh, n.refreshDelivered, "campaigns' delivery (for pacing)")
	hourly(func() { trimAccess(bg, n.st, cfg.auditKeep, log) })
	if cfg.eventsRetention > 0 && cfg.events.s3.URL == "" {
		hourly(func() { expireEvents(cfg.data, cfg.eventsRetention, log) })
	}
	if cfg.eventsRetention > 0 && cfg.events.analytics != "" {
		hourly(func() { expireAnalytics(bg, cfg.events.analytics, cfg.eventsRetention, log) })
	}
	hourly(func() { cfg.reports.rollUp(bg, n.st, log) })
	if n.schedules != nil {
		loops.Go(func() { n.schedules.Run(bg, cfg.reports.schedules) })
	}
	if n.monthly != nil {
		loops.Go(func() { n.monthly.Run(bg, 10*time.Minute) })
	}
	if n.adsTxt != nil {
		loops.Go(func() { n.adsTxt.Run(bg) })
	}
	if n.quality != nil {
		loops.Go(func() { n.quality.Run(bg) })
	}
	if m, ok := n.counters.(*counters.Memory); ok {
		hourly(func() { m.Trim(time.Now()) })
	}
	// Money: the spend of every budget synced with the shared counters,
	// and the touches of post-view attribution written to them; a failure
	// is logged when it begins and when it ends.
	loops.Go(func() {
		n.engine.Budgets().Run(bg, n.engine, cfg.budgetSync, onTransition(log, "spend counters unreachable: budgeted campaigns stop after -budget-stale", "spend counters reachable again"))
	})
	if n.velocity != nil {
		loops.Go(func() {
			t := time.NewTicker(ivtSyncEvery)
			defer t.Stop()
			failed := onTransition(log, "invalid-traffic velocity not shared: this instance counts alone", "invalid-traffic velocity shared again")
			for {
				select {
				case <-bg.Done():
					return
				case <-t.C:
				}
				ctx, cancel := context.WithTimeout(bg, time.Second)
				failed(n.ivt.Sync(ctx))
				cancel()
			}
		})
	}
	loops.Go(func() {
		n.touches.Run(bg, cfg.budgetSync, onTransition(log, "attribution touches not written; kept for the next try", "attribution touches written again"))
	})
	return func() { cancel(); loops.Wait() }
}

// refreshDelivered gives pacing and eCPM the campaigns' verified delivery
// from the reports (delivery.Engine.RefreshDelivered). The reports hold
// every event written before the last flush: asOf is the read's start
// less a flush interval.
func (n *node) refreshDelivered(ctx context.Context) error {
	now := time.Now()
	return n.engine.RefreshDelivered(ctx, n.st, now, now.Add(-n.cfg.reports.flush))
}

// onTransition returns a function of each try's error that logs down
// when tries begin to fail and up when they work again.
func onTransition(log *slog.Logger, down, up string) func(error) {
	failing := false
	return func(err error) {
		switch {
		case err != nil && !failing:
			log.Warn(down, "err", err)
		case err == nil && failing:
			log.Info(up)
		}
		failing = err != nil
	}
}

// moneyCounters keep what campaigns and advertisers spent and what users'
// impressions leave for post-view attribution.
type moneyCounters interface {
	delivery.SpendCounters
	attribution.Store
	ForgetTouches(ctx context.Context, user uint64) (int, error)
}

// MaxTouches is how many users × advertisers -counters memory keeps the
// last impressions of, for post-view attribution (about 300 bytes each).
const maxTouches = 200_000

// openMoney opens the money counters: in memory, or, with -counters
// redis://…, in that Redis under a prefix of the store's id (campaign
// ids are the store's: two installs sharing a Redis, or a database
// restored into a new one, never add up each other's spend).
func openMoney(cfg serveConfig, storeID string) (moneyCounters, error) {
	if cfg.counters == "" || cfg.counters == "memory" {
		return counters.NewMemoryMoney(maxTouches), nil
	}
	return counters.NewRedis(cfg.counters, "marquee:money:"+storeID+":")
}

// ivtSyncEvery is how often an instance shares its invalid-traffic
// velocity counts (ivt.Filter.Sync): a client spread over the instances
// is judged by its whole rate within about this long.
const ivtSyncEvery = 250 * time.Millisecond

// capCounters are the frequency caps' counters: what decisions take and
// what erasures forget.
type capCounters interface {
	delivery.Counters
	web.Forgetter
}

// privacyPolicy is -privacy's policy, its pseudonyms keyed by
// -privacy-key or else by a key derived from the server's.
func privacyPolicy(cfg serveConfig, serverKey []byte) (*privacy.Policy, error) {
	mode := cfg.privacyMode // checked by parseServe
	key, what := serverKey, "the server's key"
	if cfg.privacyKey != "" {
		key, what = []byte(cfg.privacyKey), "-privacy-key"
	}
	p, err := privacy.NewPolicy(mode, key, uint16(cfg.tcfVendor))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if cfg.keepEmails {
		p = p.KeepingEmails()
	}
	if cfg.privacyRules != nil {
		p = p.WithRules(cfg.privacyRules)
	}
	return p, nil
}

// expireEvents deletes the event files past -events-retention (kept under
// <data>/events without -events-s3: shipped files are the bucket's
// lifecycle rule's).
func expireEvents(data string, retention time.Duration, log *slog.Logger) {
	n, size, err := collector.Expire(filepath.Join(data, "events"), time.Now().Add(-retention))
	if err != nil {
		log.Error("event files past -events-retention not all deleted", "err", err)
	}
	if n > 0 {
		log.Info("event files past -events-retention deleted", "files", n, "bytes", size)
	}
}

// expireAnalytics drops the days of ClickHouse's events table past
// -events-retention (-analytics).
func expireAnalytics(ctx context.Context, dsn string, retention time.Duration, log *slog.Logger) {
	c, err := clickhouse.Open(dsn)
	if err == nil {
		var n int
		if n, err = c.DropDaysBefore(ctx, time.Now().Add(-retention)); n > 0 {
			log.Info("days of ClickHouse's events past -events-retention dropped", "days", n)
		}
	}
	if err != nil && ctx.Err() == nil {
		log.Error("days of ClickHouse's events past -events-retention not all dropped", "err", err)
	}
}

// openCounters opens the frequency caps' counters of -counters: memory
// (bounded by -caps-memory, its size in reg), or a Redis URL (checked at
// start: a Redis that does not answer fails it; one whose memory has no
// bound, or that evicts nothing, is logged).
func openCounters(cfg serveConfig, reg prometheus.Registerer, log *slog.Logger) (capCounters, error) {
	spec := cfg.counters
	if spec == "" || spec == "memory" {
		limit, _ := parseBytes(cfg.capsMemory) // checked by parseServe
		m := counters.NewMemory(limit)
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_caps_users",
			Help: "Users whose frequency cap serves this instance keeps (-counters memory; an estimate)."}, func() float64 { return float64(m.Users()) }))
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_caps_bytes",
			Help: "Bytes the frequency cap serves take, by the counters' weigher (-counters memory; at most -caps-memory)."}, func() float64 { return float64(m.Bytes()) }))
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "marquee_caps_evictions_total",
			Help: "Users whose frequency cap serves -caps-memory made this instance forget (their caps start again)."}, func() float64 { return float64(m.Evictions()) }))
		return m, nil
	}
	if !strings.HasPrefix(spec, "redis://") && !strings.HasPrefix(spec, "rediss://") && !strings.HasPrefix(spec, "unix://") {
		return nil, fmt.Errorf("-counters %q: want memory, redis://host:port/db or unix:///path/to/redis.sock?db=N", spec)
	}
	r, err := counters.NewRedis(spec, "marquee:caps:")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Ping(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("-counters: Redis does not answer: %w", err)
	}
	switch maxBytes, policy, err := r.Bound(ctx); {
	case err != nil:
		log.Info("-counters: Redis's maxmemory could not be read (CONFIG GET refused); bound it, with an eviction policy, as docs/operations.md#frequency-caps says", "err", err)
	case maxBytes == 0 || policy == "noeviction":
		log.Warn("-counters: Redis's memory is not bounded with an eviction policy: user keys grow until it refuses writes, and then no capped campaign serves (docs/operations.md#frequency-caps)", "maxmemory", maxBytes, "maxmemory-policy", policy)
	}
	return r, nil
}

// trackingSigner signs tracking URLs with the server's key (serverKey),
// accepting -tracking-previous-key's URLs too.
func trackingSigner(cfg serveConfig) (*tracking.Signer, error) {
	key, err := serverKey(cfg)
	if err != nil {
		return nil, err
	}
	var prev []byte
	if cfg.trackingPrevious != "" {
		prev = []byte(cfg.trackingPrevious)
	}
	s, err := tracking.NewSigner(key, prev)
	if err != nil {
		return nil, fmt.Errorf("-tracking-key: %w", err)
	}
	return s, nil
}

// serverKey is -tracking-key, or the key kept under the data dir
// (generated, 0600, on first start): it signs tracking URLs, and webhook
// secrets are derived from it. Instances sharing a store share it.
func serverKey(cfg serveConfig) ([]byte, error) {
	key := cfg.trackingKey
	if key == "" {
		var err error
		if key, _, err = kept(cfg.data, "tracking-key", 0o600, func() string { return randomHex(32) }); err != nil {
			return nil, fmt.Errorf("tracking key: %w", err)
		}
	}
	return []byte(key), nil
}

// assetStore is where uploaded images go: with -events-s3, the bucket
// (under <prefix>/assets/) and their facts in st; else st alone.
func assetStore(cfg serveConfig, st store.Store) (web.AssetStore, error) {
	if cfg.events.s3.URL == "" {
		return st, nil
	}
	s3, err := objstore.NewS3(cfg.events.s3)
	if err != nil {
		return nil, err
	}
	return objstore.Assets{Meta: st, S3: s3}, nil
}

// welcome tells where the console is and, while the store has no user,
// writes a first-run setup link (valid auth.SetupTTL, for the first owner
// only) to <data>/setup-link, mode 0600: it is a secret, so the log only
// says where it is (runServe also prints it on a terminal).
func (n *node) welcome(ctx context.Context, addr net.Addr) {
	path := filepath.Join(n.cfg.data, "setup-link")
	os.Remove(path) // a link of an earlier start is stale
	if !console.Included {
		return
	}
	base := consoleURL(n.cfg.addr, addr)
	n.log.Info("console", "url", base)
	has, err := n.st.HasUsers(ctx)
	token := n.access.SetupToken(time.Now().Add(auth.SetupTTL))
	if err != nil || has || token == "" {
		return
	}
	if err := os.WriteFile(path, []byte(base+"#/setup?token="+token+"\n"), 0o600); err != nil {
		n.log.Warn("no user yet, and the setup link could not be written: make one with marquee users add", "err", err)
		return
	}
	n.log.Info("no user yet: open the setup link in this file within an hour to make the first owner (or run marquee users add)", "file", path)
}

// setupLink is the setup link welcome wrote under data, or "".
func setupLink(data string) string {
	b, _ := os.ReadFile(filepath.Join(data, "setup-link"))
	return strings.TrimSpace(string(b))
}

// consoleURL is the console's address as a browser on this machine
// reaches it: the listen address's host (localhost when it names every
// interface) and the port listened on.
func consoleURL(listen string, addr net.Addr) string {
	host, _, _ := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	port := "80"
	if a, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
	}
	return "http://" + net.JoinHostPort(host, port) + console.Prefix
}

// serveUntil answers requests until ctx is done (then lets the ones in
// flight finish, up to the shutdown timeout) or the server fails.
func (n *node) serveUntil(ctx context.Context, hs *fasthttp.Server, ln net.Listener, ready func(net.Addr)) error {
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
		n.log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), n.cfg.shutdownWait)
		defer cancel()
		return hs.ShutdownWithContext(sctx)
	}
}

// stop shuts down what serves after the HTTP edge has stopped: every
// counted click reaches the store (the feed still runs), every accepted
// event is written and its file finished (uploads get the shutdown
// timeout, and what is left ships at the next start), the reports and
// last uses are flushed; then the loops stop, and the index is saved
// (the feed has stopped: its position is final).
func (n *node) stop(stopLoops func()) {
	sctx, cancel := context.WithTimeout(context.Background(), n.cfg.shutdownWait)
	defer cancel()
	if err := n.counter.Close(sctx); err != nil {
		n.log.Error("click counts lost at shutdown", "clicks", n.counter.Pending(), "err", err)
	}
	if err := n.events.Close(sctx); err != nil {
		n.log.Error("event collector: events lost at shutdown", "err", err)
	}
	closeStreams(sctx, n.streams, n.log)
	n.events, n.streams = nil, nil
	n.hooks.Close() // after the collector: nothing is written to it any more
	n.demand.Close()
	if err := n.tally.Flush(sctx); err != nil {
		n.log.Warn("reports not flushed at shutdown; the next start counts them from the files (decisions' request counts are lost)", "err", err)
	}
	if err := n.access.Flush(sctx); err != nil {
		n.log.Warn("keys' and sessions' last use not recorded at shutdown", "err", err)
	}
	stopLoops()
	if n.cfg.savedIndex != "" {
		if err := n.fd.Save(n.cfg.savedIndex, n.storeID); err != nil {
			n.log.Warn("index not saved; the next start loads it from the store", "err", err)
		}
	}
}

// close releases what open and collect hold, whatever step failed: the
// collector (when a later step failed), pprof, the GeoIP file, the store.
func (n *node) close() {
	if n.events != nil {
		sctx, cancel := context.WithTimeout(context.Background(), n.cfg.shutdownWait)
		n.events.Close(sctx)
		closeStreams(sctx, n.streams, n.log)
		cancel()
	}
	if n.hooks != nil {
		n.hooks.Close()
	}
	if n.demand != nil {
		n.demand.Close()
	}
	if n.stopPprof != nil {
		n.stopPprof()
	}
	if n.geo != nil {
		n.geo.Close()
	}
	if c, ok := n.counters.(io.Closer); ok {
		c.Close()
	}
	if c, ok := n.money.(io.Closer); ok {
		c.Close()
	}
	if n.kept != nil {
		n.kept.Close()
	}
	if n.velocity != nil {
		n.velocity.Close()
	}
	if n.st != nil {
		n.st.Close()
	}
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
	token, made, err := kept(cfg.data, "admin-token", 0o600, func() string { return randomHex(32) })
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	if made {
		log.Info("generated an owner token (not logged: secrets never are); read it from the file, or create users and keys with marquee users add / marquee keys create",
			"file", filepath.Join(cfg.data, "admin-token"))
	}
	return token, nil
}

// servePprof serves the runtime profiles of net/http/pprof on addr, apart
// from the public listener; stop closes the server and waits for its
// goroutine.
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
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(ln) }()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { hs.Close(); <-done }, nil
}

// jsonLog is the log of every command: JSON lines on w.
func jsonLog(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// dbUsage is the help of every command's -db.
const dbUsage = "database: a SQLite file (default <data>/marquee.db), a postgres:// or a mysql:// URL"

// Every consumer's interface is met by every store (store.Store names
// them all without importing the consumers: the stores stay below them).
var (
	_ web.AdStore       = store.Store(nil)
	_ web.LinkStore     = store.Store(nil)
	_ web.AccessStore   = store.Store(nil)
	_ web.CampaignStore = store.Store(nil)
	_ web.AssetStore    = store.Store(nil)
	_ auth.Store        = store.Store(nil)
	_ auth.LoginStore   = store.Store(nil)
	_ feed.Source       = store.Store(nil)
	_ clicks.Store      = store.Store(nil)
	_ reports.Store     = store.Store(nil)
	_ reports.Reader    = store.Store(nil)
	_ reports.Rebuilder = store.Store(nil)
)

// openStore opens PostgreSQL for a postgres:// URL, MySQL or MariaDB for
// a mysql:// URL, else the SQLite file. log takes what a driver reports
// on its own.
func openStore(ctx context.Context, db string, log *slog.Logger) (store.Store, error) {
	kind, err := dbKind(db)
	switch kind {
	case "postgres":
		return postgres.Open(ctx, db)
	case "mysql":
		return mysql.Open(ctx, db, log)
	case "sqlite":
		return sqlite.Open(ctx, db)
	}
	return nil, err
}

// dbKind names the store a -db value is for: "sqlite", "postgres" or
// "mysql"; a URL of no store Marquee has is an error.
func dbKind(db string) (string, error) {
	scheme, _, isURL := strings.Cut(db, "://")
	switch {
	case !isURL:
		return "sqlite", nil
	case scheme == "postgres" || scheme == "postgresql":
		return "postgres", nil
	case scheme == "mysql":
		return "mysql", nil
	}
	return "", fmt.Errorf("-db %s: want a SQLite file path, a postgres:// or a mysql:// URL", redact(db))
}

// defaultPoll is how often the changelog is read, when -poll is not set,
// on a store of kind (see dbKind): 50 ms on MySQL, which has no NOTIFY to
// wake on, else 1 s (PostgreSQL wakes on NOTIFY; SQLite is usually one
// instance).
func defaultPoll(kind string) time.Duration {
	if kind == "mysql" {
		return 50 * time.Millisecond
	}
	return time.Second
}

// redact hides the password of a database URL for logs.
func redact(db string) string {
	if u, err := url.Parse(db); err == nil && u.User != nil {
		return u.Redacted()
	}
	return db
}

// setMemoryLimit sets the Go runtime's soft memory limit: limit (bytes
// with a unit) when given, else 90% of what cgroup reports (the
// container's limit), else none. The GC then works harder near the limit
// instead of letting the process be killed.
func setMemoryLimit(limit string, cgroup memlimit.Provider, log *slog.Logger) int64 {
	if limit != "" {
		n, _ := parseBytes(limit) // checked by parseServe
		debug.SetMemoryLimit(n)
		log.Info("memory limit set", "bytes", n, "from", "-memory-limit")
		return n
	}
	n, err := memlimit.Set(memlimit.WithRatio(0.9), memlimit.WithProvider(cgroup))
	if err != nil || n == math.MaxInt64 {
		log.Info("no memory limit: no cgroup limit found", "err", err)
		return n
	}
	log.Info("memory limit set", "bytes", n, "from", "90% of the cgroup limit")
	return n
}

// trimAccess deletes audit entries older than keep, ended sessions, and
// failed logins past the throttling window.
func trimAccess(ctx context.Context, st store.Store, keep time.Duration, log *slog.Logger) {
	now := time.Now()
	if n, err := st.TrimAudit(ctx, now.Add(-keep)); err != nil {
		log.Warn("audit log not trimmed", "err", err)
	} else if n > 0 {
		log.Info("audit log trimmed", "entries", n)
	}
	if _, err := st.TrimSessions(ctx, now, now.Add(-auth.SessionIdle), now.Add(-auth.FailureWindow)); err != nil {
		log.Warn("ended sessions not deleted", "err", err)
	}
}

// every calls fn every d until ctx is done.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
