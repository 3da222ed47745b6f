// Package web is Marquee's HTTP edge on fasthttp. NewServer builds the
// handler; routes.go lists every route with its middleware; one file per
// resource holds the handlers; errors.go is the one place that maps domain
// errors to status codes and JSON bodies.
//
// Handlers never keep a *fasthttp.RequestCtx, or a byte slice taken from it,
// after they return.
package web

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
	"marquee/billing"
	"marquee/cache"
	"marquee/clicks"
	"marquee/forecast"
	"marquee/index"
	"marquee/linkroute"
	"marquee/privacy"
	"marquee/reports"
	"marquee/serve"
	"marquee/supply"
)

// AdStore is what the web layer needs of a store of ads.
type AdStore interface {
	CreateAd(ctx context.Context, in marquee.AdInput) (marquee.Ad, error)
	ReplaceAd(ctx context.Context, id int64, in marquee.AdInput) (marquee.Ad, error)
	DeleteAd(ctx context.Context, id int64) error
	Ad(ctx context.Context, id int64) (marquee.Ad, error)
	ListAds(ctx context.Context, f marquee.AdFilter) ([]marquee.Ad, int, error)
	Ping(ctx context.Context) error
	// An advertiser's account's ads wait for approval (adapproval.go).
	CreateAdAs(ctx context.Context, in marquee.AdInput, state string) (marquee.Ad, error)
	ReplaceAdAs(ctx context.Context, id int64, in marquee.AdInput, state string) (marquee.Ad, error)
	MoveAd(ctx context.Context, id int64, action, reason string) (marquee.Ad, error)
}

// LinkStore is what the web layer needs of a store of links.
type LinkStore interface {
	CreateLink(ctx context.Context, in marquee.LinkInput) (marquee.Link, error)
	ReplaceLink(ctx context.Context, code string, in marquee.LinkInput) (marquee.Link, error)
	DeleteLink(ctx context.Context, code string) error
	Link(ctx context.Context, code string) (marquee.Link, error)
	// LinkTarget is Link with only what a redirect reads (the cache's
	// load): clicks only for a link with a limit, no timestamps.
	LinkTarget(ctx context.Context, code string) (marquee.Link, error)
	ListLinks(ctx context.Context, offset, limit int) ([]marquee.Link, int, error)
	SearchLinks(ctx context.Context, f marquee.LinkFilter, offset, limit int) ([]marquee.Link, int, error)
	ImportStore
}

// Config holds the settings of the HTTP edge.
type Config struct {
	InsecureAdmin bool   // serve admin routes to anyone, as an owner (black-box testing only)
	CookieSecure  bool   // mark the session cookie Secure even on plain HTTP (behind a TLS proxy)
	MetricsToken  string // when set, /metrics needs it as a bearer token
	MaxConns      int    // connections served at once (0: no limit; see Listen)
	MaxConnsPerIP int    // connections from one IP at once (0: no limit)
	// ReadTimeout bounds reading a request, headers and body (default
	// ReadTimeout): a client that trickles them is cut off then.
	ReadTimeout time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For is believed for
	// an event's client ip.
	TrustedProxies []netip.Prefix
	// WebhooksAllowHTTP lets webhooks POST to http:// URLs (https only
	// otherwise).
	WebhooksAllowHTTP bool
	// GeoPlaces: the server's GeoIP places addresses below the country
	// (a City database), so targeting may read $region, $city and $metro.
	GeoPlaces bool
	// LinkDomains are the hosts short links are served on (none: every
	// link is on the default domain).
	LinkDomains LinkDomains
	// ReportMailDomains are the domains (lower case) an advertiser's or a
	// publisher's account may schedule reports to besides its own
	// logins' addresses (-report-mail-domains; none: its logins' only).
	ReportMailDomains []string
	// InvoiceIssuer is who invoices and statements are issued by (the
	// operator's name, -invoice-issuer).
	InvoiceIssuer string
	// CreativeOrigin is where HTML creatives' and third-party tags' frames
	// are served ("https://creatives.example", -creative-origin; "": this
	// server's own origin): a host of their own, where this server answers
	// only frames and tracking URLs and never sets a cookie, so that no
	// creative runs, or can pass for a page, on the ad server's address.
	CreativeOrigin string
	// PublicURL is the server's public origin ("https://ads.example.net",
	// -public-url; "": each request's own): the head of the absolute URLs
	// it answers — decisions' tracking and frame URLs, VAST and VMAP,
	// invitation and payment links — and the origin of the assets a
	// creative's preview may show. Set, a client's Host header never
	// chooses where those URLs point.
	PublicURL string
	// Seller is the network's identity to buyers (-seller-domain, …): its
	// sellers.json and its publishers' ads.txt line (none when unknown).
	Seller supply.Network
}

// Store is every method of the store the edge calls: the one store, which
// each resource's handlers see only as the interface it declares (AdStore,
// LinkStore, AccessStore, CampaignStore, WebhookStore, PrivacyStore).
type Store interface {
	AdStore
	LinkStore
	AccessStore
	CampaignStore
	WebhookStore
	PrivacyStore
	SavedReportStore
	DealStore
	PartnerStore
	SiteStore
	SettingsStore
	InvoiceStore
	billing.Store
	serve.ConversionStore
	ForecastStore
	BidStore
	Names
}

// Deps are the server's collaborators.
type Deps struct {
	Log    *slog.Logger
	Now    func() time.Time // the clock ads are judged and events stamped by
	Store  Store            // nil: the routes that read or write it fail (tests of other routes)
	Index  *index.Index     // fed by Feed, which makes writes visible
	Feed   Syncer
	Caches Caches
	// GeoIP places visitors for links' country rules (nil: no country is
	// known, and those rules never match).
	GeoIP   linkroute.Geo
	Clicks  *clicks.Counter
	Reports *reports.Reporter
	// Serve decides, tracks and converts (package serve); its Lines
	// write every event line, its Engine is the delivery engine the
	// campaign and forecast routes read.
	Serve *serve.Service
	// ReportSender emails saved reports now (nil: no -smtp).
	ReportSender ReportSender
	// Mailer sends invitations to new users and receipts of top-ups
	// (nil: no -smtp; an invitation's link is shown to whoever invites
	// instead, and no receipt is sent).
	Mailer Mailer
	// Billing is the back office's money: balances, top-ups, card
	// payments and the documents (nil: a service over Store with no card
	// payments, no spend counters and no receipts, for tests of other
	// routes).
	Billing *billing.Service
	Auth    *auth.Auth // who requests are (keys, sessions, the bootstrap token)
	// Webhooks delivers webhooks (nil: the webhook routes answer 404).
	Webhooks Webhooks
	// Uploads are where uploaded images go and the cache they are
	// served from.
	Uploads Uploads
	// Console serves /admin and /admin/… (package console); nil: no
	// console.
	Console fasthttp.RequestHandler
	// Registry receives the server's metrics.
	Registry *prometheus.Registry
	// Erasure is what an erasure request clears and says (nil Counters:
	// the erasure route answers 404).
	Erasure Erasing
	// AdsTxt checks a site's ads.txt when asked (supply.Watcher; nil:
	// the check route answers 409, as without -seller-domain).
	AdsTxt AdsTxtChecker
}

// Caches are the look-ups by key: ads' JSON by id (see NewAdCache) and
// links by marquee.LinkKey (see NewLinkCache).
type Caches struct {
	Ads   *cache.Cache[int64, []byte]
	Links *cache.Cache[string, marquee.Link]
}

// Uploads are where uploaded images go (Store) and the images by
// SHA-256, read from it (Cache; see NewAssetCache).
type Uploads struct {
	Store AssetStore
	Cache *cache.Cache[string, Image]
}

// Erasing is what an erasure touches besides the store: the
// frequency-cap counters it clears, and how long event files are kept
// (0: until deleted), which its answer says.
type Erasing struct {
	Counters        Forgetter
	EventsRetention time.Duration
}

// Limits of the HTTP edge.
const (
	MaxAdBody      = 64 << 10 // bytes of a create/replace body
	MaxLinkBody    = 64 << 10 // bytes of a link create/replace body (20 rules of 20 values fit)
	MaxRequestBody = 1 << 20  // bytes of any request body (the server rejects more)
	ReadTimeout    = 10 * time.Second
	WriteTimeout   = 10 * time.Second
	IdleTimeout    = 60 * time.Second
	// WriteBufferSize is the per-connection response buffer.
	WriteBufferSize = 16 << 10
	// ReadBufferSize bounds the request line and headers (an event beacon's
	// query string lives there).
	ReadBufferSize = 8 << 10
)

// Server is Marquee's HTTP handler with its dependencies.
type Server struct {
	cfg       Config
	log       *slog.Logger
	now       func() time.Time
	store     AdStore
	links     LinkStore
	index     *index.Index
	writer    *writer
	adCache   *cache.Cache[int64, []byte]
	linkCache *cache.Cache[string, marquee.Link]
	geo       linkroute.Geo
	imports   *imports
	clicks    *clicks.Counter
	reports   *reports.Reporter
	auth      *auth.Auth
	req       requester
	hookSt    WebhookStore
	hooks     Webhooks
	access    AccessStore
	sessions  *sessions
	campaigns CampaignStore
	serve     *serve.Service
	forecasts *forecasts
	bidSt     BidStore
	multi     *reports.Multis
	saved     SavedReportStore
	deals     DealStore
	partners  PartnerStore
	settings  SettingsStore
	// reportKeys are the install's report keys (the reports'); nil
	// without reports.
	reportKeys *reports.KeySet
	sites      SiteStore
	adsTxt     AdsTxtChecker
	billing    *billing.Service
	invoiceSt  InvoiceStore
	users      func(context.Context) ([]marquee.User, error) // the logins, for where an account may mail
	sender     ReportSender
	mailer     Mailer
	assets     *cache.Cache[string, Image]
	assetSt    AssetStore
	console    fasthttp.RequestHandler
	events     *eventLines
	privSt     PrivacyStore
	forget     Forgetter
	retention  time.Duration // of the event files (-events-retention)
	metrics    *metrics
	mux        *mux
}

// NewServer builds the HTTP edge.
func NewServer(cfg Config, d Deps) *Server {
	s := &Server{
		cfg: cfg, log: d.Log, now: d.Now, store: d.Store, links: d.Store, index: d.Index,
		adCache: d.Caches.Ads, linkCache: d.Caches.Links, adsTxt: d.AdsTxt, geo: d.GeoIP, clicks: d.Clicks, reports: d.Reports, auth: d.Auth, console: d.Console,
		campaigns: d.Store, hookSt: d.Store, hooks: d.Webhooks,
		access: d.Store, privSt: d.Store, forget: d.Erasure.Counters, retention: d.Erasure.EventsRetention, assets: d.Uploads.Cache, assetSt: d.Uploads.Store,
		writer:  &writer{feed: d.Feed, log: d.Log},
		req:     requester{trusted: cfg.TrustedProxies, public: cfg.PublicURL},
		metrics: newMetrics(d.Registry, d.Index),
	}
	s.serve = d.Serve
	if s.serve == nil { // a server of the routes that serve no ads (tests of other routes)
		pol, _ := privacy.NewPolicy(privacy.Balanced, []byte(rand.Text()), 0)
		s.serve = serve.New(serve.Config{Lines: serve.NewLines(nil, pol, nil), Now: d.Now})
	}
	s.events = &eventLines{requester: s.req, Lines: s.serve.Lines(), ivt: s.serve.IVT()}
	s.imports = &imports{st: d.Store, writer: s.writer, log: d.Log, now: d.Now, jobs: map[string]*importJob{}}
	s.bidSt = d.Store
	s.forecasts = &forecasts{src: d.Store, engine: s.serve.Engine(), model: forecast.Model{Weeks: forecast.DefaultWeeks}}
	s.multi = &reports.Multis{Reporter: d.Reports, Placements: d.Store, Catalogs: reports.NewCatalogs(d.Store)}
	s.billing, s.invoiceSt = d.Billing, d.Store
	if s.billing == nil {
		s.billing = billing.New(billing.Config{Store: d.Store, Reports: d.Reports, Catalogs: s.multi.Catalogs, Currency: s.serve.Currency(), Log: d.Log, Now: d.Now})
	}
	s.saved, s.deals, s.partners, s.sites, s.settings, s.sender, s.mailer = d.Store, d.Store, d.Store, d.Store, d.Store, d.ReportSender, d.Mailer
	if d.Store != nil {
		s.users = d.Store.Users
	}
	s.sessions = &sessions{requester: s.req, access: d.Store, auth: d.Auth, writer: s.writer, now: d.Now, cookieSecure: cfg.CookieSecure}
	if d.Reports != nil {
		s.sessions.currency, s.sessions.reportKeys = d.Reports.Currency, d.Reports.Keys
		s.reportKeys = d.Reports.Keys
	}
	s.mux = newMux(s, s.routes())
	return s
}

// Handler returns the request handler.
func (s *Server) Handler() fasthttp.RequestHandler { return s.mux.serve }

// HTTPServer returns a fasthttp server for the handler with Marquee's limits
// and timeouts.
func (s *Server) HTTPServer() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:            s.Handler(),
		ErrorHandler:       s.transportError,
		ReadTimeout:        cmp.Or(s.cfg.ReadTimeout, ReadTimeout),
		WriteTimeout:       WriteTimeout,
		IdleTimeout:        IdleTimeout,
		MaxRequestBodySize: MaxRequestBody,
		HeaderReceived:     s.requestConfig, // the import route's larger body, for a valid credential
		// A full page of 100 items is ~6 KiB; a buffer that holds the whole
		// response sends it in one write(2) instead of two.
		WriteBufferSize:       WriteBufferSize,
		ReadBufferSize:        ReadBufferSize,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		Logger:                fasthttpLogger{s.log},
	}
}

// fasthttpLogger routes fasthttp's own messages (connection errors) to slog
// at debug level: they are the client's problem, and a flood of them must
// not fill the log. An error's text is withheld (its kind is kept): a
// read error quotes the bytes it read, a session cookie or a bearer
// token among them, and secrets are never logged.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) { // a cut slow client is one; format only when kept
		for i, a := range args {
			if err, ok := a.(error); ok {
				args[i] = withheld(err)
			}
		}
		l.log.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
	}
}

// withheld names an error without its text.
func withheld(err error) string {
	switch {
	case isTimeout(err):
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case errors.Is(err, net.ErrClosed):
		return "closed"
	}
	return fmt.Sprintf("%T (text withheld: it may quote request headers)", err)
}
