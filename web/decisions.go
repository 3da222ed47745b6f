package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/attribution"
	"marquee/auth"
	"marquee/delivery"
	"marquee/jsonstr"
	"marquee/macro"
	"marquee/privacy"
	"marquee/reports"
	"marquee/targeting"
	"marquee/tracking"
)

// Limits of a decision request.
const (
	MaxDecisionBody = 16 << 10
	MaxSlots        = 20
	MaxSlotCount    = 10
	maxUserKey      = 256
	// countersTimeout bounds a decision's calls to shared counters: past
	// it, capped campaigns are left out of the decision.
	countersTimeout = 100 * time.Millisecond
)

// decider answers decisions and counts what their signed tracking URLs
// report: the delivery engine's pick, the signer of tracking URLs and
// their life, the event lines, and the decision ids seen here (so a URL
// fired twice counts once on an instance).
type decider struct {
	engine *delivery.Engine
	signer *tracking.Signer
	ttl    time.Duration
	events *eventLines
	now    func() time.Time
	// shared says the counters are another server's (Redis): their calls
	// get a deadline.
	shared bool
	// authenticate tells who a request is (for explain, which needs
	// campaigns:read).
	authenticate func(*fasthttp.RequestCtx) (auth.Principal, error)
	// reportKeys are the keys whose values tracking URLs carry to their
	// events, for reports by key-value (reports.Reporter.Keys).
	reportKeys []string
	// requests counts each decision's slots and what became of them (nil:
	// not counted).
	requests *reports.Requests
	// samples keeps a sample of the requests for forecasts (nil: none).
	samples *reports.Samples
	// bids counts header bidding's bids and wins (nil: none).
	bids *reports.Bids
	// seen holds the decision ids (and kinds) counted here within the
	// tracking URLs' life: a URL fired twice counts once on an instance.
	seen *otter.Cache[[17]byte, struct{}]
	// touches keeps verified impressions for post-view attribution (nil:
	// none is kept); conversions counts conversions once; currency is
	// the install's (docs/api.md#conversions).
	touches     *attribution.Recorder
	conversions ConversionStore
	currency    string
}

func newDecider(engine *delivery.Engine, signer *tracking.Signer, ttl time.Duration, events *eventLines, now func() time.Time) *decider {
	if ttl <= 0 {
		ttl = tracking.DefaultTTL
	}
	return &decider{engine: engine, signer: signer, ttl: ttl, events: events, now: now,
		seen: otter.Must(&otter.Options[[17]byte, struct{}]{MaximumSize: 2_000_000, ExpiryCalculator: otter.ExpiryWriting[[17]byte, struct{}](ttl)})}
}

// rngPool holds the lotteries' random sources (math/rand/v2's PCG, seeded
// from crypto/rand): one per goroutine at a time, no lock.
var rngPool = sync.Pool{New: func() any {
	var seed [16]byte
	rand.Read(seed[:])
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
}}

// handleDecisions serves POST /api/v1/decisions (a JSON body) and GET
// /api/v1/decisions?placement=…&… (one slot): for each slot, the chosen
// ads with signed tracking URLs (docs/api.md#decisions).
func handleDecisions(d *decider) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		// Any page may ask (the tag does, from the publisher's origin):
		// the answer holds nothing of a credential's. No cache may keep
		// it: every answer is a new decision with URLs of its own.
		anyOrigin(ctx)
		noStore(ctx)
		in := decisionInput{GDPR: -1}
		if ctx.IsPost() {
			if err := checkJSONBody(ctx, MaxDecisionBody); err != nil {
				return err
			}
			sc := scratches.Get().(*requestScratch)
			defer sc.release() // in points into it until the answer is written
			if err := readDecision(sc, ctx.PostBody(), &in); err != nil {
				return err
			}
		} else if err := decisionFromQuery(ctx.QueryArgs(), &in); err != nil {
			return err
		}
		plan := d.engine.Plan()
		var slots [4]delivery.Slot // a page's usual few, without allocation
		now := d.now()
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
		req, lim, err := d.request(ctx, &in, plan, slots[:], now)
		if err != nil {
			if !ctx.IsPost() {
				return asParams(err)
			}
			return err
		}
		r, key := &req, in.UserKey
		var why [][]delivery.Candidate
		r.Preview = in.Preview
		if in.Explain || in.Preview {
			p, err := d.authenticate(ctx)
			if err != nil {
				return err
			}
			if !p.Scopes.Has(marquee.ScopeCampaignsRead) {
				return &marquee.Error{Kind: marquee.KindForbidden, Message: "forbidden", Missing: marquee.ScopeCampaignsRead}
			}
			if p.Bounds.Bound() { // explain names every campaign
				return marquee.Errorf(marquee.KindForbidden, "forbidden: explain and preview are not open to an advertiser's or a publisher's account")
			}
		}
		rnd := rngPool.Get().(*mrand.Rand)
		cctx, cancel := d.countersContext()
		var chosen [][]delivery.Choice
		var outcomes [MaxSlots]marquee.Outcome
		if in.Explain {
			chosen, why = d.engine.Explain(cctx, r, now, rnd, outcomes[:])
		} else {
			chosen = d.engine.DecideOutcomes(cctx, r, now, rnd, outcomes[:])
		}
		cancel()
		if !r.Preview {
			d.countRequests(ctx, &in, plan, r, outcomes[:len(r.Slots)], lim, now)
			if d.bids != nil {
				d.countBids(plan, r, chosen, now)
			}
		}
		defer rngPool.Put(rnd)
		// The answer is written by hand (encoding/json of it was 40% of a
		// decision's cost): {"user":{"key"},"decisions":{div:[…]},"explain":…}.
		var head [320]byte
		urlHead := appendURLHead(head[:0], ctx)
		bp := pagePool.Get().(*[]byte)
		out := append((*bp)[:0], '{')
		if len(key) > 0 && r.User != 0 {
			out = append(out, `"user":{"key":`...)
			out, _ = jsonstr.Append(out, key)
			out = append(out, "},"...)
		}
		out = append(out, `"decisions":{`...)
		for i, s := range r.Slots {
			if i > 0 {
				out = append(out, ',')
			}
			out, _ = jsonstr.Append(out, []byte(s.Div))
			out = append(out, ":["...)
			for k, ch := range chosen[i] {
				if k > 0 {
					out = append(out, ',')
				}
				out = d.appendChoice(out, urlHead, &r.Slots[i], r, &in, lim, ch, now, rnd)
			}
			out = append(out, ']')
		}
		out = append(out, '}')
		out = appendPassbacks(out, plan, r, chosen)
		if why != nil {
			ex := make(map[string][]delivery.Candidate, len(r.Slots))
			for i, s := range r.Slots {
				ex[s.Div] = append([]delivery.Candidate{}, why[i]...)
			}
			j, err := json.Marshal(ex)
			if err != nil {
				return err
			}
			out = append(append(out, `,"explain":`...), j...)
		}
		out = append(out, '}')
		ctx.SetContentTypeBytes(contentTypeJSON)
		*bp = ctx.Response.SwapBody(out)
		pagePool.Put(bp)
		return nil
	}
}

// appendChoice appends a choice as the answer shows it —
// {"adId","campaignId","creative","clickUrl","impressionUrl","viewUrl"},
// an HTML creative's or an untrusted tag's "frameUrl", a trusted tag's
// "tagHtml" and the creative's third-party "impressionTrackers" and
// "clickTrackers", their macros filled ("default":true for a placement's
// default ad, in place of campaignId) — with its tracking URLs: one
// decision id and one signed token for the three (none for a preview,
// which must not count). urlHead is the JSON-quoted scheme and host,
// without its closing quote; in the request, for the macros.
func (d *decider) appendChoice(b, urlHead []byte, slot *delivery.Slot, r *delivery.Request, in *decisionInput, lim privacy.Limit, ch delivery.Choice, now time.Time, rnd *mrand.Rand) []byte {
	if ch.Bid != nil {
		return d.appendBid(b, urlHead, slot, r, lim, ch, now, rnd)
	}
	b = append(b, `{"adId":"`...)
	b = strconv.AppendInt(b, ch.Ad.ID, 10)
	if ch.Default { // a placement's default ad counts for no campaign
		b = append(b, `","default":true`...)
	} else {
		b = append(b, `","campaignId":"`...)
		b = strconv.AppendInt(b, ch.Campaign.ID, 10)
		b = append(b, '"')
	}
	if len(ch.Ad.CreativeJSON) > 0 {
		b = append(append(b, `,"creative":`...), ch.Ad.CreativeJSON...)
	}
	if r.Preview {
		return append(b, '}')
	}
	var scratch [256]byte
	token, _ := d.sign(scratch[:0], slot, r, lim, ch, now, rnd) // base64url: no JSON escaping
	if ch.Ad.Creative != nil && ch.Ad.Creative.ClickURL != "" {
		b = appendTrackingURL(b, `,"clickUrl":`, urlHead, tracking.Click, token)
	}
	b = appendTrackingURL(b, `,"impressionUrl":`, urlHead, tracking.Impression, token)
	b = appendTrackingURL(b, `,"viewUrl":`, urlHead, tracking.View, token)
	c := ch.Ad.Creative
	if c == nil {
		return append(b, '}')
	}
	if c.Type == marquee.CreativeHTML || c.Type == marquee.CreativeTag && !c.Trusted {
		b = append(append(append(b, `,"frameUrl":`...), urlHead...), FramePrefix...)
		b = append(b, token...)
		if c.Type == marquee.CreativeTag { // the page's own values, for the tag's macros
			b = append(b, frameQuery(in)...)
		}
		b = append(b, '"')
	}
	if c.Type == marquee.CreativeTag && c.Trusted || len(c.ImpressionTrackers) > 0 || len(c.ClickTrackers) > 0 {
		v := macroValues(in, slot, ch, now, rnd)
		if bytes.IndexByte(urlHead, '\\') < 0 { // a host JSON had to escape is no URL's
			v.ClickURL = string(tracking.AppendPath(urlOf(urlHead), tracking.Click, token))
		}
		if c.Type == marquee.CreativeTag && c.Trusted {
			b = append(b, `,"tagHtml":`...)
			b, _ = jsonstr.Append(b, macro.Expand(nil, c.HTML, &v, macro.HTML))
		}
		b = appendTrackers(b, `,"impressionTrackers":[`, c.ImpressionTrackers, &v)
		b = appendTrackers(b, `,"clickTrackers":[`, c.ClickTrackers, &v)
	}
	return append(b, '}')
}

// appendBid appends a header-bidding bid that won its slot as the
// answer shows it — {"bidder","adId" (Prebid's: what renders it),"cpm"
// (as the bid said),"size","dealId"} — with its tracking URLs: the tag
// fires the impression once Prebid rendered it, the view by MRC's rule,
// and the click URL (a pixel, not a redirect: the bid's creative has its
// own landing page) when the visitor clicks into its frame.
func (d *decider) appendBid(b, urlHead []byte, slot *delivery.Slot, r *delivery.Request, lim privacy.Limit, ch delivery.Choice, now time.Time, rnd *mrand.Rand) []byte {
	bid := ch.Bid
	b = append(b, `{"bidder":`...)
	b, _ = jsonstr.Append(b, []byte(bid.Bidder))
	b = append(b, `,"adId":`...)
	b, _ = jsonstr.Append(b, bid.AdID)
	b = append(b, `,"cpm":`...)
	b = strconv.AppendFloat(b, float64(bid.CPM)/1e6, 'f', -1, 64)
	if bid.Size != "" {
		b = append(append(append(b, `,"size":"`...), bid.Size...), '"') // checked: digits and an x
	}
	if bid.Deal != "" {
		b = append(b, `,"dealId":`...)
		b, _ = jsonstr.Append(b, []byte(bid.Deal))
	}
	if r.Preview {
		return append(b, '}')
	}
	var scratch [320]byte // a bidder's name makes the token longer than an ad's
	token, _ := d.sign(scratch[:0], slot, r, lim, ch, now, rnd)
	b = appendTrackingURL(b, `,"clickUrl":`, urlHead, tracking.Click, token)
	b = appendTrackingURL(b, `,"impressionUrl":`, urlHead, tracking.Impression, token)
	b = appendTrackingURL(b, `,"viewUrl":`, urlHead, tracking.View, token)
	return append(b, '}')
}

// appendTrackingURL appends key (`,"name":`) and the tracking URL of kind
// for token — urlHead (the JSON-quoted scheme and host, unclosed), the
// path, the closing quote. A token is base64url: nothing to escape.
func appendTrackingURL(b []byte, key string, urlHead []byte, kind byte, token []byte) []byte {
	return append(tracking.AppendPath(append(append(b, key...), urlHead...), kind, token), '"')
}

// appendPassbacks appends, for the slots of r nothing filled whose
// placement has a passback, ,"passbacks":{div:{"html","width","height"}}
// — the size its first — and nothing when there is none.
func appendPassbacks(out []byte, plan *delivery.Plan, r *delivery.Request, chosen [][]delivery.Choice) []byte {
	n := 0
	for i, s := range r.Slots {
		pl, ok := plan.Placement(s.Placement)
		if len(chosen[i]) > 0 || !ok || pl.Passback == "" {
			continue
		}
		if n++; n == 1 {
			out = append(out, `,"passbacks":{`...)
		} else {
			out = append(out, ',')
		}
		out, _ = jsonstr.Append(out, []byte(s.Div))
		out = append(out, `:{"html":`...)
		out, _ = jsonstr.Append(out, []byte(pl.Passback))
		var w, h int
		if len(pl.Sizes) > 0 {
			fmt.Sscanf(pl.Sizes[0], "%dx%d", &w, &h)
		}
		out = fmt.Appendf(out, `,"width":%d,"height":%d}`, w, h)
	}
	if n > 0 {
		out = append(out, '}')
	}
	return out
}

// appendTrackers appends the trackers urls, their macros filled from v,
// as a JSON array after key (nothing without any).
func appendTrackers(b []byte, key string, urls []string, v *macro.Values) []byte {
	if len(urls) == 0 {
		return b
	}
	b = append(b, key...)
	for i, u := range urls {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsonstr.Append(b, macro.Expand(nil, u, v, macro.URL))
	}
	return append(b, ']')
}

// macroValues are the values of a choice's macros in request in (its page
// and consent) but the click URL.
func macroValues(in *decisionInput, slot *delivery.Slot, ch delivery.Choice, now time.Time, rnd *mrand.Rand) macro.Values {
	v := macro.Values{Random: rnd.Uint64(), Timestamp: now, PageURL: string(in.URL), GDPRConsent: string(in.TCF),
		Placement: slot.Placement, Campaign: ch.Campaign.ID, Ad: ch.Ad.ID}
	if in.GDPR >= 0 {
		v.GDPR = strconv.Itoa(int(in.GDPR))
	}
	return v
}

// frameQuery is what an untrusted tag's frame URL carries of the page for
// its macros: ?u=<page URL>&g=<gdpr>&c=<consent> (unsigned: they only
// fill macros, escaped where they stand).
func frameQuery(in *decisionInput) []byte {
	q := url.Values{}
	if len(in.URL) > 0 {
		q.Set("u", string(in.URL))
	}
	if in.GDPR >= 0 {
		q.Set("g", strconv.Itoa(int(in.GDPR)))
	}
	if len(in.TCF) > 0 {
		q.Set("c", string(in.TCF))
	}
	if len(q) == 0 {
		return nil
	}
	return []byte("?" + q.Encode()) // query-escaped: nothing for JSON to escape
}

// urlOf is the scheme and host of urlHead (JSON-quoted, without its
// closing quote) as a URL's head.
func urlOf(urlHead []byte) []byte {
	return bytes.TrimPrefix(urlHead, []byte(`"`))
}

// countersContext is the context of a decision's calls to its counters:
// a round trip to shared counters is bounded (countersTimeout); memory
// needs no deadline.
func (d *decider) countersContext() (context.Context, context.CancelFunc) {
	if d.shared {
		return context.WithTimeout(context.Background(), countersTimeout)
	}
	return context.Background(), func() {}
}

// sign appends to dst the signed token of a choice in slot, under a new
// decision id, which it also returns: one token serves every tracking URL
// of the choice, and carries the request's privacy limit, and the slot's
// values of the report keys, to its events.
func (d *decider) sign(dst []byte, slot *delivery.Slot, r *delivery.Request, lim privacy.Limit, ch delivery.Choice, now time.Time, rnd *mrand.Rand) ([]byte, [16]byte) {
	p := tracking.Payload{Ad: ch.Ad.ID, Campaign: ch.Campaign.ID, Placement: slot.Placement, UserHash: r.User, Issued: now, Expires: now.Add(d.ttl),
		Limit: uint8(lim), Country: r.Viewer.CountryCode(), Platform: targeting.PlatformName(r.Viewer.Platform)}
	if len(d.reportKeys) > 0 {
		kvs := r.Viewer.KV
		if slot.KV != nil {
			kvs = slot.KV
		}
		p.KV = reportKV(d.reportKeys, kvs)
	}
	// A decision id needs to be unique, not secret (the MAC guards the
	// token): 128 bits of the request's PCG, seeded from crypto/rand.
	binary.LittleEndian.PutUint64(p.Decision[:8], rnd.Uint64())
	binary.LittleEndian.PutUint64(p.Decision[8:], rnd.Uint64())
	p.PriceMicros = ch.Campaign.PriceMicros
	if ch.Bid != nil { // a bid's events are its bidder's, at its adjusted CPM
		p.Bidder, p.PriceMicros = ch.Bid.Bidder, ch.BidCPM
	}
	return d.signer.Append(dst, &p), p.Decision
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

// appendURLHead appends the scheme and host the request came to, JSON
// quoted without the closing quote: the head of its absolute tracking
// URLs.
func appendURLHead(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	var raw [300]byte
	dst, _ = jsonstr.Append(dst, appendOrigin(raw[:0], ctx))
	return dst[:len(dst)-1]
}

// countRequests counts each slot of decision r at now and its outcome
// (outcomes, by slot)
// (docs/api.md#requests-and-fill): by placement, UTC hour, the viewer's
// country and device type. A slot no campaign could target while the
// visitor's consent was refused counts as unfilled for consent.
func (d *decider) countRequests(ctx *fasthttp.RequestCtx, in *decisionInput, plan *delivery.Plan, r *delivery.Request, outcomes []marquee.Outcome, lim privacy.Limit, now time.Time) {
	if d.samples != nil {
		d.sample(ctx, in, plan, r, lim, now)
	}
	if d.requests == nil {
		return
	}
	k := reports.RequestKey{Hour: now.Unix() / 3600 * 3600}
	copy(k.Country[:], r.Viewer.CountryCode())
	device := r.Viewer.Device
	if device == "" {
		ua := in.UserAgent
		if len(ua) == 0 {
			ua = ctx.UserAgent()
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
		d.requests.Count(k, o)
	}
}

// sample offers each slot of decision r at now to the forecasts' sample:
// a kept request's viewer is the decision's with the slot's key-values,
// and, when the visitor did not limit consent (lim), every attribute
// targeting reads filled in (reports.SampleNeeds: what no tree of the
// plan needed was not read for the decision).
func (d *decider) sample(ctx *fasthttp.RequestCtx, in *decisionInput, plan *delivery.Plan, r *delivery.Request, lim privacy.Limit, now time.Time) {
	for i := range r.Slots {
		s := &r.Slots[i]
		pl, ok := plan.Placement(s.Placement)
		if !ok {
			continue
		}
		v := r.Viewer
		if s.KV != nil {
			v.KV = s.KV
		}
		d.samples.Offer(pl.ID, now, func(v *targeting.Viewer) {
			if lim == privacy.None {
				_ = d.fillViewer(ctx, in, v, reports.SampleNeeds&^plan.Needs()) // checked for the decision already
			}
		}, &v, r.Keywords)
	}
}
