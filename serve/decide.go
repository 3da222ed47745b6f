package serve

import (
	"context"
	"encoding/binary"
	mrand "math/rand/v2"
	"net/url"
	"slices"
	"sync"
	"time"

	"marquee"
	"marquee/delivery"
	"marquee/demand"
	"marquee/ivt"
	"marquee/privacy"
	"marquee/reports"
	"marquee/targeting"
	"marquee/tracking"
)

// A Decision is a decision request decided: the request as the engine
// read it, the choices for each of its slots (Why: each slot's
// candidates, when explained), the visitor's privacy limit, and the
// instant it was made at. Its tokens are signed by Sign. A Decision is
// pooled (a request allocates none) and used by one goroutine: Release
// it once its answer is written, and keep nothing of it after.
type Decision struct {
	Request delivery.Request
	Chosen  [][]delivery.Choice
	Why     [][]delivery.Candidate
	Limit   privacy.Limit
	// Denied are the privacy activities the request's signals forbid;
	// Signals the signals it carried.
	Denied  privacy.Activities
	Signals privacy.Carried
	// Partners are the demand partners' bids the slots were offered (a
	// delivery.Bid of theirs is Server, its Index one of these).
	Partners []demand.Bid
	Now      time.Time
	// IVT is why the request is invalid traffic (ivt.Human: a person's):
	// it was decided without consequence, and its tokens carry it.
	IVT ivt.Reason
	// Rand is the decision's random source (the lotteries', the decision
	// ids', the [CACHEBUSTING] macro's).
	Rand *mrand.Rand

	svc      *Service
	slots    [4]delivery.Slot // a page's usual few, without allocation
	outcomes [MaxSlots]marquee.Outcome
}

// Options are how a decision is made beyond its request.
type Options struct {
	// Authorize is asked when the request wants an explanation or a
	// preview (which name every campaign): its error refuses the request.
	Authorize func() error
	// Companions asks for a roadblock's companions (VAST).
	Companions bool
	// NoBids: the decision's bids are not counted (none are sent).
	NoBids bool
	// Check is asked once the request is read, before anything is
	// decided: its error refuses the request (the edge's own checks).
	Check func() error
}

var decisions = sync.Pool{New: func() any { return new(Decision) }}

// Decide decides request in, from the client e says: it checks
// the request against the plan (every problem named), fills the viewer
// from what the edge knows, picks each slot's ads, and leaves the slots'
// outcomes, samples and bids in the Ledger (not for a preview, which
// counts nothing).
func (s *Service) Decide(ctx context.Context, in *Input, e *Edge, opt Options) (*Decision, error) {
	d := decisions.Get().(*Decision)
	if err := s.decide(ctx, in, e, opt, d); err != nil {
		d.Release()
		return nil, err
	}
	return d, nil
}

func (s *Service) decide(ctx context.Context, in *Input, e *Edge, opt Options, d *Decision) error {
	plan := s.engine.Plan()
	now := s.now()
	wall := now
	if len(in.At) > 0 {
		at, err := time.Parse(time.RFC3339, string(in.At))
		switch {
		case !in.Preview:
			return marquee.Invalid("invalid decision request", marquee.Problems{"at": "is for a preview only (\"preview\": true): a decision that counts is now"})
		case err != nil:
			return marquee.Invalid("invalid decision request", marquee.Problems{"at": "must be an RFC 3339 time"})
		}
		now = at
	}
	req, verdict, signals, err := s.request(e, in, plan, d.slots[:], now)
	lim := verdict.Limit
	if err != nil {
		return err
	}
	if opt.Check != nil {
		if err := opt.Check(); err != nil {
			return err
		}
	}
	d.svc, d.Request, d.Limit, d.Denied, d.Signals, d.Now = s, req, lim, verdict.Denied, verdict.Carried, now
	r := &d.Request
	r.Preview = in.Preview
	if !now.Equal(wall) {
		r.Wall = wall // a preview at another time: budgets' freshness is judged now
	}
	r.Companions = opt.Companions
	if (in.Explain || in.Preview) && opt.Authorize != nil {
		if err := opt.Authorize(); err != nil {
			return err
		}
	}
	if !in.Preview {
		// Invalid traffic is answered (a crawler renders the publisher's
		// page), decided without consequence — no cap serve, no pacing —
		// and its tokens say why, so that nothing it leads to counts.
		d.IVT = s.requestIVT(ctx, e, in, r.User, now)
		if d.IVT == ivt.Human {
			d.IVT = s.sites.siteIVT(plan, r, e, in)
		}
		r.Invalid = d.IVT != ivt.Human
	}
	d.Rand = rngPool.Get().(*mrand.Rand)
	if s.demand != nil && !in.Preview && !in.Explain && d.IVT == ivt.Human { // buyers are never sent invalid traffic
		s.auction(ctx, e, in, plan, d, signals)
	}
	cctx, cancel := s.countersContext(ctx)
	if in.Explain {
		d.Chosen, d.Why = s.engine.Explain(cctx, r, now, d.Rand, d.outcomes[:])
	} else {
		d.Chosen = s.engine.DecideOutcomes(cctx, r, now, d.Rand, d.outcomes[:])
	}
	cancel()
	switch {
	case in.Preview:
	case d.IVT != ivt.Human:
		s.countInvalid(in, e, plan, r, d.IVT, now)
	default:
		limited := d.Signals
		if d.Denied == 0 {
			limited = 0 // signals that denied nothing limited nothing
		}
		s.countRequests(e, in, plan, r, d.outcomes[:len(r.Slots)], lim, limited, now)
		if !opt.NoBids {
			s.countBids(plan, r, d.Chosen, now)
		}
		s.notify(d)
	}
	return nil
}

// requestIVT is why a decision request for user (0: none) at now is
// invalid traffic: what the viewer's User-Agent and address, the edge's
// prefetch headers and the page's webdriver flag say (ivt.Filter.Request),
// else the user's and the address's events this minute (credits of
// billed events go back when they go past).
func (s *Service) requestIVT(ctx context.Context, e *Edge, in *Input, user uint64, now time.Time) ivt.Reason {
	ip, _ := viewerIP(e, in) // checked by fillViewer
	q := ivt.Request{UserAgent: viewerUA(e, in), IP: ip, SecPurpose: e.SecPurpose, Purpose: e.Purpose, Webdriver: in.Webdriver}
	if why := s.ivt.Request(&q); why != ivt.Human {
		return why
	}
	why, credits := s.ivt.Count(user, ip, now)
	s.credit(ctx, e, credits)
	return why
}

// countInvalid counts each slot of an invalid decision r at now by why
// (docs/ivt.md): apart from requests and fill, which count people's.
func (s *Service) countInvalid(in *Input, e *Edge, plan *delivery.Plan, r *delivery.Request, why ivt.Reason, now time.Time) {
	if !s.ledger.CountsRequests() {
		return
	}
	k := reports.RequestKey{Hour: now.Unix() / 3600 * 3600}
	copy(k.Country[:], r.Viewer.CountryCode())
	k.Device = reports.DeviceCode(targeting.DeviceType(viewerUA(e, in)))
	for i := range r.Slots {
		if pl, ok := plan.Placement(r.Slots[i].Placement); ok {
			k.Placement = pl.ID
			s.ledger.CountInvalid(k, why)
		}
	}
}

// Release gives the decision back to the pool, emptied (nothing of its
// request is kept); d is not to be used after.
func (d *Decision) Release() {
	if d.Rand != nil {
		rngPool.Put(d.Rand)
	}
	clear(d.slots[:])
	*d = Decision{}
	decisions.Put(d)
}

// Sign appends to dst the signed token of choice ch in slot i, under a
// new decision id, which it also returns: one token serves every tracking
// URL of the choice, and carries the request's privacy limit, and the
// slot's values of the report keys, to its events.
func (d *Decision) Sign(dst []byte, i int, ch delivery.Choice) ([]byte, [16]byte) {
	s, r, slot := d.svc, &d.Request, &d.Request.Slots[i]
	p := tracking.Payload{Ad: ch.Ad.ID, Campaign: ch.Campaign.ID, Placement: slot.Placement, UserHash: r.User, Issued: d.Now, Expires: d.Now.Add(s.ttl),
		Limit: uint8(d.Limit), Country: r.Viewer.CountryCode(), Platform: targeting.PlatformName(r.Viewer.Platform), IVT: uint8(d.IVT), Denied: uint16(d.Denied), Signals: uint16(d.Signals)}
	if keys := s.reportKeys.Load(); len(keys) > 0 {
		kvs := r.Viewer.KV
		if slot.KV != nil {
			kvs = slot.KV
		}
		p.KV = reportKV(keys, kvs)
	}
	// A decision id needs to be unique, not secret (the MAC guards the
	// token): 128 bits of the request's PCG, seeded from crypto/rand.
	binary.LittleEndian.PutUint64(p.Decision[:8], d.Rand.Uint64())
	binary.LittleEndian.PutUint64(p.Decision[8:], d.Rand.Uint64())
	p.PriceMicros = ch.Campaign.PriceMicros
	if ch.Bid != nil { // a bid's events are its bidder's, at its adjusted CPM
		p.Bidder, p.PriceMicros = ch.Bid.Bidder, ch.BidCPM
	}
	return s.signer.Append(dst, &p), p.Decision
}

// maxReportValue bounds a report key's value a tracking URL carries: a
// longer one is reported as reports.OtherValue.
const maxReportValue = 40

// reportKV is the values of keys among kvs (sorted) as a tracking
// payload carries them: "section=sports&pos=atf", each key's first value
// (in byte order), query-escaped; "" for none.
func reportKV(keys []string, kvs []targeting.KV) string {
	var b []byte
	for _, k := range keys {
		i := slices.IndexFunc(kvs, func(kv targeting.KV) bool { return kv.Key == k })
		if i < 0 {
			continue
		}
		v := kvs[i].Value
		if len(v) > maxReportValue {
			v = reports.OtherValue
		}
		if len(b) > 0 {
			b = append(b, '&')
		}
		b = append(append(append(b, k...), '='), url.QueryEscape(v)...)
	}
	return string(b)
}

// countRequests counts each slot of decision r at now and its outcome
// (outcomes, by slot) (docs/api.md#requests-and-fill): by placement, UTC
// hour, the viewer's country and device type. A slot no campaign could
// target while the visitor's consent was refused counts as unfilled for
// consent; a slot whose request's signals denied an activity counts
// under each signal it carried (limited). Each slot is also offered to
// the forecasts' sample.
func (s *Service) countRequests(e *Edge, in *Input, plan *delivery.Plan, r *delivery.Request, outcomes []marquee.Outcome, lim privacy.Limit, limited privacy.Carried, now time.Time) {
	if s.ledger.Samples() {
		s.sample(e, in, plan, r, lim, now)
	}
	if !s.ledger.CountsRequests() { // nothing counts them: the device type is not worth reading
		return
	}
	k := reports.RequestKey{Hour: now.Unix() / 3600 * 3600}
	copy(k.Country[:], r.Viewer.CountryCode())
	device := r.Viewer.Device
	if device == "" {
		ua := in.UserAgent
		if len(ua) == 0 {
			ua = e.UserAgent
		}
		device = targeting.DeviceType(ua)
	}
	k.Device = reports.DeviceCode(device)
	for i := range r.Slots {
		pl, ok := plan.Placement(r.Slots[i].Placement)
		if !ok {
			continue
		}
		k.Placement = pl.ID
		o := outcomes[i]
		if o == marquee.Untargeted && lim != privacy.None {
			o = marquee.NoConsent
		}
		s.ledger.Request(k, o)
		if limited != 0 {
			s.ledger.CountLimited(k, limited)
		}
	}
}

// sample offers each slot of decision r at now to the forecasts' sample:
// a kept request's viewer is the decision's with the slot's key-values,
// and, when the visitor did not limit consent (lim), every attribute
// targeting reads filled in (reports.SampleNeeds: what no tree of the
// plan needed was not read for the decision).
func (s *Service) sample(e *Edge, in *Input, plan *delivery.Plan, r *delivery.Request, lim privacy.Limit, now time.Time) {
	for i := range r.Slots {
		sl := &r.Slots[i]
		pl, ok := plan.Placement(sl.Placement)
		if !ok {
			continue
		}
		v := r.Viewer
		if sl.KV != nil {
			v.KV = sl.KV
		}
		s.ledger.Sample(pl.ID, now, func(v *targeting.Viewer) {
			if lim == privacy.None {
				_ = s.fillViewer(e, in, v, reports.SampleNeeds&^plan.Needs()) // checked for the decision already
			}
		}, &v, r.Keywords)
	}
}

// countBids counts each bid of decision r's slots at now, and whether it
// won its slot (chosen).
func (s *Service) countBids(plan *delivery.Plan, r *delivery.Request, chosen [][]delivery.Choice, now time.Time) {
	for si := range r.Slots {
		sl := &r.Slots[si]
		if len(sl.Bids) == 0 {
			continue
		}
		pl, ok := plan.Placement(sl.Placement)
		if !ok {
			continue
		}
		var buf [MaxBids]reports.SlotBid // on the stack: a slot holds at most MaxBids
		counted := buf[:0]
		for i := range sl.Bids {
			counted = append(counted, reports.SlotBid{Bidder: sl.Bids[i].Bidder, Won: len(chosen[si]) > 0 && chosen[si][0].Bid == &sl.Bids[i]})
		}
		s.ledger.Bids(pl.ID, now, counted)
	}
}
