// Conversions: attributed to the click or the impression that earned
// them and counted once per order (docs/api.md#conversions).

package serve

import (
	"context"
	"encoding/hex"
	"strconv"
	"time"

	"marquee"
	"marquee/attribution"
	"marquee/counters"
	"marquee/delivery"
	"marquee/eventline"
	"marquee/ivt"
	"marquee/privacy"
	"marquee/tracking"
)

// Converted is what became of a conversion: counted; a duplicate of one
// counted before (Duplicate, not Counted); or neither, accepted without
// attribution (Reason says why). And what it was attributed to ("click",
// "view"; "" none), the ad and campaign, and whether it is verified (its
// spend and goals count it).
type Converted struct {
	Counted     bool
	Duplicate   bool
	Attribution string
	Reason      string // why nothing was attributed
	AdID        int64
	CampaignID  int64
	Verified    bool
	// IVT is why the conversion is invalid traffic ("" a person's):
	// counted, never verified or billed (docs/ivt.md).
	IVT string
}

// A Voucher is who vouches for a conversion: a postback (an
// authenticated server's), or a pixel, which its advertiser vouches for
// by signing it — Sig, the HMAC of its click id, order id and Value (as
// the pixel's URL spells it) under the advertiser's conversion secret
// (tracking.Signer.VerifyConversion).
type Voucher struct {
	Postback   bool
	Sig, Value []byte
}

// Convert attributes and counts conversion in, vouched for by v, by a
// credential bound by b, for a visitor whose signals (pv) say whether it
// may be followed and its conversion attributed to an ad seen elsewhere.
// It answers 201 when it counted, 200 for a duplicate, 202 when nothing
// earned it (written to the event files, counted in no report).
//
// A conversion is verified — it bills, moves goals and adds its value to
// ROAS — only when its advertiser vouched for it (a postback, or a pixel
// it signed; post-view, a postback only: a pixel's signature does not
// cover the user key) and what earned it is verified. An unsigned pixel is
// counted unverified, once a click (or impression), and never claims an
// order id: the advertiser's postback or signed pixel of that order
// still counts. A vouched-for value above its campaign's
// attribution.maxValue is refused.
func (s *Service) Convert(sctx context.Context, e *Edge, in *marquee.ConversionInput, v Voucher, b marquee.Bounds, pv privacy.Verdict) (Converted, error) {
	now := s.now()
	if msg := marquee.CheckCurrency(in.Currency, s.currency); msg != "" {
		return Converted{}, marquee.Invalid("invalid conversion", marquee.Problems{"currency": msg})
	}
	plan := s.engine.Plan()
	var (
		click         *tracking.Clicked
		clickAt       *attribution.Touchpoint
		advertiser    = in.Advertiser
		campaign      *delivery.Campaign
		clickVerified bool
	)
	if in.ClickID != "" {
		c, err := s.signer.OpenClick([]byte(in.ClickID))
		if err != nil {
			return Converted{}, marquee.Invalid("invalid conversion", marquee.Problems{"clickId": "was not issued by this server or was changed: not counted"})
		}
		click, clickVerified = &c, c.Verified
		if campaign, _ = plan.Campaign(c.Campaign); campaign == nil {
			return Converted{Reason: "the click's campaign is archived or gone"}, nil
		}
		if advertiser != 0 && advertiser != campaign.AdvertiserID {
			return Converted{}, marquee.Invalid("invalid conversion", marquee.Problems{"advertiserId": "is not the advertiser of the click id's campaign (" + strconv.FormatInt(campaign.AdvertiserID, 10) + ")"})
		}
		advertiser = campaign.AdvertiserID
		clickAt = &attribution.Touchpoint{At: c.Issued, Window: campaign.Windows().PostClick}
	}
	if b.Bound() && !b.HasAdvertiser(advertiser) {
		return Converted{}, marquee.Errorf(marquee.KindForbidden, "this key converts only its advertisers' conversions, not advertiser %d's", advertiser)
	}
	vouched := v.Postback
	if !vouched && len(v.Sig) > 0 {
		if vouched = s.signer.VerifyConversion(s.engine.ConversionNonce(advertiser), []byte(in.ClickID), []byte(in.OrderID), v.Value, v.Sig); !vouched {
			return Converted{}, marquee.Invalid("invalid conversion", marquee.Problems{"sig": "is not the advertiser's signature of this clickId, orderId and value (docs/api.md#conversions)"})
		}
	}
	// Post-view: the user's last viewable impression, else impression,
	// of the advertiser's ads — only of a visitor who may be followed.
	var view, imp *attribution.Touchpoint
	var seen [2]counters.Seen
	var payloads [2]tracking.Payload
	if user := s.lines.privacy.User([]byte(in.UserKey), now, pv.Limit); user != 0 && pv.Allows(privacy.Attribute) && s.touches != nil && (click == nil || !clickWithin(clickAt, now)) {
		i, v, err := s.touches.Last(sctx, user, advertiser)
		if err != nil {
			return Converted{}, marquee.Errorf(marquee.KindUnavailable, "the attribution store cannot be reached: try again")
		}
		seen = [2]counters.Seen{v, i}
		for k, sn := range seen {
			if sn.At == 0 {
				continue
			}
			p, err := s.signer.Open(sn.Token, time.Unix(sn.At, 0))
			if err != nil {
				continue // signed under a key since retired
			}
			payloads[k] = p
			w := marquee.DefaultPostView
			if c, ok := plan.Campaign(p.Campaign); ok {
				w = c.Windows().PostView
			}
			tp := &attribution.Touchpoint{At: time.Unix(sn.At, 0), Window: w}
			if k == 0 {
				view = tp
			} else {
				imp = tp
			}
		}
	}
	var p *tracking.Payload
	var kind string
	verified := false
	switch attribution.Choose(clickAt, view, imp, now) {
	case marquee.AttributedClick:
		p, kind, verified = &click.Payload, marquee.AttributedClick, clickVerified && vouched
	case "view":
		p, kind, verified = &payloads[0], marquee.AttributedView, seen[0].Verified && v.Postback // a pixel's signature does not cover the user key
	case "impression":
		p, kind, verified = &payloads[1], marquee.AttributedView, seen[1].Verified && v.Postback
	default:
		reason := "no click or impression within the attribution windows"
		if click != nil {
			reason = "the click is older than its campaign's post-click window"
		}
		if err := s.writeConversion(e, nil, in, advertiser, "", false, ivt.Human, Charge{}); err != nil {
			return Converted{}, err
		}
		return Converted{Reason: reason}, nil
	}
	if c, ok := plan.Campaign(p.Campaign); ok {
		campaign = c
	}
	if vouched && campaign != nil {
		if max := campaign.Windows().MaxValue; max > 0 && in.Value > max {
			return Converted{}, marquee.Invalid("invalid conversion", marquee.Problems{"value": "is more than campaign " + strconv.FormatInt(campaign.ID, 10) + "'s attribution.maxValue, " + max.String()})
		}
	}
	// Counted once: an order once; a click (or an impression) without an
	// order once; and, from a pixel — which anyone holding a click id
	// can fire — a click once whatever its orders, so that no page can
	// multiply what one click earns. An unsigned pixel's keys are its
	// own: it never takes an order, or a click, from what the advertiser
	// vouches for.
	var keys []string
	switch {
	case !vouched:
		keys = append(keys, "unsigned:"+kind+":"+hex.EncodeToString(p.Decision[:]))
	case in.OrderID != "":
		keys = append(keys, "order:"+in.OrderID)
		if !v.Postback {
			keys = append(keys, kind+":"+hex.EncodeToString(p.Decision[:]))
		}
	default:
		keys = append(keys, kind+":"+hex.EncodeToString(p.Decision[:]))
	}
	conv := marquee.Conversion{Advertiser: advertiser, Campaign: p.Campaign, Ad: p.Ad, Attribution: kind, Value: in.Value, At: now}
	forget := func(keys []string) {
		for _, k := range keys {
			s.conversions.RemoveConversion(context.WithoutCancel(sctx), advertiser, k)
		}
	}
	why := s.conversionIVT(e, p, click, kind, v, now)
	billable := verified
	if why != ivt.Human {
		verified = false
	}
	out := Converted{Attribution: kind, AdID: p.Ad, CampaignID: p.Campaign, Verified: verified, IVT: why.Name()}
	for i, k := range keys {
		conv.Dedupe = k
		fresh, err := s.conversions.AddConversion(sctx, conv)
		if err != nil {
			forget(keys[:i])
			return Converted{}, err
		}
		if !fresh {
			forget(keys[:i])
			out.Duplicate = true
			return out, nil
		}
	}
	out.Counted = true
	ch := Charge{Campaign: campaign, At: now}
	if billable && campaign != nil && campaign.Price != nil {
		// What a conversion costs is the price's rule (marquee.Price.EventCost),
		// at the price its decision was made at.
		pr := marquee.Price{Model: campaign.Price.Model, Amount: marquee.Micros(p.PriceMicros)}
		if cost, bills := pr.EventCost(); bills == "conversion" {
			ch.Cost = cost
		}
	}
	if why != ivt.Human && ch.Cost > 0 {
		ch.unbill(marquee.UnbilledInvalid)
	}
	ch, err := s.ledger.Bill(sctx, ch)
	if err == nil {
		err = s.writeConversion(e, p, in, advertiser, kind, verified, why, ch)
	}
	if err != nil {
		forget(keys) // the retry counts it
		return Converted{}, err
	}
	return out, nil
}

// conversionIVT is why a conversion attributed (kind) to the decision p
// is invalid traffic: its decision's, or its click's, reason (the click
// id carries it); a pixel's request's own (its visitor's browser; a
// postback is the advertiser's server, and says nothing of the visitor);
// a conversion sooner after its click than humanly possible
// (ivt.Filter.MinConversionDelay).
func (s *Service) conversionIVT(e *Edge, p *tracking.Payload, click *tracking.Clicked, kind string, v Voucher, now time.Time) ivt.Reason {
	if why := ivt.Reason(p.IVT); why != ivt.Human {
		return why
	}
	if !v.Postback {
		q := e.request()
		if why := s.ivt.Request(&q); why != ivt.Human {
			return why
		}
	}
	if kind == marquee.AttributedClick && click != nil && now.Sub(click.Issued) < s.ivt.MinConversionDelay() {
		return ivt.FastConversion
	}
	return ivt.Human
}

// clickWithin says the click is within its window at now.
func clickWithin(c *attribution.Touchpoint, now time.Time) bool {
	return attribution.Choose(c, nil, nil, now) != ""
}

// writeConversion writes a conversion's event line: of the decision p
// (nil: attributed to nothing, named by its advertiser only), with its
// attribution, value, order id, cost and whether it is verified.
func (s *Service) writeConversion(e *Edge, p *tracking.Payload, in *marquee.ConversionInput, advertiser int64, kind string, verified bool, why ivt.Reason, ch Charge) error {
	cost := ch.Cost
	var num [20]byte
	line := s.lines.appendEdgeHead(nil, e, privacy.GPC) // the advertiser's page's visitor: no address kept
	line = eventline.AppendPlain(line, "type", "conversion")
	line = eventline.AppendPlain(line, "advertiser", strconv.AppendInt(num[:0], advertiser, 10))
	if p != nil {
		line = eventline.AppendPlain(line, "ad", strconv.AppendInt(num[:0], p.Ad, 10))
		line = eventline.AppendPlain(line, "campaign", strconv.AppendInt(num[:0], p.Campaign, 10))
		line = eventline.AppendPlain(line, "placement", p.Placement)
		line = eventline.AppendPlain(line, "decision", hex.AppendEncode(nil, p.Decision[:]))
		line = eventline.AppendPlain(line, "attribution", kind)
		line = eventline.AppendPlain(line, "conversionValue", strconv.AppendInt(num[:0], int64(in.Value), 10))
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
	}
	if in.OrderID != "" {
		line = eventline.AppendString(line, "orderId", []byte(in.OrderID))
	}
	line = eventline.End(line)
	return s.ledger.Record(e.Conn, line, ch)
}
