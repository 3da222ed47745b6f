// Conversions: the advertiser's pixel (GET /conversion) and postback
// (POST /api/v1/conversions), attributed to the click or the impression
// that earned them and counted once per order (docs/api.md#conversions).

package web

import (
	"context"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/attribution"
	"marquee/counters"
	"marquee/delivery"
	"marquee/eventline"
	"marquee/privacy"
	"marquee/tracking"
)

// ConversionStore counts each conversion once (marquee.Conversion).
type ConversionStore interface {
	AddConversion(ctx context.Context, c marquee.Conversion) (bool, error)
	RemoveConversion(ctx context.Context, advertiser int64, dedupe string) error
}

// MaxConversionBody bounds a postback's body.
const MaxConversionBody = 4 << 10

// Converted is the answer to a conversion: whether it counted, what it
// was attributed to ("click", "view"; "" none), the ad and campaign, and
// whether it is verified (its spend and goals count it).
type Converted struct {
	Counted     bool   `json:"counted"`
	Duplicate   bool   `json:"duplicate,omitempty"`
	Attribution string `json:"attribution,omitempty"`
	Reason      string `json:"reason,omitempty"` // why nothing was attributed
	AdID        int64  `json:"adId,omitempty,string"`
	CampaignID  int64  `json:"campaignId,omitempty,string"`
	Verified    bool   `json:"verified"`
}

// handleConversionPost serves POST /api/v1/conversions: a server's
// postback. A key bound to advertisers converts only theirs.
func handleConversionPost(d *decider) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxConversionBody, marquee.ParseConversionInput)
		if err != nil {
			return err
		}
		given := privacy.Yes // the advertiser's server answers for its site's consent
		if in.Consent != nil && !*in.Consent {
			given = privacy.No
		}
		lim := d.events.privacy.Limit(privacy.Signal{GDPR: -1, Given: given, GPC: sentGPC(ctx)})
		out, status, err := d.convert(sctx, ctx, &in, true, boundsOf(ctx), lim)
		if err != nil {
			return err
		}
		writeJSON(ctx, status, out)
		return nil
	}
}

// handleConversionPixel serves GET /conversion?clickId=…: the pixel on
// the advertiser's page. It answers a 1×1 GIF (or 204) once counted, and
// an error as any route does.
func handleConversionPixel(d *decider) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		args := ctx.QueryArgs()
		p := marquee.Problems{}
		in := marquee.ConversionInput{ClickID: string(args.Peek("clickId")), UserKey: string(args.Peek("userKey")), OrderID: string(args.Peek("orderId"))}
		if len(in.OrderID) > marquee.MaxOrderID {
			p["orderId"] = "must be at most " + strconv.Itoa(marquee.MaxOrderID) + " bytes"
		}
		if v := args.Peek("value"); len(v) > 0 {
			m, err := marquee.ParseMicros(string(v))
			if err != nil {
				p["value"] = err.Error()
			}
			in.Value = m
		}
		if c := args.Peek("currency"); len(c) > 0 {
			in.Currency = string(c)
		}
		if a := args.Peek("advertiserId"); len(a) > 0 {
			id, err := strconv.ParseInt(string(a), 10, 64)
			if err != nil || id <= 0 {
				p["advertiserId"] = "must be an advertiser's id (a positive integer)"
			}
			in.Advertiser = id
		}
		if err := marquee.Invalid("invalid conversion", in.Check(p)); err != nil {
			return err
		}
		gdpr := int8(-1)
		switch string(args.Peek("gdpr")) {
		case "0":
			gdpr = 0
		case "1":
			gdpr = 1
		}
		lim := d.events.privacy.Limit(privacy.Signal{GPC: sentGPC(ctx), GDPR: gdpr, TCF: args.Peek("gdpr_consent")})
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, _, err := d.convert(sctx, ctx, &in, false, marquee.Bounds{}, lim); err != nil {
			return err
		}
		answerPixel(ctx)
		return nil
	}
}

// convert attributes and counts conversion in: from a postback (trusted:
// an authenticated server's) or a pixel, by a credential bound by b,
// for a visitor lim says may be followed or not. It answers 201 when it
// counted, 200 for a duplicate, 202 when nothing earned it (written to
// the event files, counted in no report).
func (d *decider) convert(sctx context.Context, ctx *fasthttp.RequestCtx, in *marquee.ConversionInput, postback bool, b marquee.Bounds, lim privacy.Limit) (Converted, int, error) {
	now := d.now()
	if msg := marquee.CheckCurrency(in.Currency, d.currency); msg != "" {
		return Converted{}, 0, marquee.Invalid("invalid conversion", marquee.Problems{"currency": msg})
	}
	plan := d.engine.Plan()
	var (
		click         *tracking.Clicked
		clickAt       *attribution.Touchpoint
		advertiser    = in.Advertiser
		campaign      *delivery.Campaign
		clickVerified bool
	)
	if in.ClickID != "" {
		c, err := d.signer.OpenClick([]byte(in.ClickID))
		if err != nil {
			return Converted{}, 0, marquee.Invalid("invalid conversion", marquee.Problems{"clickId": "was not issued by this server or was changed: not counted"})
		}
		click, clickVerified = &c, c.Verified
		if campaign, _ = plan.Campaign(c.Campaign); campaign == nil {
			return Converted{Reason: "the click's campaign is archived or gone"}, fasthttp.StatusAccepted, nil
		}
		if advertiser != 0 && advertiser != campaign.AdvertiserID {
			return Converted{}, 0, marquee.Invalid("invalid conversion", marquee.Problems{"advertiserId": "is not the advertiser of the click id's campaign (" + strconv.FormatInt(campaign.AdvertiserID, 10) + ")"})
		}
		advertiser = campaign.AdvertiserID
		clickAt = &attribution.Touchpoint{At: c.Issued, Window: campaign.Windows().PostClick}
	}
	if b.Bound() && !b.HasAdvertiser(advertiser) {
		return Converted{}, 0, marquee.Errorf(marquee.KindForbidden, "this key converts only its advertisers' conversions, not advertiser %d's", advertiser)
	}
	// Post-view: the user's last viewable impression, else impression,
	// of the advertiser's ads — only of a visitor who may be followed.
	var view, imp *attribution.Touchpoint
	var seen [2]counters.Seen
	var payloads [2]tracking.Payload
	if user := d.events.privacy.User([]byte(in.UserKey), now, lim); user != 0 && d.touches != nil && (click == nil || !clickWithin(clickAt, now)) {
		i, v, err := d.touches.Last(sctx, user, advertiser)
		if err != nil {
			return Converted{}, 0, marquee.Errorf(marquee.KindUnavailable, "the attribution store cannot be reached: try again")
		}
		seen = [2]counters.Seen{v, i}
		for k, s := range seen {
			if s.At == 0 {
				continue
			}
			p, err := d.signer.Open(s.Token, time.Unix(s.At, 0))
			if err != nil {
				continue // signed under a key since retired
			}
			payloads[k] = p
			w := marquee.DefaultPostView
			if c, ok := plan.Campaign(p.Campaign); ok {
				w = c.Windows().PostView
			}
			tp := &attribution.Touchpoint{At: time.Unix(s.At, 0), Window: w}
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
		p, kind, verified = &click.Payload, marquee.AttributedClick, clickVerified
	case "view":
		p, kind, verified = &payloads[0], marquee.AttributedView, seen[0].Verified && postback
	case "impression":
		p, kind, verified = &payloads[1], marquee.AttributedView, seen[1].Verified && postback
	default:
		reason := "no click or impression within the attribution windows"
		if click != nil {
			reason = "the click is older than its campaign's post-click window"
		}
		if err := d.writeConversion(ctx, nil, in, advertiser, "", false, 0); err != nil {
			return Converted{}, 0, err
		}
		return Converted{Reason: reason}, fasthttp.StatusAccepted, nil
	}
	if c, ok := plan.Campaign(p.Campaign); ok {
		campaign = c
	}
	// Counted once: an order once; a click (or an impression) without an
	// order once; and, from the pixel — which anyone holding a click id
	// can fire — a click once whatever its orders, so that no page can
	// multiply what one click earns.
	var keys []string
	if in.OrderID != "" {
		keys = append(keys, "order:"+in.OrderID)
	}
	if in.OrderID == "" || !postback {
		keys = append(keys, kind+":"+hex.EncodeToString(p.Decision[:]))
	}
	conv := marquee.Conversion{Advertiser: advertiser, Campaign: p.Campaign, Ad: p.Ad, Attribution: kind, Value: in.Value, At: now}
	forget := func(keys []string) {
		for _, k := range keys {
			d.conversions.RemoveConversion(context.WithoutCancel(sctx), advertiser, k)
		}
	}
	out := Converted{Attribution: kind, AdID: p.Ad, CampaignID: p.Campaign, Verified: verified}
	for i, k := range keys {
		conv.Dedupe = k
		fresh, err := d.conversions.AddConversion(sctx, conv)
		if err != nil {
			forget(keys[:i])
			return Converted{}, 0, err
		}
		if !fresh {
			forget(keys[:i])
			out.Duplicate = true
			return out, fasthttp.StatusOK, nil
		}
	}
	out.Counted = true
	var cost marquee.Nanos
	if verified && campaign != nil && campaign.Price != nil && campaign.Price.Model == "cpa" {
		cost = marquee.Micros(p.PriceMicros).Nanos()
	}
	if err := d.writeConversion(ctx, p, in, advertiser, kind, verified, cost); err != nil {
		forget(keys) // the retry counts it
		return Converted{}, 0, err
	}
	if bg := d.engine.Budgets(); bg != nil && campaign != nil && cost > 0 {
		bg.Spend(campaign, cost, now)
	}
	return out, fasthttp.StatusCreated, nil
}

// clickWithin says the click is within its window at now.
func clickWithin(c *attribution.Touchpoint, now time.Time) bool {
	return attribution.Choose(c, nil, nil, now) != ""
}

// writeConversion writes a conversion's event line: of the decision p
// (nil: attributed to nothing, named by its advertiser only), with its
// attribution, value, order id, cost and whether it is verified.
func (d *decider) writeConversion(ctx *fasthttp.RequestCtx, p *tracking.Payload, in *marquee.ConversionInput, advertiser int64, kind string, verified bool, cost marquee.Nanos) error {
	var num [20]byte
	line := d.events.appendHead(nil, ctx, privacy.GPC) // the advertiser's page's visitor: no address kept
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
		if p.Country != "" {
			line = eventline.AppendPlain(line, "country", p.Country)
		}
		if p.Platform != "" {
			line = eventline.AppendPlain(line, "platform", p.Platform)
		}
		if p.KV != "" {
			line = eventline.AppendPlain(line, "kv", p.KV)
		}
	}
	if in.OrderID != "" {
		line = eventline.AppendString(line, "orderId", []byte(in.OrderID))
	}
	line = eventline.End(line)
	return d.events.sink.Append(ctx.ConnID(), line, 1)
}
