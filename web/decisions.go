package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
	"marquee/delivery"
	"marquee/demand"
	"marquee/jsonstr"
	"marquee/macro"
	"marquee/serve"
	"marquee/tracking"
)

// Limits of a decision request (package serve's).
const (
	MaxDecisionBody = serve.MaxDecisionBody
	MaxSlots        = serve.MaxSlots
	MaxSlotCount    = serve.MaxSlotCount
	MaxBids         = serve.MaxBids
)

// handleDecisions serves POST /api/v1/decisions (a JSON body) and GET
// /api/v1/decisions?placement=…&… (one slot): for each slot, the chosen
// ads with signed tracking URLs (docs/api.md#decisions). Package serve
// decides; this reads the request and writes the answer's bytes.
func handleDecisions(svc *serve.Service, rq requester, authenticate func(*fasthttp.RequestCtx) (auth.Principal, error), creativeOrigin string) handler {
	// The frames' origin (-creative-origin), JSON-quoted without its
	// closing quote as urlHead is; none: the request's own.
	var frameOrigin []byte
	if creativeOrigin != "" {
		frameOrigin, _ = jsonstr.Append(nil, []byte(creativeOrigin))
		frameOrigin = frameOrigin[:len(frameOrigin)-1]
	}
	return func(ctx *fasthttp.RequestCtx) error {
		// Any page may ask (the tag does, from the publisher's origin):
		// the answer holds nothing of a credential's. No cache may keep
		// it: every answer is a new decision with URLs of its own.
		anyOrigin(ctx)
		noStore(ctx)
		in := serve.Input{GDPR: -1}
		if ctx.IsPost() {
			if err := checkJSONBody(ctx, MaxDecisionBody); err != nil {
				return err
			}
			sc := serve.GetScratch()
			defer sc.Release() // in points into it until the answer is written
			if err := serve.ReadDecision(sc, ctx.PostBody(), &in); err != nil {
				return err
			}
		} else if err := decisionFromQuery(ctx.QueryArgs(), &in); err != nil {
			return err
		}
		e := rq.edge(ctx, nil)
		var opt serve.Options
		if in.Explain || in.Preview {
			opt.Authorize = func() error { return mayExplain(ctx, authenticate) }
		}
		d, err := svc.Decide(context.Background(), &in, &e, opt)
		if err != nil {
			if !ctx.IsPost() {
				return asParams(err)
			}
			return err
		}
		defer d.Release()
		r := &d.Request
		// The answer is written by hand (encoding/json of it was 40% of a
		// decision's cost): {"user":{"key"},"decisions":{div:[…]},"explain":…}.
		var quoted [320]byte
		urlHead := appendURLHead(quoted[:0], rq, ctx)
		frameHead := urlHead
		if frameOrigin != nil {
			frameHead = frameOrigin
		}
		plan := svc.Engine().Plan()
		bp := pagePool.Get().(*[]byte)
		out := append((*bp)[:0], '{')
		if key := in.UserKey; len(key) > 0 && r.User != 0 {
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
			proof := false // the placement asks the tag for render proofs
			if len(d.Chosen[i]) > 0 {
				pl, ok := plan.Placement(s.Placement)
				proof = ok && pl.RenderProof
			}
			for k, ch := range d.Chosen[i] {
				if k > 0 {
					out = append(out, ',')
				}
				out = appendChoice(out, urlHead, frameHead, d, i, &in, ch, proof)
			}
			out = append(out, ']')
		}
		out = append(out, '}')
		out = appendPassbacks(out, plan, r, d.Chosen)
		if d.Why != nil {
			ex := make(map[string][]delivery.Candidate, len(r.Slots))
			for i, s := range r.Slots {
				ex[s.Div] = append([]delivery.Candidate{}, d.Why[i]...)
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

// mayExplain says whether the request may ask for an explanation or a
// preview: they name every campaign, so they need campaigns:read and an
// account bound to no advertiser or publisher.
func mayExplain(ctx *fasthttp.RequestCtx, authenticate func(*fasthttp.RequestCtx) (auth.Principal, error)) error {
	p, err := authenticate(ctx)
	if err != nil {
		return err
	}
	if !p.Scopes.Has(marquee.ScopeCampaignsRead) {
		return &marquee.Error{Kind: marquee.KindForbidden, Message: "forbidden", Missing: marquee.ScopeCampaignsRead}
	}
	if p.Bounds.Bound() { // explain names every campaign
		return marquee.Errorf(marquee.KindForbidden, "forbidden: explain and preview are not open to an advertiser's or a publisher's account")
	}
	return nil
}

// appendChoice appends a choice as the answer shows it —
// {"adId","campaignId","creative","clickUrl","impressionUrl","viewUrl"},
// an HTML creative's or an untrusted tag's "frameUrl", a trusted tag's
// "tagHtml" and the creative's third-party "impressionTrackers" and
// "clickTrackers", their macros filled ("default":true for a placement's
// default ad, in place of campaignId) — with its tracking URLs: one
// decision id and one signed token for the three (none for a preview,
// which must not count), and "proofUrl" where the placement asks for
// render proofs (proof). urlHead is the JSON-quoted scheme and host,
// without its closing quote; in the request, for the macros.
func appendChoice(b, urlHead, frameHead []byte, d *serve.Decision, si int, in *serve.Input, ch delivery.Choice, proof bool) []byte {
	slot, r := &d.Request.Slots[si], &d.Request
	if ch.Bid != nil {
		return appendBid(b, urlHead, frameHead, d, si, ch, proof)
	}
	ad := ch.Ad
	if ch.Default { // a placement's default ad counts for no campaign
		b = append(b, `{"adId":"`...)
		b = strconv.AppendInt(b, ad.ID, 10)
		b = append(append(b, `","default":true`...), ad.Head[ad.Tail:]...)
	} else {
		b = append(b, ad.Head...)
	}
	if r.Preview {
		return append(b, '}')
	}
	var scratch [256]byte
	token, _ := d.Sign(scratch[:0], si, ch) // base64url: no JSON escaping
	if ad.Clicks {
		b = appendTrackingURL(b, `,"clickUrl":`, urlHead, tracking.Click, token)
	}
	b = appendTrackingURL(b, `,"impressionUrl":`, urlHead, tracking.Impression, token)
	b = appendTrackingURL(b, `,"viewUrl":`, urlHead, tracking.View, token)
	if proof {
		b = appendProofURL(b, urlHead, token)
	}
	if ad.Framed {
		b = append(append(append(b, `,"frameUrl":`...), frameHead...), FramePrefix...)
		b = append(b, token...)
		if ad.Creative.Type == marquee.CreativeTag { // the page's own values, for the tag's macros
			b = append(b, frameQuery(in)...)
		}
		b = append(b, '"')
	}
	if ad.Expands {
		c := ad.Creative
		v := macroValues(in, slot, ch, d.Now, d.Rand.Uint64())
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
// (as the bid said),"size","dealId","frameUrl"} — frameUrl the page that
// draws a bid in a frame of another origin (BidFramePath) — with its
// tracking URLs: the tag fires the impression once Prebid rendered it, the
// view by MRC's rule, and the click URL (a pixel, not a redirect: the
// bid's creative has its own landing page) when the visitor clicks into
// its frame.
func appendBid(b, urlHead, frameHead []byte, d *serve.Decision, si int, ch delivery.Choice, proof bool) []byte {
	if pb := d.Partner(ch); pb != nil {
		return appendPartner(b, urlHead, frameHead, d, si, ch, pb, proof)
	}
	bid, r := ch.Bid, &d.Request
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
	b = append(append(append(append(b, `,"frameUrl":`...), frameHead...), BidFramePath...), '"')
	if r.Preview {
		return append(b, '}')
	}
	var scratch [320]byte // a bidder's name makes the token longer than an ad's
	token, _ := d.Sign(scratch[:0], si, ch)
	b = appendTrackingURL(b, `,"clickUrl":`, urlHead, tracking.Click, token)
	b = appendTrackingURL(b, `,"impressionUrl":`, urlHead, tracking.Impression, token)
	b = appendTrackingURL(b, `,"viewUrl":`, urlHead, tracking.View, token)
	if proof {
		b = appendProofURL(b, urlHead, token)
	}
	return append(b, '}')
}

// appendPartner appends a demand partner's bid that won its slot as the
// answer shows it — {"partner","cpm" (as adjusted),"dealId","creative":
// {"type":"html","width","height"},"frameUrl"} — an HTML creative the tag
// draws in its sandboxed frame (/f/{token} draws the bid's markup, kept
// under the decision's id) — with its tracking URLs: the click a pixel,
// as a header bid's (the markup has its own landing page).
func appendPartner(b, urlHead, frameHead []byte, d *serve.Decision, si int, ch delivery.Choice, pb *demand.Bid, proof bool) []byte {
	b = append(b, `{"partner":`...)
	b, _ = jsonstr.Append(b, []byte(pb.Partner))
	b = append(b, `,"cpm":`...)
	b = strconv.AppendFloat(b, float64(ch.BidCPM)/1e6, 'f', -1, 64)
	if pb.Raw.DealID != "" {
		b = append(b, `,"dealId":`...)
		b, _ = jsonstr.Append(b, []byte(pb.Raw.DealID))
	}
	w, h := d.PartnerSize(si, pb)
	b = fmt.Appendf(b, `,"creative":{"type":"html","width":%d,"height":%d}`, w, h)
	if d.Request.Preview {
		return append(b, '}')
	}
	var scratch [320]byte
	token, id := d.Sign(scratch[:0], si, ch)
	d.KeepMarkup(id, ch)
	b = append(append(append(b, `,"frameUrl":`...), frameHead...), FramePrefix...)
	b = append(append(b, token...), '"')
	b = appendTrackingURL(b, `,"clickUrl":`, urlHead, tracking.Click, token)
	b = appendTrackingURL(b, `,"impressionUrl":`, urlHead, tracking.Impression, token)
	b = appendTrackingURL(b, `,"viewUrl":`, urlHead, tracking.View, token)
	if proof {
		b = appendProofURL(b, urlHead, token)
	}
	return append(b, '}')
}

// appendProofURL appends the choice's "proofUrl": where the tag asks, once
// the ad rendered, the render proof its impression carries (?rp=).
func appendProofURL(b, urlHead, token []byte) []byte {
	b = append(append(append(b, `,"proofUrl":`...), urlHead...), ProofPrefix...)
	return append(append(b, token...), '"')
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
func macroValues(in *serve.Input, slot *delivery.Slot, ch delivery.Choice, now time.Time, random uint64) macro.Values {
	v := macro.Values{Random: random, Timestamp: now, PageURL: string(in.URL), GDPRConsent: string(in.TCF),
		Placement: slot.Placement, Campaign: ch.Campaign.ID, Ad: ch.Ad.ID}
	if in.GDPR >= 0 {
		v.GDPR = strconv.Itoa(int(in.GDPR))
	}
	return v
}

// frameQuery is what an untrusted tag's frame URL carries of the page for
// its macros: ?u=<page URL>&g=<gdpr>&c=<consent> (unsigned: they only
// fill macros, escaped where they stand).
func frameQuery(in *serve.Input) []byte {
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

// appendURLHead appends the scheme and host the request came to, JSON
// quoted without the closing quote: the head of its absolute tracking
// URLs.
func appendURLHead(dst []byte, rq requester, ctx *fasthttp.RequestCtx) []byte {
	var raw [300]byte
	dst, _ = jsonstr.Append(dst, rq.appendOrigin(raw[:0], ctx))
	return dst[:len(dst)-1]
}

// asParams names the problems of a GET decision's one slot by its
// parameters (placement, div, count), not by the slot's path in a body.
func asParams(err error) error {
	var e *marquee.Error
	if errors.As(err, &e) {
		for k, v := range e.Problems {
			if param, ok := strings.CutPrefix(k, "placements[0]."); ok {
				delete(e.Problems, k)
				e.Problems[param] = v
			}
		}
	}
	return err
}

// decisionFromQuery reads GET /api/v1/decisions: one slot (placement,
// div, count) and the viewer's fields.
func decisionFromQuery(args *fasthttp.Args, in *serve.Input) error {
	pl, _ := param(args, "placement")
	div, _ := param(args, "div")
	slot := serve.SlotInput{Div: div, Placement: pl}
	var p marquee.Problems // made at the first problem
	bad := func(field, problem string) {
		if p == nil {
			p = marquee.Problems{}
		}
		p[field] = problem
	}
	if len(pl) == 0 {
		bad("placement", "is required")
	}
	if v, ok := param(args, "count"); ok {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			bad("count", "must be an integer")
		}
		slot.Count = serve.OptInt{N: n, Set: true}
	}
	if v, ok := param(args, "podDurationMs"); ok {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			bad("podDurationMs", "must be an integer")
		}
		slot.PodMs = serve.OptInt{N: n, Set: true}
	}
	in.Placements = append(in.Placements, slot)
	if v, ok := param(args, "age"); ok {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			bad("age", "must be an integer")
		}
		in.Age = serve.OptInt{N: n, Set: true}
	}
	for _, name := range serve.QueryTexts {
		*in.Text(name), _ = param(args, name)
	}
	if v, ok := param(args, "keywords"); ok {
		in.Keywords = bytes.Split(v, []byte(","))
	}
	in.UserKey, _ = param(args, "user")
	in.Webdriver = string(args.Peek("wd")) == "1" // the tag's word that navigator.webdriver is set
	for k, v := range args.All() {
		if key, ok := bytes.CutPrefix(k, []byte("kv.")); ok {
			in.KV = append(in.KV, serve.QueryKV(key, v))
		}
	}
	in.GDPR, in.TCF = queryConsent(args)
	in.GPP, in.GPPSID, in.USP = args.Peek("gpp"), args.Peek("gpp_sid"), args.Peek("us_privacy")
	return marquee.Invalid("invalid decision request", p)
}
