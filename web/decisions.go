package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"

	"marquee"
	"marquee/auth"
	"marquee/delivery"
	"marquee/eventline"
	"marquee/jsonstr"
	"marquee/privacy"
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

// decisionEnv is what the decision and tracking routes use.
type decisionEnv struct {
	engine *delivery.Engine
	signer *tracking.Signer
	ttl    time.Duration
	events *eventEnv
	now    func() time.Time
	// shared says the counters are another server's (Redis): their calls
	// get a deadline.
	shared bool
	// authenticate tells who a request is (for explain, which needs
	// campaigns:read).
	authenticate func(*fasthttp.RequestCtx) (auth.Principal, error)
	// seen holds the decision ids (and kinds) counted here within the
	// tracking URLs' life: a URL fired twice counts once on an instance.
	seen *otter.Cache[[17]byte, struct{}]
}

func newDecisionEnv(engine *delivery.Engine, signer *tracking.Signer, ttl time.Duration, events *eventEnv, now func() time.Time) *decisionEnv {
	if ttl <= 0 {
		ttl = tracking.DefaultTTL
	}
	return &decisionEnv{engine: engine, signer: signer, ttl: ttl, events: events, now: now,
		seen: otter.Must(&otter.Options[[17]byte, struct{}]{MaximumSize: 2_000_000, ExpiryCalculator: otter.ExpiryWriting[[17]byte, struct{}](ttl)})}
}

// rngPool holds the lotteries' random sources (math/rand/v2's PCG, seeded
// from crypto/rand): one per goroutine at a time, no lock.
var rngPool = sync.Pool{New: func() any {
	var seed [16]byte
	rand.Read(seed[:])
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
}}

// decisionInput is a decision request as sent (a JSON body, or a GET's
// parameters). Its byte slices point into the request or the parser that
// read it: valid until the answer is written.
type decisionInput struct {
	Placements []decisionSlot
	UserKey    []byte // empty: no user
	Age        optInt
	Gender     []byte
	Country    []byte
	Platform   []byte
	Keywords   [][]byte
	URL        []byte
	// IP and UserAgent are the viewer's, when a server-to-server client
	// decides for one (as Kevel's decision API takes them); else the
	// request's own are the viewer's.
	IP        []byte
	UserAgent []byte
	// GDPR, TCF and Given are what consent says: whether GDPR applies
	// (privacy.ParseGDPR), the TCF v2 string, the publisher's own word.
	GDPR    int8
	TCF     []byte
	Given   privacy.Said
	Explain bool
	Preview bool
}

// decisionSlot is one slot of a request: {"div","placement","count"}.
type decisionSlot struct {
	Div, Placement []byte
	Count          optInt
}

// optInt is an integer a request may leave out.
type optInt struct {
	N   int
	Set bool
}

// parsers parse decision requests (fastjson: encoding/json's reflection
// was a fifth of a decision's cost).
var parsers fastjson.ParserPool

// slotPaths name the slots of a request in its problems.
var slotPaths = func() (out [MaxSlots + 1]string) {
	for i := range out {
		out[i] = "placements[" + strconv.Itoa(i) + "]"
	}
	return out
}()

// problems collects a request's problems; its map is made at the first.
type problems struct{ m marquee.Problems }

func (p *problems) add(field, problem string) {
	if p.m == nil {
		p.m = marquee.Problems{}
	}
	p.m[field] = problem
}

// readDecision reads a decision request's JSON body into in with jp,
// which in's slices then point into (put jp back after the answer),
// naming every field of the wrong type; fields it does not know are
// ignored.
func readDecision(jp *fastjson.Parser, body []byte, in *decisionInput) error {
	v, err := jp.ParseBytes(body)
	if err == nil && v.Type() != fastjson.TypeObject {
		err = errors.New("not an object")
	}
	if err != nil {
		return marquee.Invalid("invalid decision request", marquee.Problems{"body": "must be a JSON object: " + err.Error()})
	}
	var p problems
	str := func(v *fastjson.Value, path, field string) []byte {
		b, err := v.StringBytes()
		if err != nil {
			p.add(path+field, "must be a string")
		}
		return b
	}
	integer := func(v *fastjson.Value, path, field string) optInt {
		n, err := v.Int()
		if err != nil {
			p.add(path+field, "must be an integer")
		}
		return optInt{n, err == nil}
	}
	o, _ := v.Object()
	o.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "placements":
			slots, err := v.Array()
			if err != nil {
				p.add("placements", "must be an array of slots")
			}
			if len(slots) > MaxSlots { // refused before any slot is read
				p.add("placements", fmt.Sprintf("must hold at most %d slots", MaxSlots))
				in.Placements = nil
				return
			}
			in.Placements = make([]decisionSlot, 0, len(slots))
			for i, sv := range slots {
				var slot decisionSlot
				path := slotPaths[min(i, MaxSlots)] // past MaxSlots, the request is refused anyway
				so, err := sv.Object()
				if err != nil {
					p.add(path, `must be an object {"div","placement","count"}`)
				}
				so.Visit(func(k []byte, v *fastjson.Value) {
					switch string(k) {
					case "div":
						slot.Div = str(v, path, ".div")
					case "placement":
						slot.Placement = str(v, path, ".placement")
					case "count":
						slot.Count = integer(v, path, ".count")
					}
				})
				in.Placements = append(in.Placements, slot)
			}
		case "user":
			if key := v.Get("key"); v.Type() != fastjson.TypeObject && v.Type() != fastjson.TypeNull {
				p.add("user", `must be an object {"key"}`)
			} else if key != nil {
				in.UserKey = str(key, "user", ".key")
			}
		case "age":
			in.Age = integer(v, "", "age")
		case "gender":
			in.Gender = str(v, "", "gender")
		case "country":
			in.Country = str(v, "", "country")
		case "platform":
			in.Platform = str(v, "", "platform")
		case "url":
			in.URL = str(v, "", "url")
		case "ip":
			in.IP = str(v, "", "ip")
		case "userAgent":
			in.UserAgent = str(v, "", "userAgent")
		case "keywords":
			kws, err := v.Array()
			if err != nil {
				p.add("keywords", "must be an array of strings")
			}
			for i, kv := range kws {
				in.Keywords = append(in.Keywords, str(kv, "keywords", "["+strconv.Itoa(i)+"]"))
			}
		case "consent":
			readConsent(v, in, &p)
		case "explain", "preview":
			b, err := v.Bool()
			if err != nil {
				p.add(string(k), "must be true or false")
			}
			if k[0] == 'e' {
				in.Explain = b
			} else {
				in.Preview = b
			}
		}
	})
	return marquee.Invalid("invalid decision request", p.m)
}

// readConsent reads a body's "consent": {"gdpr": 1|0|true|false, "tcf":
// "<TCF v2 string>", "given": true|false}.
func readConsent(v *fastjson.Value, in *decisionInput, p *problems) {
	o, err := v.Object()
	if err != nil {
		p.add("consent", `must be an object {"gdpr","tcf","given"}`)
		return
	}
	o.Visit(func(k []byte, f *fastjson.Value) {
		switch string(k) {
		case "gdpr":
			switch f.Type() {
			case fastjson.TypeTrue:
				in.GDPR = 1
			case fastjson.TypeFalse:
				in.GDPR = 0
			case fastjson.TypeNumber:
				if n, err := f.Int(); err == nil && (n == 0 || n == 1) {
					in.GDPR = int8(n)
					return
				}
				p.add("consent.gdpr", "must be 0, 1, true or false")
			default:
				p.add("consent.gdpr", "must be 0, 1, true or false")
			}
		case "tcf":
			b, err := f.StringBytes()
			if err != nil {
				p.add("consent.tcf", "must be a string")
			}
			in.TCF = b
		case "given":
			switch f.Type() {
			case fastjson.TypeTrue:
				in.Given = privacy.Yes
			case fastjson.TypeFalse:
				in.Given = privacy.No
			default:
				p.add("consent.given", "must be true or false")
			}
		default:
			p.add("consent."+string(k), "is not a field of consent (gdpr, tcf, given)")
		}
	})
}

// parseDecision checks a request against the plan, every problem named,
// and returns it in the engine's words (its strings the plan's own where
// it can: no copy of a placement, country or platform name).
func parseDecision(in *decisionInput, plan *delivery.Plan, slots []delivery.Slot) (delivery.Request, error) {
	var p problems
	r := delivery.Request{Slots: slots[:0]}
	switch n := len(in.Placements); {
	case n == 0:
		p.add("placements", `is required: the slots to fill, [{"div","placement","count"}]`)
	case n > MaxSlots:
		p.add("placements", fmt.Sprintf("must hold at most %d slots", MaxSlots))
	}
	for i, s := range in.Placements {
		path := slotPaths[min(i, MaxSlots)]
		var name string
		if pl, ok := plan.Placement(string(s.Placement)); ok {
			name = pl.Name
		} else {
			name = string(s.Placement)
			p.add(path+".placement", fmt.Sprintf("no placement %q", s.Placement))
		}
		div := name
		if len(s.Div) > 0 && !bytes.Equal(s.Div, s.Placement) {
			div = string(s.Div)
		}
		switch {
		case div == "" || len(div) > 64:
			p.add(path+".div", "must be 1 to 64 characters (default: the placement's name)")
		case slices.ContainsFunc(r.Slots, func(s delivery.Slot) bool { return s.Div == div }):
			p.add(path+".div", fmt.Sprintf("%q names two slots", div))
		}
		count := 1
		if s.Count.Set {
			if count = s.Count.N; count < 1 || count > MaxSlotCount {
				p.add(path+".count", fmt.Sprintf("must be from 1 to %d", MaxSlotCount))
			}
		}
		r.Slots = append(r.Slots, delivery.Slot{Div: div, Placement: name, Count: count})
	}
	// The viewer is compiled here, once: delivery matches its codes.
	if in.Age.Set {
		if r.Viewer.Age = in.Age.N; r.Viewer.Age < marquee.MinAge || r.Viewer.Age > marquee.MaxAge {
			p.add("age", fmt.Sprintf("must be an integer between %d and %d", marquee.MinAge, marquee.MaxAge))
		}
	}
	if len(in.Gender) > 0 {
		if r.Viewer.Gender = targeting.GenderCode(in.Gender); r.Viewer.Gender == 0 {
			p.add("gender", fmt.Sprintf(`must be "M" or "F", got %q`, in.Gender))
		}
	}
	if len(in.Country) > 0 {
		if slot, ok := marquee.CountrySlot(in.Country); ok {
			r.Viewer.Country = slot + 1
		} else {
			p.add("country", fmt.Sprintf("unknown ISO 3166-1 alpha-2 code %q", in.Country))
		}
	}
	if len(in.Platform) > 0 {
		if r.Viewer.Platform = targeting.PlatformCode(in.Platform); r.Viewer.Platform == 0 {
			p.add("platform", marquee.PlatformProblem(string(in.Platform)))
		}
	}
	if len(in.Keywords) > marquee.MaxKeywords {
		p.add("keywords", fmt.Sprintf("must hold at most %d keywords", marquee.MaxKeywords))
	}
	for _, k := range in.Keywords {
		r.Keywords = append(r.Keywords, strings.ToLower(string(bytes.TrimSpace(k))))
	}
	if key := in.UserKey; len(key) > maxUserKey {
		p.add("user.key", fmt.Sprintf("must be at most %d bytes", maxUserKey))
	}
	return r, marquee.Invalid("invalid decision request", p.m)
}

// request is a decision request checked against the plan
// (parseDecision), its user the pseudonym of its key at now — none when
// the request's consent (its body's or parameters', and Sec-GPC) says
// the visitor is not to be followed, which lim says.
func (d *decisionEnv) request(ctx *fasthttp.RequestCtx, in *decisionInput, plan *delivery.Plan, slots []delivery.Slot, now time.Time) (r delivery.Request, lim privacy.Limit, err error) {
	if r, err = parseDecision(in, plan, slots); err != nil {
		return r, lim, err
	}
	if err = d.fillViewer(ctx, in, &r); err != nil {
		return r, lim, err
	}
	pol := d.events.privacy
	lim = pol.Limit(privacy.Signal{GPC: sentGPC(ctx), GDPR: in.GDPR, TCF: in.TCF, Given: in.Given})
	r.User = pol.User(in.UserKey, now, lim)
	return r, lim, nil
}

// fillViewer fills what the request leaves out of its viewer from the
// viewer's address and User-Agent — the body's ip and userAgent, else the
// request's own (its client's address through the trusted proxies): the
// country from GeoIP (-geoip), the platform from the User-Agent. What
// stays unknown matches no targeting of it (targeting fails closed).
func (d *decisionEnv) fillViewer(ctx *fasthttp.RequestCtx, in *decisionInput, r *delivery.Request) error {
	if r.Viewer.Country == 0 && d.events.geo != nil {
		ip := d.events.addr(ctx)
		if len(in.IP) > 0 {
			a, err := netip.ParseAddr(string(in.IP))
			if err != nil {
				return marquee.Invalid("invalid decision request", marquee.Problems{"ip": "must be an IPv4 or IPv6 address"})
			}
			ip = a.Unmap()
		}
		r.Viewer.SetCountry(d.events.geo.Country(ip))
	}
	if r.Viewer.Platform == 0 {
		ua := in.UserAgent
		if len(ua) == 0 {
			ua = ctx.UserAgent()
		}
		if len(bytes.TrimSpace(ua)) > 0 {
			r.Viewer.Platform = targeting.PlatformCode(marquee.UAPlatform(ua))
		}
	}
	return nil
}

// handleDecisions serves POST /api/v1/decisions (a JSON body) and GET
// /api/v1/decisions?placement=…&… (one slot): for each slot, the chosen
// ads with signed tracking URLs (docs/api.md#decisions).
func handleDecisions(d *decisionEnv) handler {
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
			jp := parsers.Get()
			defer parsers.Put(jp) // in points into it until the answer is written
			if err := readDecision(jp, ctx.PostBody(), &in); err != nil {
				return err
			}
		} else if err := decisionFromQuery(ctx.QueryArgs(), &in); err != nil {
			return err
		}
		plan := d.engine.Plan()
		var slots [4]delivery.Slot // a page's usual few, without allocation
		now := d.now()
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
		}
		rnd := rngPool.Get().(*mrand.Rand)
		cctx, cancel := d.countersContext()
		var chosen [][]delivery.Choice
		if in.Explain {
			chosen, why = d.engine.Explain(cctx, r, now, rnd)
		} else {
			chosen = d.engine.Decide(cctx, r, now, rnd)
		}
		cancel()
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
				out = d.appendChoice(out, urlHead, s.Placement, r, lim, ch, now, rnd)
			}
			out = append(out, ']')
		}
		out = append(out, '}')
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
// and an HTML creative's "frameUrl" ("default":true for a placement's
// default ad, in place of campaignId) —
// with its tracking URLs: one decision id and one signed token for the
// three (none for a preview, which must not count). urlHead is the
// JSON-quoted scheme and host, without its closing quote.
func (d *decisionEnv) appendChoice(b, urlHead []byte, placement string, r *delivery.Request, lim privacy.Limit, ch delivery.Choice, now time.Time, rnd *mrand.Rand) []byte {
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
	token, _ := d.sign(scratch[:0], placement, r, lim, ch, now, rnd) // base64url: no JSON escaping
	url := func(key string, kind byte) {
		b = append(append(append(b, key...), urlHead...), tracking.Prefix...)
		b = append(append(append(b, kind, '/'), token...), '"')
	}
	if ch.Ad.Creative != nil && ch.Ad.Creative.ClickURL != "" {
		url(`,"clickUrl":`, tracking.Click)
	}
	url(`,"impressionUrl":`, tracking.Impression)
	url(`,"viewUrl":`, tracking.View)
	if ch.Ad.Creative != nil && ch.Ad.Creative.Type == marquee.CreativeHTML {
		b = append(append(append(b, `,"frameUrl":`...), urlHead...), FramePrefix...)
		b = append(append(b, token...), '"')
	}
	return append(b, '}')
}

// countersContext is the context of a decision's calls to its counters:
// a round trip to shared counters is bounded (countersTimeout); memory
// needs no deadline.
func (d *decisionEnv) countersContext() (context.Context, context.CancelFunc) {
	if d.shared {
		return context.WithTimeout(context.Background(), countersTimeout)
	}
	return context.Background(), func() {}
}

// sign appends to dst the signed token of a choice, under a new
// decision id, which it also returns: one token serves every tracking URL
// of the choice, and carries the request's privacy limit to its events.
func (d *decisionEnv) sign(dst []byte, placement string, r *delivery.Request, lim privacy.Limit, ch delivery.Choice, now time.Time, rnd *mrand.Rand) ([]byte, [16]byte) {
	p := tracking.Payload{Ad: ch.Ad.ID, Campaign: ch.Campaign.ID, Placement: placement, UserHash: r.User, Issued: now, Expires: now.Add(d.ttl),
		Limit: uint8(lim), Country: r.Viewer.CountryCode(), Platform: targeting.PlatformName(r.Viewer.Platform)}
	// A decision id needs to be unique, not secret (the MAC guards the
	// token): 128 bits of the request's PCG, seeded from crypto/rand.
	binary.LittleEndian.PutUint64(p.Decision[:8], rnd.Uint64())
	binary.LittleEndian.PutUint64(p.Decision[8:], rnd.Uint64())
	p.PriceMicros = ch.Campaign.PriceMicros
	return d.signer.Append(dst, &p), p.Decision
}

// appendURLHead appends the scheme and host the request came to, JSON
// quoted without the closing quote: the head of its absolute tracking
// URLs.
func appendURLHead(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	var raw [300]byte
	dst, _ = jsonstr.Append(dst, appendOrigin(raw[:0], ctx))
	return dst[:len(dst)-1]
}

// asParams names the problems of a GET decision's one slot by its
// parameters (placement, div, count), not by the slot's path in a body.
func asParams(err error) error {
	var e *marquee.Error
	if errors.As(err, &e) {
		for k, v := range e.Problems {
			if param, ok := strings.CutPrefix(k, slotPaths[0]+"."); ok {
				delete(e.Problems, k)
				e.Problems[param] = v
			}
		}
	}
	return err
}

// decisionFromQuery reads GET /api/v1/decisions: one slot (placement,
// div, count) and the viewer's fields.
func decisionFromQuery(args *fasthttp.Args, in *decisionInput) error {
	pl, _ := param(args, "placement")
	div, _ := param(args, "div")
	slot := decisionSlot{Div: div, Placement: pl}
	var p problems
	if len(pl) == 0 {
		p.add("placement", "is required")
	}
	if v, ok := param(args, "count"); ok {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			p.add("count", "must be an integer")
		}
		slot.Count = optInt{n, true}
	}
	in.Placements = append(in.Placements, slot)
	if v, ok := param(args, "age"); ok {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			p.add("age", "must be an integer")
		}
		in.Age = optInt{n, true}
	}
	in.Gender, _ = param(args, "gender")
	in.Country, _ = param(args, "country")
	in.Platform, _ = param(args, "platform")
	if v, ok := param(args, "keywords"); ok {
		in.Keywords = bytes.Split(v, []byte(","))
	}
	in.UserKey, _ = param(args, "user")
	in.GDPR, in.TCF = queryConsent(args)
	return marquee.Invalid("invalid decision request", p.m)
}

// handleTracking serves GET /t/{kind}/{token}: a signed tracking URL
// (package tracking). An impression or view answers a 1×1 GIF (or 204)
// and records the event; a click records it and redirects to the
// creative's click URL with its macros filled. A token that is not ours
// is a 400, an expired one a 410, and neither is counted; the same URL
// fired again counts once on this instance (within the URL's life).
func handleTracking(d *decisionEnv) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		kind, token, ok := tracking.ParsePath(ctx.Path())
		if !ok {
			return tracking.ErrBadToken
		}
		p, err := d.signer.Open(token, d.now())
		if err != nil {
			return err
		}
		var target string
		if kind == tracking.Click {
			if target = d.clickTarget(ctx, &p, token); target == "" {
				return marquee.Errorf(marquee.KindNotFound, "this ad has no click URL")
			}
		}
		// A HEAD (a link checker's, a prefetch) counts nothing. Else the
		// URL is marked counted before its event is written, so that two
		// firings at once count once, and unmarked when the write fails, so
		// that the retry a 503 asks for counts it.
		if !ctx.IsHead() {
			key := markKey(kind, p.Decision)
			if _, fresh := d.seen.SetIfAbsent(key, struct{}{}); fresh {
				verified, keep := d.vouch(kind, &p)
				if keep {
					if err := d.record(ctx, kind, &p, verified); err != nil {
						d.seen.Invalidate(key)
						return err
					}
				}
				if kind == tracking.Impression && measured(ctx) {
					d.seen.Set(markKey(measuredMark, p.Decision), struct{}{})
				}
			}
		}
		if kind == tracking.Click {
			ctx.Response.Header.Set(fasthttp.HeaderLocation, target)
			ctx.SetStatusCode(fasthttp.StatusFound)
			return nil
		}
		noStore(ctx)
		if acceptsOnlyImages(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
			ctx.SetContentType("image/gif")
			ctx.SetBody(gif1x1)
			return nil
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// measuredMark marks, with a decision's id, that its impression counted
// and the tag measured its viewability (the impression URL's m=1).
const measuredMark = 'M'

// markKey is the key of the seen set for a kind of a decision.
func markKey(kind byte, decision [16]byte) (k [17]byte) {
	k[0] = kind
	copy(k[1:], decision[:])
	return k
}

// measured reports an impression URL fired with m=1: the tag measures
// the impression's viewability.
func measured(ctx *fasthttp.RequestCtx) bool {
	return bytes.Equal(ctx.QueryArgs().Peek("m"), []byte("1"))
}

// vouch says whether the decision vouches for an event of kind
// (verified: goals, pacing and spend count it) and whether it is written
// at all. An impression is verified; a click, or a video event of a video
// ad, when the decision's impression counted here; a view when the
// impression counted and its viewability was measured (a view of an
// unmeasured impression would make viewability exceed 100%); a
// conversion when the decision's click counted here. A video event of an
// ad that is not a video is not written: it cannot have happened.
// (docs/api.md#verified-counts)
func (d *decisionEnv) vouch(kind byte, p *tracking.Payload) (verified, keep bool) {
	seen := func(k byte) bool {
		_, ok := d.seen.GetIfPresent(markKey(k, p.Decision))
		return ok
	}
	switch kind {
	case tracking.Impression:
		return true, true
	case tracking.Click:
		return seen(tracking.Impression), true
	case tracking.View:
		return seen(measuredMark), true
	case tracking.Conversion:
		return seen(tracking.Click), true
	case tracking.Error:
		return false, true // reports do not count errors
	}
	if a, ok := d.engine.Plan().Ad(p.Ad); !ok || a.Creative == nil || a.Creative.Type != marquee.CreativeVideo {
		return false, false
	}
	return seen(tracking.Impression), true
}

// record writes the event of a tracking URL: its type, ad, campaign,
// placement and decision (what reports count it by), the hashed user,
// and verified when the decision vouches for it (vouch).
func (d *decisionEnv) record(ctx *fasthttp.RequestCtx, kind byte, p *tracking.Payload, verified bool) error {
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	var num [20]byte
	lim := privacy.Limit(p.Limit)
	if lim == privacy.None && sentGPC(ctx) {
		lim = privacy.GPC // the pixel's own request opts out
	}
	line := d.events.appendHead((*bp)[:0], ctx, lim)
	line = eventline.AppendPlain(line, "type", tracking.KindName(kind))
	line = eventline.AppendPlain(line, "ad", strconv.AppendInt(num[:0], p.Ad, 10))
	if p.Campaign != 0 {
		line = eventline.AppendPlain(line, "campaign", strconv.AppendInt(num[:0], p.Campaign, 10))
	} else { // only a placement's default ad is decided without a campaign
		line = eventline.AppendPlain(line, "defaultFill", "1")
	}
	line = eventline.AppendPlain(line, "placement", p.Placement) // placement names need no escaping
	line = eventline.AppendPlain(line, "decision", hex.AppendEncode(nil, p.Decision[:]))
	if p.UserHash != 0 && lim == privacy.None {
		line = eventline.AppendPlain(line, "uid", privacy.AppendName(num[:0], p.UserHash))
	}
	if verified {
		line = eventline.AppendPlain(line, "verified", "1")
	}
	if p.Country != "" { // the decision's viewer's: reports count tag traffic by them
		line = eventline.AppendPlain(line, "country", p.Country)
	}
	if p.Platform != "" {
		line = eventline.AppendPlain(line, "platform", p.Platform)
	}
	args := ctx.QueryArgs()
	switch kind {
	case tracking.Impression:
		if measured(ctx) { // the tag measures this impression's viewability
			line = eventline.AppendPlain(line, "measured", "1")
		}
	case tracking.Error:
		// VAST's [ERRORCODE] macro, filled in by the player: a number, or
		// the macro left as it is (no code).
		if code := args.Peek("code"); len(code) > 0 && len(code) <= 4 && isDigits(code) {
			line = eventline.AppendPlain(line, "code", code)
		}
	}
	line = eventline.End(line)
	*bp = line
	return d.events.sink.Append(ctx.ConnID(), line, 1)
}

// isDigits reports whether b is ASCII digits only.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// clickTarget is the click URL of the payload's ad with its macros
// filled — {placement}, {campaign}, {ad}, and {conversionUrl}, the
// decision's signed conversion URL (query-escaped) for the landing page
// to fire — or "" when it has none.
func (d *decisionEnv) clickTarget(ctx *fasthttp.RequestCtx, p *tracking.Payload, token []byte) string {
	a, ok := d.engine.Plan().Ad(p.Ad)
	if !ok || a.Creative == nil || a.Creative.ClickURL == "" {
		return ""
	}
	conv := ""
	if strings.Contains(a.Creative.ClickURL, "{conversionUrl}") {
		var raw [300]byte
		conv = url.QueryEscape(string(tracking.AppendPath(appendOrigin(raw[:0], ctx), tracking.Conversion, token)))
	}
	return strings.NewReplacer("{placement}", url.QueryEscape(p.Placement), "{campaign}", strconv.FormatInt(p.Campaign, 10),
		"{ad}", strconv.FormatInt(p.Ad, 10), "{conversionUrl}", conv).Replace(a.Creative.ClickURL)
}
