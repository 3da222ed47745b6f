// A tracking URL's event: vouched for, priced, written and billed once
// per decision and kind, never past a budget, never for invalid traffic.

package serve

import (
	"context"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/eventline"
	"marquee/privacy"
	"marquee/reports"
	"marquee/tracking"
)

// A Hit is a signed tracking URL fired (GET /t/{kind}/{token}): its
// kind and token, and what its request adds — a HEAD (a link checker's,
// a prefetch: counts nothing), the tag's word that it measures the
// impression's viewability (m=1), a player's VAST error code.
type Hit struct {
	Kind     byte
	Token    []byte
	Head     bool
	Measured bool
	Code     []byte
}

// Track counts a tracking URL's event: a token that is not ours is a
// tracking.ErrBadToken, an expired one a tracking.ErrExpired, and neither
// is counted; the same URL fired again counts once on this instance
// (within the URL's life). A verified event of the type its campaign's
// price bills is billed through the Ledger. A click answers the
// creative's click URL, its macros filled (target); a click of an ad
// without one is a not-found error; any other event answers "".
func (s *Service) Track(ctx context.Context, h *Hit, e *Edge) (target string, err error) {
	kind := h.Kind
	p, err := s.signer.Open(h.Token, s.now())
	if err != nil {
		return "", err
	}
	if kind == tracking.Click && p.Bidder == "" { // a bid's click is a pixel: its creative has its own landing page
		if target = s.clickTarget(e, &p, h.Token); target == "" {
			return "", marquee.Errorf(marquee.KindNotFound, "this ad has no click URL")
		}
	}
	if h.Head {
		return target, nil
	}
	// The URL is marked counted before its event is written, so that two
	// firings at once count once, and unmarked when the write fails, so
	// that the retry a 503 asks for counts it.
	key := markKey(kind, p.Decision)
	if _, fresh := s.seen.SetIfAbsent(key, struct{}{}); fresh {
		verified, keep := s.vouch(kind, &p)
		if keep {
			c, cost := s.costOf(kind, &p, verified)
			ch := Charge{Campaign: c, Cost: cost, At: s.now()}
			if verified && reports.IsBot(e.UserAgent) {
				verified = false
				if ch.Cost > 0 {
					ch.unbill(Invalid)
				}
			}
			ch, err := s.ledger.Bill(ctx, ch)
			if err == nil {
				err = s.record(h, e, &p, verified, ch)
			}
			if err != nil {
				s.seen.Invalidate(key)
				return "", err
			}
			s.touch(e, kind, &p, c, verified, h.Token)
		}
		if kind == tracking.Impression && h.Measured {
			s.seen.Set(markKey(measuredMark, p.Decision), struct{}{})
		}
	}
	return target, nil
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

// vouch says whether the decision vouches for an event of kind
// (verified: goals, pacing and spend count it) and whether it is written
// at all. An impression is verified; a click, or a video event of a video
// ad, when the decision's impression counted here; a view when the
// impression counted and its viewability was measured (a view of an
// unmeasured impression would make viewability exceed 100%). A video event of an
// ad that is not a video is not written: it cannot have happened. A
// conversion URL's conversion is never verified: its advertiser did not
// vouch for it (Convert's signed pixel and postback are what bill).
// (docs/api.md#verified-counts)
func (s *Service) vouch(kind byte, p *tracking.Payload) (verified, keep bool) {
	seen := func(k byte) bool {
		_, ok := s.seen.GetIfPresent(markKey(k, p.Decision))
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
		return false, true
	case tracking.Error:
		return false, true // reports do not count errors
	}
	if a, ok := s.engine.Plan().Ad(p.Ad); !ok || a.Creative == nil || a.Creative.Type != marquee.CreativeVideo {
		return false, false
	}
	return seen(tracking.Impression), true
}

// record writes the event of a tracking URL: its type, ad, campaign,
// placement and decision (what reports count it by), the hashed user,
// and verified when the decision vouches for it (vouch).
func (s *Service) record(h *Hit, e *Edge, p *tracking.Payload, verified bool, ch Charge) error {
	kind, cost := h.Kind, ch.Cost
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	var num [20]byte
	lim := privacy.Limit(p.Limit)
	if lim == privacy.None && e.GPC {
		lim = privacy.GPC // the pixel's own request opts out
	}
	line := s.lines.appendEdgeHead((*bp)[:0], e, lim)
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
	line = ch.appendUnbilled(line)
	if p.Country != "" { // the decision's viewer's: reports count tag traffic by them
		line = eventline.AppendPlain(line, "country", p.Country)
	}
	if p.Platform != "" {
		line = eventline.AppendPlain(line, "platform", p.Platform)
	}
	if p.KV != "" { // query-escaped by sign: nothing in it for JSON to escape
		line = eventline.AppendPlain(line, "kv", p.KV)
	}
	switch kind {
	case tracking.Impression:
		if h.Measured { // the tag measures this impression's viewability
			line = eventline.AppendPlain(line, "measured", "1")
		}
	case tracking.Error:
		// VAST's [ERRORCODE] macro, filled in by the player: a number, or
		// the macro left as it is (no code).
		if code := h.Code; len(code) > 0 && len(code) <= 4 && isDigits(code) {
			line = eventline.AppendPlain(line, "code", code)
		}
	}
	line = eventline.End(line)
	*bp = line
	return s.ledger.Record(e.Conn, line, ch)
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
func (s *Service) clickTarget(e *Edge, p *tracking.Payload, token []byte) string {
	a, ok := s.engine.Plan().Ad(p.Ad)
	if !ok || a.Creative == nil || a.Creative.ClickURL == "" {
		return ""
	}
	conv, click := "", ""
	if strings.Contains(a.Creative.ClickURL, "{conversionUrl}") {
		var raw [300]byte
		conv = url.QueryEscape(string(tracking.AppendPath(append(raw[:0], e.Origin...), tracking.Conversion, token)))
	}
	if strings.Contains(a.Creative.ClickURL, "{clickId}") {
		now := s.now()
		c := tracking.Clicked{Payload: *p}
		c.Issued, c.Expires = now, now.Add(tracking.MaxClickAge)
		_, c.Verified = s.seen.GetIfPresent(markKey(tracking.Impression, p.Decision)) // as vouch says of the click
		click = string(s.signer.AppendClick(nil, &c))                                 // base64url: nothing to escape
	}
	return strings.NewReplacer("{placement}", url.QueryEscape(p.Placement), "{campaign}", strconv.FormatInt(p.Campaign, 10),
		"{ad}", strconv.FormatInt(p.Ad, 10), "{conversionUrl}", conv, "{clickId}", click).Replace(a.Creative.ClickURL)
}

// costOf is the campaign of a tracking event and what the event costs:
// a verified event of the type its campaign's price bills (an
// impression for CPM, a view for vCPM, a click for CPC, a conversion for
// CPA), at the price its decision was made at (the payload's); 0 for
// any other.
func (s *Service) costOf(kind byte, p *tracking.Payload, verified bool) (*delivery.Campaign, marquee.Nanos) {
	if p.Bidder != "" { // a bid earns its CPM (adjusted) for a verified impression: no campaign pays it
		if !verified || kind != tracking.Impression {
			return nil, 0
		}
		pr := marquee.Price{Model: marquee.PriceCPM, Amount: marquee.Micros(p.PriceMicros)}
		cost, _ := pr.EventCost()
		return nil, cost
	}
	if p.Campaign == 0 {
		return nil, 0
	}
	c, ok := s.engine.Plan().Campaign(p.Campaign)
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

// touch keeps, for a verified impression or view of a visitor who may be
// followed, a touch for post-view attribution.
func (s *Service) touch(e *Edge, kind byte, p *tracking.Payload, c *delivery.Campaign, verified bool, token []byte) {
	if s.touches == nil || c == nil || !verified || p.UserHash == 0 || privacy.Limit(p.Limit) != privacy.None || e.GPC {
		return
	}
	if kind == tracking.Impression || kind == tracking.View {
		s.touches.Touch(counters.Touch{User: p.UserHash, Advertiser: c.AdvertiserID, Kind: kind, At: s.now().Unix(), Verified: true,
			Token: append([]byte(nil), token...), TTL: time.Duration(marquee.MaxPostView)})
	}
}
