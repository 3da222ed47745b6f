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
	"marquee/ivt"
	"marquee/privacy"
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
	// Proof is the render proof an impression carries (?rp=; see
	// RenderProof): an impression of a placement that asks for one is
	// invalid without it (ivt.NoRenderProof), and its decision's view and
	// click with it.
	Proof []byte
}

// Track counts a tracking URL's event: a token that is not ours is a
// tracking.ErrBadToken, an expired one a tracking.ErrExpired, and neither
// is counted; the same URL fired again counts once on this instance
// (within the URL's life). A verified event of the type its campaign's
// price bills is billed through the Ledger. A click answers the
// creative's click URL, its macros filled (target); a click of an ad
// without one is a not-found error; any other event answers "".
func (s *Service) Track(ctx context.Context, h *Hit, e *Edge) (target string, err error) {
	kind, now := h.Kind, s.now()
	p, err := s.signer.Open(h.Token, now)
	if err != nil {
		return "", err
	}
	if p.Ad == 0 && p.Bidder == "" { // a creative preview's frame token (web): no decision's
		return "", tracking.ErrBadToken
	}
	imp, impSeen := s.seen.GetIfPresent(markKey(tracking.Impression, p.Decision))
	why := s.hitIVT(h, &p, e, imp, impSeen, now)
	if kind == tracking.Click && p.Bidder == "" { // a bid's click is a pixel: its creative has its own landing page
		if target = s.clickTarget(e, &p, h.Token, impSeen, why); target == "" {
			return "", marquee.Errorf(marquee.KindNotFound, "this ad has no click URL")
		}
	}
	if h.Head {
		return target, nil
	}
	if why == ivt.Prefetch { // counted invalid, and the URL left to the visit it prepares
		return target, s.record(h, e, &p, false, why, Charge{})
	}
	// The URL is marked counted before its event is written, so that two
	// firings at once count once, and unmarked when the write fails, so
	// that the retry a 503 asks for counts it.
	key := markKey(kind, p.Decision)
	if _, fresh := s.seen.SetIfAbsent(key, mark{at: now.UnixNano(), why: why}); fresh {
		verified, keep := s.vouch(kind, &p, impSeen)
		if keep {
			var credits []ivt.Credit
			if why == ivt.Human {
				why, credits = s.ivt.Count(p.UserHash, e.IP, now)
			}
			if why == ivt.Human && verified {
				why, credits = s.addressRules(kind, &p, e, now, credits)
			}
			if why != ivt.Human {
				s.seen.Set(key, mark{at: now.UnixNano(), why: why})
			}
			c, cost := s.costOf(kind, &p, verified)
			ch := Charge{Campaign: c, Cost: cost, At: now}
			if why != ivt.Human {
				verified = false
				if ch.Cost > 0 {
					ch.unbill(marquee.UnbilledInvalid)
				}
			}
			ch, err := s.ledger.Bill(ctx, ch)
			if err == nil {
				err = s.record(h, e, &p, verified, why, ch)
			}
			if err != nil {
				s.seen.Invalidate(key)
				return "", err
			}
			s.credit(ctx, e, credits)
			if ch.Cost > 0 && p.Bidder != "" && s.demand != nil {
				s.demand.Billed(p.Decision) // a partner's bid's billing notice: its impression verified and billed
			}
			if ch.Cost > 0 && ch.Campaign != nil {
				s.keepCredit(ctx, e, &p, kind, h.Token, ch.Cost, now)
			}
			s.touch(e, kind, &p, c, verified, h.Token)
		}
	} else if kind == tracking.Click { // the same click again: counted invalid, billed nothing
		if err := s.record(h, e, &p, false, ivt.RepeatClick, Charge{}); err != nil {
			return "", err
		}
	}
	if kind == tracking.Impression && h.Measured {
		s.seen.Set(markKey(measuredMark, p.Decision), mark{at: now.UnixNano(), why: why})
	}
	return target, nil
}

// hitIVT is why a tracking URL's event of kind is invalid traffic
// (docs/ivt.md): its decision's reason (the token's), else what the
// request says of itself (ivt.Filter.Request), else, for an event that
// follows the decision's impression (imp, counted here when impSeen),
// the impression's reason; for an impression of a placement that asks
// for render proofs, no valid proof; and for a click, no counted
// impression, or one counted less than the minimum delay before.
func (s *Service) hitIVT(h *Hit, p *tracking.Payload, e *Edge, imp mark, impSeen bool, now time.Time) ivt.Reason {
	kind := h.Kind
	if why := ivt.Reason(p.IVT); why != ivt.Human {
		return why
	}
	q := e.request()
	if why := s.ivt.Request(&q); why != ivt.Human {
		return why
	}
	if kind == tracking.Impression && s.asksProof(p) && !s.signer.CheckRenderProof(h.Proof, p.Decision, now) {
		return ivt.NoRenderProof
	}
	switch kind {
	case tracking.Impression, tracking.Conversion, tracking.Error:
		return ivt.Human
	}
	if impSeen && imp.why != ivt.Human {
		return imp.why
	}
	if kind == tracking.Click {
		switch {
		case !impSeen:
			return ivt.NoImpression
		case now.UnixNano()-imp.at < int64(s.ivt.MinClickDelay()):
			return ivt.FastClick
		}
	}
	return ivt.Human
}

// asksProof says whether the decision's placement asks for render proofs.
func (s *Service) asksProof(p *tracking.Payload) bool {
	pl, ok := s.engine.Plan().Placement(p.Placement)
	return ok && pl.RenderProof
}

// RenderProof appends to dst the render proof of token's decision
// (docs/ivt.md#render-proofs): what the tag asks once the decision's ad
// rendered, and sends with its impression (Hit.Proof). A token that is
// not ours, expired, or a preview's, is refused as Track refuses it.
func (s *Service) RenderProof(dst, token []byte) ([]byte, error) {
	now := s.now()
	p, err := s.signer.Open(token, now)
	if err != nil {
		return dst, err
	}
	if p.Ad == 0 && p.Bidder == "" {
		return dst, tracking.ErrBadToken
	}
	return s.signer.AppendRenderProof(dst, p.Decision, now), nil
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
// ad, when the decision's impression counted here (impSeen); a view when the
// impression counted and its viewability was measured (a view of an
// unmeasured impression would make viewability exceed 100%). A video event of an
// ad that is not a video is not written: it cannot have happened. A
// conversion URL's conversion is never verified: its advertiser did not
// vouch for it (Convert's signed pixel and postback are what bill).
// (docs/api.md#verified-counts)
func (s *Service) vouch(kind byte, p *tracking.Payload, impSeen bool) (verified, keep bool) {
	switch kind {
	case tracking.Impression:
		return true, true
	case tracking.Click:
		return impSeen, true
	case tracking.View:
		_, measured := s.seen.GetIfPresent(markKey(measuredMark, p.Decision))
		return measured, true
	case tracking.Conversion:
		return false, true
	case tracking.Error:
		return false, true // reports do not count errors
	}
	if a, ok := s.engine.Plan().Ad(p.Ad); !ok || a.Creative == nil || !marquee.IsLinear(a.Creative.Type) {
		return false, false
	}
	return impSeen, true
}

// addressRules judges a verified event of people's by its address's
// hour (docs/ivt.md#scripts): an impression counts toward the address's
// click rate; a click past its campaign's clicks an hour from the address
// is ClickLimit, one of an address whose click rate is past a person's
// ClickRate — with, added to credits, what that address's clicks billed
// this hour.
func (s *Service) addressRules(kind byte, p *tracking.Payload, e *Edge, now time.Time, credits []ivt.Credit) (ivt.Reason, []ivt.Credit) {
	switch kind {
	case tracking.Impression:
		s.ivt.Impressed(e.IP, now)
	case tracking.Click:
		why, more := s.ivt.Click(p.Campaign, e.IP, now)
		return why, append(credits, more...)
	}
	return ivt.Human, credits
}

// keepCredit keeps an event billed cost (of kind, its token) for
// crediting if its user or address goes past its events this minute
// (ivt.Filter.Keep), and a click if its address's click rate goes past a
// person's this hour (ivt.Filter.KeepClick); credited now when one went
// past meanwhile.
func (s *Service) keepCredit(ctx context.Context, e *Edge, p *tracking.Payload, kind byte, token []byte, cost marquee.Nanos, now time.Time) {
	if kind == tracking.Click {
		s.ivt.KeepClick(e.IP, now, kind, token, int64(cost))
	}
	if s.ivt.Keep(p.UserHash, e.IP, now, kind, token, int64(cost)) {
		s.credit(ctx, e, []ivt.Credit{{Kind: kind, Token: token, Cost: int64(cost)}})
	}
}

// credit gives back what events billed before their user or address
// went past its events a minute, in that minute (ivt.Burst, found after
// the fact): each is refunded to its budgets through the Ledger and
// written as an "adjustment" line — its campaign, ad, placement and
// decision, the cost taken back as a negative cost, and what it would
// have cost as unbilled — which reports count as invalid traffic and
// invoices show (docs/ivt.md#after-the-fact). A credit whose line cannot
// be written is logged by the sink and left billed.
func (s *Service) credit(ctx context.Context, e *Edge, credits []ivt.Credit) {
	for _, c := range credits {
		p, err := s.signer.Open(c.Token, time.Time{})
		if err != nil {
			continue
		}
		camp, _ := s.engine.Plan().Campaign(p.Campaign)
		ch := Charge{Campaign: camp, Cost: -marquee.Nanos(c.Cost), At: s.now()}
		ch, err = s.ledger.Bill(context.WithoutCancel(ctx), ch)
		if err != nil {
			continue
		}
		bp := linePool.Get().(*[]byte)
		var num [20]byte
		line := s.lines.appendEdgeHead((*bp)[:0], e, privacy.Limit(p.Limit))
		line = eventline.AppendPlain(line, "type", "adjustment")
		line = eventline.AppendPlain(line, "adjusts", tracking.KindName(c.Kind))
		line = appendDecision(line, &p)
		line = eventline.AppendPlain(line, "verified", "1")
		line = eventline.AppendPlain(line, "cost", strconv.AppendInt(num[:0], -c.Cost, 10))
		line = eventline.AppendPlain(line, "ivt", ivt.Burst.Name())
		line = eventline.AppendPlain(line, "unbilled", marquee.UnbilledInvalid)
		line = eventline.AppendPlain(line, "unbilledCost", strconv.AppendInt(num[:0], c.Cost, 10))
		line = appendViewer(line, &p)
		line = eventline.End(line)
		*bp = line
		if err := s.ledger.Record(e.Conn, line, Charge{}); err != nil {
			s.ledger.Bill(context.WithoutCancel(ctx), Charge{Campaign: camp, Cost: marquee.Nanos(c.Cost), At: ch.At}) // not credited after all
		}
		linePool.Put(bp)
	}
}

// record writes the event of a tracking URL: its type, ad, campaign,
// placement and decision (what reports count it by), the hashed user,
// verified when the decision vouches for it (vouch), and why it is
// invalid traffic (ivt: none for a person's).
func (s *Service) record(h *Hit, e *Edge, p *tracking.Payload, verified bool, why ivt.Reason, ch Charge) error {
	kind, cost := h.Kind, ch.Cost
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	var num [20]byte
	lim := privacy.Limit(p.Limit)
	if lim == privacy.None && privacy.Activities(p.Denied).Has(privacy.Measure) {
		lim = privacy.NotMeasured // the decision's signals allow no measurement by user
	}
	line := s.lines.appendEdgeHead((*bp)[:0], e, lim)
	line = eventline.AppendPlain(line, "type", tracking.KindName(kind))
	line = appendDecision(line, p)
	if p.UserHash != 0 && lim == privacy.None {
		line = eventline.AppendPlain(line, "uid", privacy.AppendName(num[:0], p.UserHash))
	}
	if verified {
		line = eventline.AppendPlain(line, "verified", "1")
	}
	if cost > 0 {
		line = eventline.AppendPlain(line, "cost", strconv.AppendInt(num[:0], int64(cost), 10))
	}
	if why != ivt.Human {
		line = eventline.AppendPlain(line, "ivt", why.Name())
	}
	line = ch.appendUnbilled(line)
	line = appendViewer(line, p)
	switch kind {
	case tracking.Impression:
		if h.Measured { // the tag measures this impression's viewability
			line = eventline.AppendPlain(line, "measured", "1")
		}
	case tracking.Error:
		// VAST's [ERRORCODE] macro, filled in by the player: a number, or
		// the macro left as it is (no code).
		if code := h.Code; len(code) > 0 && len(code) <= 4 && isDigits(code) {
			line = eventline.AppendPlain(line, "errorCode", code)
		}
	}
	line = eventline.End(line)
	*bp = line
	return s.ledger.Record(e.Conn, line, ch)
}

// appendDecision appends what an event line says of its decision p: its
// bidder, or its ad and campaign (or that the placement's default ad
// filled it), its placement and its id.
func appendDecision(line []byte, p *tracking.Payload) []byte {
	var num [20]byte
	switch {
	case p.Bidder != "": // a header-bidding bid: no ad or campaign of Marquee's
		line = eventline.AppendPlain(line, "bidder", p.Bidder) // checked at the edge: A–Z, a–z, 0–9, _ . - (and a partner's leading @)
		if partner, ok := marquee.PartnerOf(p.Bidder); ok {
			line = eventline.AppendPlain(line, "partner", partner)
		}
	case p.Campaign != 0:
		line = eventline.AppendPlain(line, "ad", strconv.AppendInt(num[:0], p.Ad, 10))
		line = eventline.AppendPlain(line, "campaign", strconv.AppendInt(num[:0], p.Campaign, 10))
	default: // a placement's default ad is decided without a campaign
		line = eventline.AppendPlain(line, "ad", strconv.AppendInt(num[:0], p.Ad, 10))
		line = eventline.AppendPlain(line, "defaultFill", "1")
	}
	line = eventline.AppendPlain(line, "placement", p.Placement) // placement names need no escaping
	var id [32]byte
	line = eventline.AppendPlain(line, "decision", hex.AppendEncode(id[:0], p.Decision[:]))
	if p.Signals != 0 || p.Denied != 0 {
		var names [160]byte
		line = eventline.AppendPlain(line, "signals", privacy.Carried(p.Signals).AppendNames(names[:0]))
		line = eventline.AppendPlain(line, "denied", privacy.Activities(p.Denied).AppendNames(names[:0]))
	}
	return line
}

// appendViewer appends the decision's viewer's country and platform and
// its key-values, which reports count tag traffic by.
func appendViewer(line []byte, p *tracking.Payload) []byte {
	if p.Country != "" {
		line = eventline.AppendPlain(line, "country", p.Country)
	}
	if p.Platform != "" {
		line = eventline.AppendPlain(line, "platform", p.Platform)
	}
	if p.KV != "" { // query-escaped by sign: nothing in it for JSON to escape
		line = eventline.AppendPlain(line, "kv", p.KV)
	}
	return line
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
// conversion to name (docs/api.md#conversions), verified when its
// impression counted here (impSeen) and it is no invalid traffic (why)
// — or "" when it has none.
func (s *Service) clickTarget(e *Edge, p *tracking.Payload, token []byte, impSeen bool, why ivt.Reason) string {
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
		c.Verified = impSeen && why == ivt.Human      // as vouch says of the click, and no invalid traffic
		c.IVT = uint8(why)                            // its conversion's too
		click = string(s.signer.AppendClick(nil, &c)) // base64url: nothing to escape
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
	if s.touches == nil || c == nil || !verified || p.UserHash == 0 || privacy.Limit(p.Limit) != privacy.None || e.GPC ||
		privacy.Activities(p.Denied).Has(privacy.Attribute) {
		return
	}
	if kind == tracking.Impression || kind == tracking.View {
		s.touches.Touch(counters.Touch{User: p.UserHash, Advertiser: c.AdvertiserID, Kind: kind, At: s.now().Unix(), Verified: true,
			Token: append([]byte(nil), token...), TTL: time.Duration(marquee.MaxPostView)})
	}
}
