package web

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/prebid/openrtb/v20/openrtb2"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/delivery"
	"marquee/serve"
	"marquee/tracking"
)

// Marquee as a Prebid Server (docs/demand.md#prebid-server): stock
// Prebid.js's prebidServerBidAdapter posts the OpenRTB request of its
// s2sConfig's bidders to /openrtb2/auction; bidder "marquee" names a
// placement in each imp's params, and the answer's seat "marquee" bids
// with what the same decision chose — direct campaigns, deals, partners.

// MaxAuctionBody bounds a Prebid Server request.
const MaxAuctionBody = 256 << 10

// PBSBidder is Marquee's bidder code (and seat) to Prebid.js.
const PBSBidder = marquee.MarqueeComponent

// pbsImpExt is what an imp's ext says of Marquee: its params.
type pbsImpExt struct {
	Prebid struct {
		Bidder map[string]struct {
			Placement string `json:"placement"`
		} `json:"bidder"`
	} `json:"prebid"`
	Marquee *struct {
		Placement string `json:"placement"`
	} `json:"marquee"`
}

// handleStatus serves GET /status as Prebid Server does: 200 "ok" when
// the server serves.
func handleStatus() handler {
	return func(ctx *fasthttp.RequestCtx) error {
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("ok")
		return nil
	}
}

// handleAuction serves POST /openrtb2/auction: the OpenRTB 2.x request
// read as a decision of its imps (each naming a placement in
// imp.ext.prebid.bidder.marquee.placement, else imp.ext.marquee, else
// its tagid), decided as any decision is (its events and billing too),
// answered as a BidResponse of seat "marquee": a bid a slot a priced
// choice filled — its price the campaign's eCPM (else its CPM price,
// else the placement's floor) or the partner's bid, its adm a frame of the choice's creative
// and its impression pixel, ext.prebid.type banner and targeting
// (hb_pb, hb_bidder, hb_size). Browsers call it with credentials: the
// page's origin is allowed, no cookie is read.
func handleAuction(svc *serve.Service, rq requester, creativeOrigin string) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		if origin := ctx.Request.Header.Peek("Origin"); len(origin) > 0 {
			ctx.Response.Header.SetBytesV(fasthttp.HeaderAccessControlAllowOrigin, origin)
			ctx.Response.Header.Set(fasthttp.HeaderAccessControlAllowCredentials, "true")
			ctx.Response.Header.Set(fasthttp.HeaderVary, "Origin")
		}
		noStore(ctx)
		if err := checkBody(ctx, MaxAuctionBody, func(media []byte) bool {
			return bytes.Equal(media, contentTypeJSON) || bytes.Equal(media, []byte("text/plain")) // Prebid.js sends text/plain: no preflight
		}, "content type %q is not JSON; send application/json or text/plain"); err != nil {
			return err
		}
		var br openrtb2.BidRequest
		if err := json.Unmarshal(ctx.PostBody(), &br); err != nil {
			return marquee.Invalid("invalid bid request", marquee.Problems{"body": "must be an OpenRTB 2.x BidRequest: " + err.Error()})
		}
		in, err := pbsInput(&br)
		if err != nil {
			return err
		}
		e := rq.edge(ctx, nil)
		d, err := svc.Decide(context.Background(), &in, &e, serve.Options{})
		if err != nil {
			return err
		}
		defer d.Release()
		origin := string(appendOrigin(nil, ctx))
		frames := origin
		if creativeOrigin != "" {
			frames = creativeOrigin
		}
		resp := openrtb2.BidResponse{ID: br.ID, Cur: svc.Currency()}
		var bids []openrtb2.Bid
		for si := range d.Request.Slots {
			if len(d.Chosen[si]) == 0 {
				continue
			}
			if b, ok := pbsBid(svc, d, si, d.Chosen[si][0], origin, frames); ok {
				bids = append(bids, b)
			}
		}
		if len(bids) > 0 {
			resp.SeatBid = []openrtb2.SeatBid{{Seat: PBSBidder, Bid: bids}}
		}
		writeJSON(ctx, fasthttp.StatusOK, resp)
		return nil
	}
}

// pbsInput is br as a decision's input: each imp a slot of its
// placement, the page, device and consent as br says them; every problem
// named.
func pbsInput(br *openrtb2.BidRequest) (serve.Input, error) {
	in := serve.Input{GDPR: -1}
	p := marquee.Problems{}
	if len(br.Imp) == 0 || len(br.Imp) > serve.MaxSlots {
		p["imp"] = fmt.Sprintf("must hold 1 to %d impressions", serve.MaxSlots)
	}
	for i, imp := range br.Imp {
		var ext pbsImpExt
		if len(imp.Ext) > 0 {
			json.Unmarshal(imp.Ext, &ext) // a malformed ext names no placement: the problem below
		}
		name := ext.Prebid.Bidder[PBSBidder].Placement
		if name == "" && ext.Marquee != nil {
			name = ext.Marquee.Placement
		}
		if name == "" {
			name = imp.TagID
		}
		if name == "" || imp.ID == "" {
			p[fmt.Sprintf("imp[%d]", i)] = `must have an id and name a placement: ext.prebid.bidder.marquee.placement (Prebid.js: params {"placement": "…"})`
			continue
		}
		in.Placements = append(in.Placements, serve.SlotInput{Div: []byte(imp.ID), Placement: []byte(name)})
	}
	if len(p) > 0 {
		return in, marquee.Invalid("invalid bid request", p)
	}
	if s := br.Site; s != nil {
		in.URL, in.Referrer = []byte(s.Page), []byte(s.Ref)
	}
	if d := br.Device; d != nil {
		in.UserAgent = []byte(d.UA)
	}
	if r := br.Regs; r != nil {
		if r.GDPR != nil {
			in.GDPR = *r.GDPR
		}
		in.GPP, in.USP = []byte(r.GPP), []byte(r.USPrivacy)
		sids := make([]string, len(r.GPPSID))
		for i, s := range r.GPPSID {
			sids[i] = strconv.Itoa(int(s))
		}
		in.GPPSID = []byte(strings.Join(sids, ","))
	}
	if u := br.User; u != nil && u.Consent != "" {
		in.TCF = []byte(u.Consent)
	}
	return in, nil
}

// pbsBid is the bid of slot si's choice ch: false when it has no price
// or no creative a frame draws (a video, a native ad).
func pbsBid(svc *serve.Service, d *serve.Decision, si int, ch delivery.Choice, origin, frames string) (openrtb2.Bid, bool) {
	var cpm int64
	var w, h int64
	var crid string
	var adomain []string
	pb := d.Partner(ch)
	switch {
	case pb != nil:
		cpm, crid, adomain = ch.BidCPM, pb.Raw.CrID, pb.Raw.ADomain
		w, h = d.PartnerSize(si, pb)
	case ch.Bid != nil: // the page's own header bid: Prebid.js has it already
		return openrtb2.Bid{}, false
	default:
		c := ch.Ad.Creative
		if c == nil || c.Type != marquee.CreativeHTML && c.Type != marquee.CreativeTag && c.Type != marquee.CreativeImage {
			return openrtb2.Bid{}, false
		}
		cpm, w, h, crid = ch.Campaign.ECPM, int64(c.Width), int64(c.Height), strconv.FormatInt(ch.Ad.ID, 10)
		if cp := ch.Campaign.Price; cpm <= 0 && cp != nil && cp.Model == marquee.PriceCPM {
			cpm = ch.Campaign.PriceMicros
		}
		if pl, ok := svc.Engine().Plan().Placement(d.Request.Slots[si].Placement); ok && cpm <= 0 {
			cpm = int64(pl.Floor)
		}
	}
	if cpm <= 0 {
		return openrtb2.Bid{}, false
	}
	var scratch [320]byte
	token, id := d.Sign(scratch[:0], si, ch)
	d.KeepMarkup(id, ch)
	imp := string(tracking.AppendPath([]byte(origin), tracking.Impression, token))
	var adm strings.Builder
	if pb == nil && ch.Ad.Creative.Type == marquee.CreativeImage {
		c := ch.Ad.Creative
		img := c.Image
		if strings.HasPrefix(img, "/") {
			img = origin + img
		}
		click := string(tracking.AppendPath([]byte(origin), tracking.Click, token))
		fmt.Fprintf(&adm, `<a href="%s" target="_blank" rel="noopener"><img src="%s" width="%d" height="%d" alt="" style="display:block;border:0"></a>`,
			html.EscapeString(click), html.EscapeString(img), w, h)
	} else {
		frame := frames + FramePrefix + string(token)
		fmt.Fprintf(&adm, `<iframe src="%s" width="%d" height="%d" frameborder="0" scrolling="no" sandbox="allow-scripts allow-popups" referrerpolicy="no-referrer" title="Advertisement"></iframe>`,
			html.EscapeString(frame), w, h)
	}
	fmt.Fprintf(&adm, `<img src="%s" width="1" height="1" alt="" style="display:none">`, html.EscapeString(imp))
	price := float64(cpm) / 1e6
	size := strconv.FormatInt(w, 10) + "x" + strconv.FormatInt(h, 10)
	ext, _ := json.Marshal(map[string]any{"prebid": map[string]any{"type": "banner",
		"targeting": map[string]string{"hb_pb": priceBucket(price), "hb_bidder": PBSBidder, "hb_size": size}}})
	return openrtb2.Bid{ID: hex.EncodeToString(id[:]), ImpID: d.Request.Slots[si].Div, Price: price, AdM: adm.String(), CrID: crid,
		W: w, H: h, ADomain: adomain, MType: openrtb2.MarkupBanner, Ext: ext}, true
}

// priceBucket is Prebid's "medium" price granularity of a CPM: to the
// 10 cents below it, at most 20.00.
func priceBucket(cpm float64) string {
	return strconv.FormatFloat(math.Floor(math.Min(cpm, 20)*10)/10, 'f', 2, 64)
}
