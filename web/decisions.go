package web

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
	"marquee/delivery"
	"marquee/eventline"
	"marquee/index"
	"marquee/jsonstr"
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

// decisionInput is a decision request's body as sent.
type decisionInput struct {
	Placements []struct {
		Div       string `json:"div"`
		Placement string `json:"placement"`
		Count     *int   `json:"count"`
	} `json:"placements"`
	User *struct {
		Key string `json:"key"`
	} `json:"user"`
	Age      *int            `json:"age"`
	Gender   string          `json:"gender"`
	Country  string          `json:"country"`
	Platform string          `json:"platform"`
	Keywords []string        `json:"keywords"`
	URL      string          `json:"url"`
	Consent  json.RawMessage `json:"consent"`
	Explain  bool            `json:"explain"`
	Preview  bool            `json:"preview"`
}

// parseDecision checks a request against the plan: every problem named.
func parseDecision(in *decisionInput, plan *delivery.Plan) (*delivery.Request, string, error) {
	p := marquee.Problems{}
	r := &delivery.Request{}
	switch n := len(in.Placements); {
	case n == 0:
		p["placements"] = "is required: the slots to fill, [{\"div\",\"placement\",\"count\"}]"
	case n > MaxSlots:
		p["placements"] = fmt.Sprintf("must hold at most %d slots", MaxSlots)
	}
	for i, s := range in.Placements {
		path := func() string { return "placements[" + strconv.Itoa(i) + "]" } // only for a problem
		div := cmp.Or(s.Div, s.Placement)
		switch {
		case div == "" || len(div) > 64:
			p[path()+".div"] = "must be 1 to 64 characters (default: the placement's name)"
		case slices.ContainsFunc(r.Slots, func(s delivery.Slot) bool { return s.Div == div }):
			p[path()+".div"] = fmt.Sprintf("%q names two slots", div)
		}
		if _, ok := plan.Placement(s.Placement); !ok {
			p[path()+".placement"] = fmt.Sprintf("no placement %q", s.Placement)
		}
		count := 1
		if s.Count != nil {
			if count = *s.Count; count < 1 || count > MaxSlotCount {
				p[path()+".count"] = fmt.Sprintf("must be from 1 to %d", MaxSlotCount)
			}
		}
		r.Slots = append(r.Slots, delivery.Slot{Div: div, Placement: s.Placement, Count: count})
	}
	if in.Age != nil {
		if r.Age = *in.Age; r.Age < marquee.MinAge || r.Age > marquee.MaxAge {
			p["age"] = fmt.Sprintf("must be an integer between %d and %d", marquee.MinAge, marquee.MaxAge)
		}
	}
	if in.Gender != "" {
		if index.GenderCode(in.Gender) == 0 {
			p["gender"] = fmt.Sprintf("must be \"M\" or \"F\", got %q", in.Gender)
		}
		r.Gender = strings.ToUpper(in.Gender)
	}
	if in.Country != "" {
		_, ok := marquee.CountrySlot(in.Country)
		if !ok {
			p["country"] = fmt.Sprintf("unknown ISO 3166-1 alpha-2 code %q", in.Country)
		}
		r.Country = strings.ToUpper(in.Country)
	}
	if in.Platform != "" {
		if index.PlatformCode(in.Platform) == 0 {
			p["platform"] = marquee.PlatformProblem(in.Platform)
		}
		r.Platform = strings.ToLower(in.Platform)
	}
	if len(in.Keywords) > marquee.MaxKeywords {
		p["keywords"] = fmt.Sprintf("must hold at most %d keywords", marquee.MaxKeywords)
	}
	for _, k := range in.Keywords {
		r.Keywords = append(r.Keywords, strings.ToLower(strings.TrimSpace(k)))
	}
	var key string
	if in.User != nil {
		if key = in.User.Key; len(key) > maxUserKey {
			p["user.key"] = fmt.Sprintf("must be at most %d bytes", maxUserKey)
		}
		if key != "" {
			sum := sha256.Sum256([]byte(key))
			r.User = binary.BigEndian.Uint64(sum[:8]) | 1 // never 0: 0 is "no user"
		}
	}
	return r, key, marquee.Invalid("invalid decision request", p)
}

// handleDecisions serves POST /api/v1/decisions (a JSON body) and GET
// /api/v1/decisions?placement=…&… (one slot): for each slot, the chosen
// ads with signed tracking URLs (docs/api.md#decisions).
func handleDecisions(d *decisionEnv) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		var in decisionInput
		if ctx.IsPost() {
			if err := checkJSONBody(ctx, MaxDecisionBody); err != nil {
				return err
			}
			if err := json.Unmarshal(ctx.PostBody(), &in); err != nil {
				return marquee.Invalid("invalid decision request", marquee.Problems{"body": "must be a JSON object: " + err.Error()})
			}
		} else if err := decisionFromQuery(ctx.QueryArgs(), &in); err != nil {
			return err
		}
		plan := d.engine.Plan()
		r, key, err := parseDecision(&in, plan)
		if err != nil {
			return err
		}
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
		now := d.now()
		rnd := rngPool.Get().(*mrand.Rand)
		cctx, cancel := context.Background(), func() {}
		if d.shared { // a round trip to shared counters is bounded; memory needs no deadline
			cctx, cancel = context.WithTimeout(cctx, countersTimeout)
		}
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
		if key != "" {
			out = append(out, `"user":{"key":`...)
			out, _ = jsonstr.Append(out, []byte(key))
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
				out = d.appendChoice(out, urlHead, s.Placement, r, ch, now, rnd)
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
// {"adId","campaignId","creative","clickUrl","impressionUrl","viewUrl"} —
// with its tracking URLs: one decision id and one signed token for the
// three (none for a preview, which must not count). urlHead is the
// JSON-quoted scheme and host, without its closing quote.
func (d *decisionEnv) appendChoice(b, urlHead []byte, placement string, r *delivery.Request, ch delivery.Choice, now time.Time, rnd *mrand.Rand) []byte {
	b = append(b, `{"adId":"`...)
	b = strconv.AppendInt(b, ch.Ad.ID, 10)
	b = append(b, `","campaignId":"`...)
	b = strconv.AppendInt(b, ch.Campaign.ID, 10)
	b = append(b, '"')
	if len(ch.Ad.CreativeJSON) > 0 {
		b = append(append(b, `,"creative":`...), ch.Ad.CreativeJSON...)
	}
	if r.Preview {
		return append(b, '}')
	}
	p := tracking.Payload{Ad: ch.Ad.ID, Campaign: ch.Campaign.ID, Placement: placement, UserHash: r.User, Issued: now, Expires: now.Add(d.ttl)}
	// A decision id needs to be unique, not secret (the MAC guards the
	// token): 128 bits of the request's PCG, seeded from crypto/rand.
	binary.LittleEndian.PutUint64(p.Decision[:8], rnd.Uint64())
	binary.LittleEndian.PutUint64(p.Decision[8:], rnd.Uint64())
	p.PriceMicros = ch.Campaign.PriceMicros
	var scratch [256]byte
	token := d.signer.Append(scratch[:0], &p) // base64url: no JSON escaping
	url := func(key string, kind byte) {
		b = append(append(append(b, key...), urlHead...), tracking.Prefix...)
		b = append(append(append(b, kind, '/'), token...), '"')
	}
	if ch.Ad.Creative != nil && ch.Ad.Creative.ClickURL != "" {
		url(`,"clickUrl":`, tracking.Click)
	}
	url(`,"impressionUrl":`, tracking.Impression)
	url(`,"viewUrl":`, tracking.View)
	return append(b, '}')
}

// appendURLHead appends the scheme and host the request came to, JSON
// quoted without the closing quote: the head of its absolute tracking
// URLs.
func appendURLHead(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	var raw [300]byte
	u := append(raw[:0], "http"...)
	if ctx.IsTLS() || bytes.Equal(ctx.Request.Header.Peek("X-Forwarded-Proto"), []byte("https")) {
		u = append(u, 's')
	}
	u = append(append(u, "://"...), ctx.Host()...)
	dst, _ = jsonstr.Append(dst, u)
	return dst[:len(dst)-1]
}

// decisionFromQuery reads GET /api/v1/decisions: one slot (placement,
// div, count) and the viewer's fields.
func decisionFromQuery(args *fasthttp.Args, in *decisionInput) error {
	pl, _ := param(args, "placement")
	div, _ := param(args, "div")
	slot := struct {
		Div       string `json:"div"`
		Placement string `json:"placement"`
		Count     *int   `json:"count"`
	}{Div: string(div), Placement: string(pl)}
	p := marquee.Problems{}
	if len(pl) == 0 {
		p["placement"] = "is required"
	}
	if v, ok := param(args, "count"); ok {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			p["count"] = "must be an integer"
		}
		slot.Count = &n
	}
	in.Placements = append(in.Placements, slot)
	if v, ok := param(args, "age"); ok {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			p["age"] = "must be an integer"
		}
		in.Age = &n
	}
	g, _ := param(args, "gender")
	c, _ := param(args, "country")
	pf, _ := param(args, "platform")
	in.Gender, in.Country, in.Platform = string(g), string(c), string(pf)
	if v, ok := param(args, "keywords"); ok {
		in.Keywords = strings.Split(string(v), ",")
	}
	if v, ok := param(args, "user"); ok {
		in.User = &struct {
			Key string `json:"key"`
		}{string(v)}
	}
	return marquee.Invalid("invalid decision request", p)
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
			if target = d.clickTarget(&p); target == "" {
				return marquee.Errorf(marquee.KindNotFound, "this ad has no click URL")
			}
		}
		var dedupe [17]byte
		dedupe[0] = kind
		copy(dedupe[1:], p.Decision[:])
		if _, fresh := d.seen.SetIfAbsent(dedupe, struct{}{}); fresh {
			if err := d.record(ctx, kind, &p); err != nil {
				return err
			}
		}
		if kind == tracking.Click {
			ctx.Response.Header.Set(fasthttp.HeaderLocation, target)
			ctx.SetStatusCode(fasthttp.StatusFound)
			return nil
		}
		ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
		if acceptsOnlyImages(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
			ctx.SetContentType("image/gif")
			ctx.SetBody(gif1x1)
			return nil
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// record writes the event of a tracking URL: its type, ad, campaign,
// placement and decision (what reports count it by), and the hashed user.
func (d *decisionEnv) record(ctx *fasthttp.RequestCtx, kind byte, p *tracking.Payload) error {
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	var num [20]byte
	line := d.events.appendHead((*bp)[:0], ctx)
	line = eventline.AppendPlain(line, "type", tracking.KindName(kind))
	line = eventline.AppendPlain(line, "ad", strconv.AppendInt(num[:0], p.Ad, 10))
	line = eventline.AppendPlain(line, "campaign", strconv.AppendInt(num[:0], p.Campaign, 10))
	line = eventline.AppendPlain(line, "placement", p.Placement) // placement names need no escaping
	line = eventline.AppendPlain(line, "decision", hex.AppendEncode(nil, p.Decision[:]))
	if p.UserHash != 0 {
		line = eventline.AppendPlain(line, "uid", strconv.AppendUint(num[:0], p.UserHash, 36))
	}
	line = eventline.End(line)
	*bp = line
	return d.events.sink.Append(ctx.ConnID(), line, 1)
}

// clickTarget is the click URL of the payload's ad with its macros
// filled, or "" when it has none.
func (d *decisionEnv) clickTarget(p *tracking.Payload) string {
	a, ok := d.engine.Plan().Ad(p.Ad)
	if !ok || a.Creative == nil || a.Creative.ClickURL == "" {
		return ""
	}
	return strings.NewReplacer("{placement}", url.QueryEscape(p.Placement), "{campaign}", strconv.FormatInt(p.Campaign, 10),
		"{ad}", strconv.FormatInt(p.Ad, 10)).Replace(a.Creative.ClickURL)
}
