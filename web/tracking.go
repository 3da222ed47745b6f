// The tracking pixel and redirect: GET /t/{kind}/{token}, counted once
// per decision and kind.

package web

import (
	"bytes"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/eventline"
	"marquee/privacy"
	"marquee/tracking"
)

// handleTracking serves GET /t/{kind}/{token}: a signed tracking URL
// (package tracking). An impression or view answers a 1×1 GIF (or 204)
// and records the event; a click records it and redirects to the
// creative's click URL with its macros filled. A token that is not ours
// is a 400, an expired one a 410, and neither is counted; the same URL
// fired again counts once on this instance (within the URL's life).
func handleTracking(d *decider) handler {
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
		if kind == tracking.Click && p.Bidder == "" { // a bid's click is a pixel: its creative has its own landing page
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
					c, cost := d.costOf(kind, &p, verified)
					if err := d.record(ctx, kind, &p, verified, cost); err != nil {
						d.seen.Invalidate(key)
						return err
					}
					d.counted(ctx, kind, &p, c, cost, verified, token)
				}
				if kind == tracking.Impression && measured(ctx) {
					d.seen.Set(markKey(measuredMark, p.Decision), struct{}{})
				}
			}
		}
		if target != "" {
			ctx.Response.Header.Set(fasthttp.HeaderLocation, target)
			ctx.SetStatusCode(fasthttp.StatusFound)
			return nil
		}
		answerPixel(ctx)
		return nil
	}
}

// answerPixel answers a pixel: a 1×1 GIF to a request that accepts only
// images, else 204; never stored.
func answerPixel(ctx *fasthttp.RequestCtx) {
	noStore(ctx)
	if acceptsOnlyImages(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
		ctx.SetContentType("image/gif")
		ctx.SetBody(gif1x1)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
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
func (d *decider) vouch(kind byte, p *tracking.Payload) (verified, keep bool) {
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
func (d *decider) record(ctx *fasthttp.RequestCtx, kind byte, p *tracking.Payload, verified bool, cost marquee.Nanos) error {
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	var num [20]byte
	lim := privacy.Limit(p.Limit)
	if lim == privacy.None && sentGPC(ctx) {
		lim = privacy.GPC // the pixel's own request opts out
	}
	line := d.events.appendHead((*bp)[:0], ctx, lim)
	line = eventline.AppendPlain(line, "type", tracking.KindName(kind))
	switch {
	case p.Bidder != "": // a header-bidding bid: no ad or campaign of Marquee's
		line = eventline.AppendPlain(line, "bidder", p.Bidder) // checked at the edge: A–Z, a–z, 0–9, _ . -
	case p.Campaign != 0:
		line = eventline.AppendPlain(line, "ad", strconv.AppendInt(num[:0], p.Ad, 10))
		line = eventline.AppendPlain(line, "campaign", strconv.AppendInt(num[:0], p.Campaign, 10))
	default: // a placement's default ad is decided without a campaign
		line = eventline.AppendPlain(line, "ad", strconv.AppendInt(num[:0], p.Ad, 10))
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
	if cost > 0 {
		line = eventline.AppendPlain(line, "cost", strconv.AppendInt(num[:0], int64(cost), 10))
	}
	if p.Country != "" { // the decision's viewer's: reports count tag traffic by them
		line = eventline.AppendPlain(line, "country", p.Country)
	}
	if p.Platform != "" {
		line = eventline.AppendPlain(line, "platform", p.Platform)
	}
	if p.KV != "" { // query-escaped by sign: nothing in it for JSON to escape
		line = eventline.AppendPlain(line, "kv", p.KV)
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
// filled — {placement}, {campaign}, {ad}, {conversionUrl}, the
// decision's signed conversion URL (query-escaped) for the landing page
// to fire, and {clickId}, this click's signed id for the advertiser's
// conversion to name (docs/api.md#conversions) — or "" when it has none.
func (d *decider) clickTarget(ctx *fasthttp.RequestCtx, p *tracking.Payload, token []byte) string {
	a, ok := d.engine.Plan().Ad(p.Ad)
	if !ok || a.Creative == nil || a.Creative.ClickURL == "" {
		return ""
	}
	conv, click := "", ""
	if strings.Contains(a.Creative.ClickURL, "{conversionUrl}") {
		var raw [300]byte
		conv = url.QueryEscape(string(tracking.AppendPath(appendOrigin(raw[:0], ctx), tracking.Conversion, token)))
	}
	if strings.Contains(a.Creative.ClickURL, "{clickId}") {
		now := d.now()
		c := tracking.Clicked{Payload: *p}
		c.Issued, c.Expires = now, now.Add(tracking.MaxClickAge)
		_, c.Verified = d.seen.GetIfPresent(markKey(tracking.Impression, p.Decision)) // as vouch says of the click
		click = string(d.signer.AppendClick(nil, &c))                                 // base64url: nothing to escape
	}
	return strings.NewReplacer("{placement}", url.QueryEscape(p.Placement), "{campaign}", strconv.FormatInt(p.Campaign, 10),
		"{ad}", strconv.FormatInt(p.Ad, 10), "{conversionUrl}", conv, "{clickId}", click).Replace(a.Creative.ClickURL)
}

// costOf is the campaign of a tracking event and what the event costs:
// a verified event of the type its campaign's price bills (an
// impression for CPM, a view for vCPM, a click for CPC, a conversion for
// CPA), at the price its decision was made at (the payload's); 0 for
// any other.
func (d *decider) costOf(kind byte, p *tracking.Payload, verified bool) (*delivery.Campaign, marquee.Nanos) {
	if p.Bidder != "" { // a bid earns its CPM (adjusted) for a verified impression: no campaign pays it
		if !verified || kind != tracking.Impression {
			return nil, 0
		}
		pr := marquee.Price{Model: "cpm", Amount: marquee.Micros(p.PriceMicros)}
		cost, _ := pr.EventCost()
		return nil, cost
	}
	if p.Campaign == 0 {
		return nil, 0
	}
	c, ok := d.engine.Plan().Campaign(p.Campaign)
	if !ok || !verified || c.Price == nil {
		return c, 0
	}
	pr := marquee.Price{Model: c.Price.Model, Amount: marquee.Micros(p.PriceMicros)}
	cost, bills := pr.EventCost()
	if bills != tracking.KindName(kind) {
		return c, 0
	}
	return c, cost
}

// counted adds what a tracking event just written means for money: its
// cost to its campaign's budgets, and, for a verified impression or view
// of a visitor who may be followed, a touch for post-view attribution.
func (d *decider) counted(ctx *fasthttp.RequestCtx, kind byte, p *tracking.Payload, c *delivery.Campaign, cost marquee.Nanos, verified bool, token []byte) {
	now := d.now()
	if b := d.engine.Budgets(); b != nil && c != nil && cost > 0 {
		b.Spend(c, cost, now)
	}
	if d.touches == nil || c == nil || !verified || p.UserHash == 0 || privacy.Limit(p.Limit) != privacy.None || sentGPC(ctx) {
		return
	}
	if kind == tracking.Impression || kind == tracking.View {
		d.touches.Touch(counters.Touch{User: p.UserHash, Advertiser: c.AdvertiserID, Kind: kind, At: now.Unix(), Verified: true,
			Token: append([]byte(nil), token...), TTL: time.Duration(marquee.MaxPostView)})
	}
}
