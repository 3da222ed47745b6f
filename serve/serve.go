// Package serve holds the ad server's serving and money rules, without
// HTTP: a decision (Decide: the request checked against the plan, its
// viewer filled, the engine's pick, its tracking tokens signed), a
// tracking URL's event (Track: vouched, priced, written, billed) and a
// conversion (Convert: attributed, counted once, priced, billed). Each
// tells invalid traffic from people's (package ivt) before anything is
// counted or billed: a decision for invalid traffic answers, but signs
// its reason into its tokens, so nothing it leads to is billed or
// delivered.
//
// Everything a decision and an event leave behind — requests and their
// outcomes, forecast samples, bids, event lines with their cost — goes
// through one Ledger, and the Ledger is the only road by which spend
// enters budgets (delivery.Budgets.Bill has no other caller).
//
// The HTTP edge (package web) reads requests into Input, Hit and
// marquee.ConversionInput, says what it knows of the client in an Edge,
// calls the Service, and writes the answer's bytes.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/prebid/openrtb/v20/openrtb2"
	"marquee"
	"marquee/attribution"

	"marquee/delivery"
	"marquee/demand"
	"marquee/ivt"
	"marquee/privacy"
	"marquee/reports"
	"marquee/tracking"
)

// Limits of a decision request.
const (
	MaxDecisionBody = 16 << 10
	MaxSlots        = 20
	MaxSlotCount    = 10
	MaxUserKey      = 256
	// countersTimeout bounds a decision's calls to shared counters: past
	// it, capped campaigns are left out of the decision.
	countersTimeout = 100 * time.Millisecond
)

// An Edge is what the HTTP edge knows of a request beyond what it says
// of itself: when it arrived, the client's address (through the trusted
// proxies), its headers that serving reads, the origin (scheme and host)
// its absolute URLs start with, and its connection (which picks the event
// sink's shard). Its byte slices are the request's: valid until the
// answer is written.
type Edge struct {
	Time           time.Time
	IP             netip.Addr
	UserAgent      []byte
	Referer        []byte
	AcceptLanguage []byte
	Origin         []byte // the head of the answer's absolute URLs (this server's scheme and host)
	// PageOrigin is the request's Origin header: the page's, when a
	// browser's script asks (empty: none).
	PageOrigin []byte
	GPC        bool // Sec-GPC: 1
	Conn       uint64
	// SecPurpose and Purpose are the request's headers of a prefetch or
	// a prerender (empty: absent).
	SecPurpose, Purpose []byte
}

// request is what the IVT filter reads of the edge's client.
func (e *Edge) request() ivt.Request {
	return ivt.Request{UserAgent: e.UserAgent, IP: e.IP, SecPurpose: e.SecPurpose, Purpose: e.Purpose}
}

// Geo places an address: its country (ISO 3166-1 alpha-2, "" unknown).
type Geo interface {
	Country(ip netip.Addr) string
}

// Placer is a GeoIP database that places an address below the country
// (a City database): region (ISO 3166-2), city (lower case), metro code.
type Placer interface {
	Place(ip netip.Addr) (region, city, metro string)
}

// ConversionStore counts each conversion once (marquee.Conversion).
type ConversionStore interface {
	AddConversion(ctx context.Context, c marquee.Conversion) (bool, error)
	RemoveConversion(ctx context.Context, advertiser int64, dedupe string) error
}

// Config is what a Service is made of. Engine, Signer, Lines and Ledger
// are required.
type Config struct {
	Engine *delivery.Engine
	Signer *tracking.Signer
	// TTL is how long tracking URLs work (default tracking.DefaultTTL).
	TTL    time.Duration
	Lines  *Lines
	Ledger *Ledger
	Now    func() time.Time
	// SharedCounters says the engine's counters are another server's
	// (Redis): a decision bounds its calls to them (countersTimeout).
	SharedCounters bool
	// ReportKeys are the keys whose values tracking URLs carry to their
	// events, for reports by key-value (the install's, read at each
	// decision; nil none).
	ReportKeys *reports.KeySet
	// Touches keeps verified impressions for post-view attribution (nil:
	// conversions are attributed to clicks only).
	Touches *attribution.Recorder
	// Conversions counts conversions once (nil: Convert fails).
	Conversions ConversionStore
	// Currency is the install's (docs/api.md#money; default
	// reports.DefaultCurrency).
	Currency string
	// IVT tells invalid traffic from people's (nil: ivt.New's defaults,
	// without data-centre ranges).
	IVT *ivt.Filter
	// Sites are the sites' rules decisions check (nil: none; see Sites).
	Sites *Sites
	// Demand is the demand partners decisions ask for bids (nil: none;
	// docs/demand.md).
	Demand *demand.Exchange
	// Tmax bounds a decision's auction when its placement sets none
	// (-demand-tmax; default DefaultTmax).
	Tmax time.Duration
	// SChain is the SupplyChain object of a bid request of a site's
	// (its seller id) of request id (nil: none sent).
	SChain func(sellerID, requestID string) *openrtb2.SupplyChain
}

// DefaultTmax is how long a decision waits for its demand partners by
// default.
const DefaultTmax = 200 * time.Millisecond

// Service answers decisions and counts what their signed tracking URLs
// report. It is safe for concurrent use.
type Service struct {
	engine      *delivery.Engine
	signer      *tracking.Signer
	ttl         time.Duration
	lines       *Lines
	ledger      *Ledger
	now         func() time.Time
	shared      bool
	reportKeys  *reports.KeySet
	touches     *attribution.Recorder
	conversions ConversionStore
	currency    string
	ivt         *ivt.Filter
	sites       *Sites
	demand      *demand.Exchange
	tmax        time.Duration
	schain      func(sellerID, requestID string) *openrtb2.SupplyChain
	// seen holds the decision ids (and kinds) counted here within the
	// tracking URLs' life, each with when and for whom it counted: a URL
	// fired twice counts once on an instance.
	seen *otter.Cache[[17]byte, mark]
}

// A mark is a tracking URL's event counted here: when (unix
// nanoseconds), and why it was invalid (ivt.Human: a person's).
type mark struct {
	at  int64
	why ivt.Reason
}

// New returns the service cfg describes.
func New(cfg Config) *Service {
	ttl := cfg.TTL
	if ttl <= 0 {
		ttl = tracking.DefaultTTL
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.Currency == "" {
		cfg.Currency = reports.DefaultCurrency
	}
	if cfg.IVT == nil {
		cfg.IVT = ivt.New(ivt.Config{})
	}
	if cfg.Tmax <= 0 {
		cfg.Tmax = DefaultTmax
	}
	return &Service{engine: cfg.Engine, signer: cfg.Signer, ttl: ttl, lines: cfg.Lines, ledger: cfg.Ledger, now: now,
		shared: cfg.SharedCounters, reportKeys: cfg.ReportKeys, touches: cfg.Touches, conversions: cfg.Conversions, currency: cfg.Currency,
		ivt: cfg.IVT, sites: cfg.Sites, demand: cfg.Demand, tmax: cfg.Tmax, schain: cfg.SChain,
		seen: otter.Must(&otter.Options[[17]byte, mark]{MaximumSize: 2_000_000, ExpiryCalculator: otter.ExpiryWriting[[17]byte, mark](ttl)})}
}

// IVT is the service's invalid-traffic filter.
func (s *Service) IVT() *ivt.Filter { return s.ivt }

// Sites are the sites decisions check.
func (s *Service) Sites() *Sites { return s.sites }

// Demand is the demand partners decisions ask (nil: none).
func (s *Service) Demand() *demand.Exchange { return s.demand }

// Engine is the delivery engine decisions are made by.
func (s *Service) Engine() *delivery.Engine { return s.engine }

// Signer signs and opens tracking tokens.
func (s *Service) Signer() *tracking.Signer { return s.signer }

// Currency is the install's currency.
func (s *Service) Currency() string { return s.currency }

// Lines writes event lines.
func (s *Service) Lines() *Lines { return s.lines }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// rngPool holds the lotteries' random sources (math/rand/v2's PCG, seeded
// from crypto/rand): one per goroutine at a time, no lock.
var rngPool = sync.Pool{New: func() any {
	var seed [16]byte
	rand.Read(seed[:])
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
}}

// countersContext is the context of a decision's calls to its counters:
// a round trip to shared counters is bounded (countersTimeout); memory
// needs no deadline.
func (s *Service) countersContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.shared {
		return context.WithTimeout(ctx, countersTimeout)
	}
	return ctx, func() {}
}

// Privacy is the policy events and users are kept by.
func (s *Service) Privacy() *privacy.Policy { return s.lines.privacy }

// ConversionSecret is the conversion secret of nonce (an advertiser's:
// tracking.Signer.ConversionSecret).
func (s *Service) ConversionSecret(nonce string) string { return s.signer.ConversionSecret(nonce) }
