// Package demand is server-side demand (docs/demand.md): the demand
// partners a decision sends OpenRTB 2.6 bid requests to, in parallel and
// bounded by the decision's tmax, what the privacy rules let leave for
// each, their answers checked (anything wrong is dropped and counted by
// reason), each partner's health — a circuit breaker and its request
// rate — and the notices of wins, losses and billing sent back.
package demand

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/prebid/openrtb/v20/openrtb2"

	"marquee"
	"marquee/privacy"
)

// MaxAdm bounds a bid's markup; a larger one is dropped (TooLarge).
const MaxAdm = 256 << 10

// maxResponse bounds a partner's answer, read whole.
const maxResponse = 4 << 20

// Why a partner's request or bid came to nothing (Health's Dropped, the
// reports' reasons).
const (
	Timeout     = "timeout"     // no answer within the partner's timeout or the decision's tmax
	Failed      = "error"       // the request failed, or answered neither 200 nor 204
	BadResponse = "badResponse" // an answer that is not a BidResponse of the request's id
	UnknownImp  = "unknownImp"  // a bid for an impression the request did not hold
	NoPrice     = "noPrice"     // a bid without a positive price, or without markup
	Currency    = "currency"    // a bid in another currency than the install's
	TooLarge    = "tooLarge"    // markup over MaxAdm
	Blocked     = "blocked"     // a bid the placement's blocks refuse
	Paused      = "paused"      // not asked: its circuit breaker is open
	OverQPS     = "overQps"     // not asked: over its requests a second
)

// Reasons are the reasons above, in the order reports list them.
var Reasons = reasonIndex[:]

// Imp is one impression of an auction: the OpenRTB object (its ID the
// slot's index, its tagid the placement) and what decides which partners
// are asked for it — its format and placement.
type Imp struct {
	openrtb2.Imp
	Format    string // marquee.FormatBanner, …
	Placement string
}

// Auction is what a decision offers partners: the request's common
// objects (site, device, user, regs, source; ID and TMax set), its
// impressions, the signals' verdict (what no partner may receive) and the
// context the privacy rules judge each partner in.
type Auction struct {
	Request openrtb2.BidRequest
	Imps    []Imp
	Verdict privacy.Verdict
	Context privacy.Context
	// Deals are the deals that name each partner (by partner name):
	// the pmp of its impressions.
	Deals func(partner string) []openrtb2.Deal
}

// Bid is a partner's bid that may compete: its impression (Imp's index
// in the auction), its price as a CPM in micro-units of the install's
// currency after the partner's adjustment (Price) and as bid (Raw's
// price), its seat and the partner's own fields (adm, nurl, burl, lurl,
// adomain, cat, dealid, w, h).
type Bid struct {
	Partner   string
	Imp       int
	Price     int64
	Seat      string
	AuctionID string
	Raw       openrtb2.Bid
}

// Config is what an Exchange needs.
type Config struct {
	Currency string
	Rules    *privacy.Rules
	Log      *slog.Logger
	Now      func() time.Time
	// Client sends bid requests (nil: a pooled keep-alive client).
	Client *http.Client
	// Notices sends win, loss and billing notices (nil: a client that
	// refuses internal addresses unless AllowPrivateNotices).
	Notices             *http.Client
	AllowPrivateNotices bool
	// Shared keeps winning bids' markup and billing notices for every
	// instance (nil: this instance's memory only).
	Shared Shared
}

// Exchange holds the demand partners and runs their auctions. Its
// partners are replaced whole (SetPartners); an auction reads one
// snapshot of them. Safe for concurrent use.
type Exchange struct {
	cfg      Config
	partners atomic.Pointer[[]*partner]
	// states keep each partner's health across SetPartners, by name.
	mu      sync.Mutex
	states  map[string]*state
	notices chan notice
	kept    *otter.Cache[[16]byte, Kept]
	wg      sync.WaitGroup
	stop    context.CancelFunc
}

// partner is a partner's terms with its state.
type partner struct {
	marquee.DemandPartner
	*state
}

// New returns an Exchange of no partners; Close stops its notices.
func New(cfg Config) *Exchange {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: time.Second,
			ForceAttemptHTTP2:   true,
		}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if cfg.Notices == nil {
		cfg.Notices = noticeClient(cfg.AllowPrivateNotices)
	}
	x := &Exchange{cfg: cfg, states: map[string]*state{}, notices: make(chan notice, noticeQueue), kept: newKept()}
	x.partners.Store(&[]*partner{})
	ctx, cancel := context.WithCancel(context.Background())
	x.stop = cancel
	for range noticeWorkers {
		x.wg.Go(func() { x.sendNotices(ctx) })
	}
	return x
}

// Close stops sending notices (those queued are dropped).
func (x *Exchange) Close() {
	x.stop()
	x.wg.Wait()
}

// SetPartners replaces the partners (safe while auctions run); each
// keeps its health by name.
func (x *Exchange) SetPartners(ps []marquee.DemandPartner) {
	x.mu.Lock()
	defer x.mu.Unlock()
	list := make([]*partner, len(ps))
	keep := make(map[string]*state, len(ps))
	for i, p := range ps {
		st := x.states[p.Name]
		if st == nil {
			st = &state{}
		}
		keep[p.Name] = st
		list[i] = &partner{DemandPartner: p, state: st}
	}
	x.states = keep
	x.partners.Store(&list)
}

// Any reports whether some partner buys format f for placement pl: an
// auction is worth building.
func (x *Exchange) Any(f, pl string) bool {
	for _, p := range *x.partners.Load() {
		if p.Buys(f, pl) {
			return true
		}
	}
	return false
}

// Run sends a's bid requests — one to each partner that buys one of its
// impressions, with only those impressions, what the privacy rules let
// leave for it — in parallel, waits for them at most the partner's
// timeout and a's tmax, and returns the bids that may compete (others
// dropped and counted by reason).
func (x *Exchange) Run(ctx context.Context, a *Auction) []Bid {
	ps := *x.partners.Load()
	if len(ps) == 0 || len(a.Imps) == 0 {
		return nil
	}
	tmax := time.Duration(a.Request.TMax) * time.Millisecond
	ctx, cancel := context.WithTimeout(ctx, tmax)
	defer cancel()
	results := make(chan []Bid, len(ps))
	asked := 0
	now := x.cfg.Now()
	for _, p := range ps {
		imps := make([]int, 0, len(a.Imps))
		for i := range a.Imps {
			if p.Buys(a.Imps[i].Format, a.Imps[i].Placement) {
				imps = append(imps, i)
			}
		}
		if len(imps) == 0 {
			continue
		}
		if why := p.admit(now, p.QPS); why != "" {
			p.drop(why, 1)
			continue
		}
		asked++
		go func() { results <- x.ask(ctx, p, a, imps) }()
	}
	var bids []Bid
	for range asked {
		bids = append(bids, <-results...)
	}
	return bids
}

// ask sends p its bid request of a's impressions imps and returns its
// bids that may compete.
func (x *Exchange) ask(ctx context.Context, p *partner, a *Auction, imps []int) []Bid {
	req := x.requestFor(p, a, imps)
	body, err := json.Marshal(&req)
	if err != nil {
		p.drop(Failed, 1)
		return nil
	}
	timeout := time.Duration(p.TimeoutMS) * time.Millisecond
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := x.post(ctx, p, body)
	p.requests.Add(1)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		p.failed(x.cfg.Now(), Timeout)
		return nil
	case errors.Is(err, errMalformed):
		p.failed(x.cfg.Now(), BadResponse)
		return nil
	case err != nil:
		p.failed(x.cfg.Now(), Failed)
		x.cfg.Log.Debug("demand partner request failed", "partner", p.Name, "err", err)
		return nil
	}
	p.succeeded(x.cfg.Now())
	if resp == nil { // no bid
		return nil
	}
	return x.bidsOf(p, a, &req, resp)
}

// post sends body to p and reads its answer: nil for no bid (204, or 200
// with no seatbid).
func (x *Exchange) post(ctx context.Context, p *partner, body []byte) (*openrtb2.BidResponse, error) {
	var rd io.Reader = bytes.NewReader(body)
	if p.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		zw.Close()
		rd = &buf
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Endpoint, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Openrtb-Version", "2.6")
	if p.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	resp, err := x.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNoContent:
		return nil, nil
	case http.StatusOK:
	default:
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, err
	}
	var out openrtb2.BidResponse
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return &out, nil
}

// errMalformed is an answer that is not JSON of a BidResponse.
var errMalformed = errors.New("not a BidResponse")

// bidsOf checks p's answer resp to req: each bid of a known impression,
// with a positive price in the install's currency and markup within
// MaxAdm, adjusted by p's factor; the others dropped by reason.
func (x *Exchange) bidsOf(p *partner, a *Auction, req *openrtb2.BidRequest, resp *openrtb2.BidResponse) []Bid {
	if resp.ID != req.ID {
		p.drop(BadResponse, 1)
		return nil
	}
	cur := resp.Cur
	if cur == "" {
		cur = "USD" // OpenRTB's default
	}
	var out []Bid
	for _, sb := range resp.SeatBid {
		for _, b := range sb.Bid {
			p.bids.Add(1)
			imp := -1
			if slices.ContainsFunc(req.Imp, func(m openrtb2.Imp) bool { return m.ID == b.ImpID }) {
				imp = slices.IndexFunc(a.Imps, func(m Imp) bool { return m.ID == b.ImpID })
			}
			why := ""
			switch {
			case imp < 0:
				why = UnknownImp
			case !(b.Price > 0) || math.IsInf(b.Price, 0) || b.AdM == "" && (a.Imps[imp].Format != marquee.FormatVideo || b.NURL == ""):
				why = NoPrice
			case !strings.EqualFold(cur, x.cfg.Currency):
				why = Currency
			case len(b.AdM) > MaxAdm:
				why = TooLarge
			}
			if why != "" {
				p.drop(why, 1)
				continue
			}
			price := int64(math.Round(b.Price * p.BidAdjustment * 1e6))
			out = append(out, Bid{Partner: p.Name, Imp: imp, Price: price, Seat: sb.Seat, AuctionID: req.ID, Raw: b})
		}
	}
	return out
}

// PartnerStore is what the exchange reads its partners from.
type PartnerStore interface {
	ListDemandPartners(ctx context.Context) ([]marquee.DemandPartner, error)
}

// From is the view that keeps x's partners current from st: read again
// at a reload and when a batch names a partner.
func (x *Exchange) From(st PartnerStore) marquee.Applier {
	return marquee.ApplyFunc(func(ctx context.Context, b *marquee.Batch) error {
		if !b.Reload && !b.DemandPartners {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		list, err := st.ListDemandPartners(ctx)
		if err != nil {
			return err
		}
		x.SetPartners(list)
		return nil
	})
}
