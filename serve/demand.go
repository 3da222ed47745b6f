package serve

import (
	"context"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"

	"github.com/prebid/openrtb/v20/adcom1"
	"github.com/prebid/openrtb/v20/openrtb2"
	"golang.org/x/text/language"

	"marquee"
	"marquee/delivery"
	"marquee/demand"
	"marquee/privacy"
	"marquee/targeting"
)

// Server-side demand in a decision (docs/demand.md#the-auction): before
// the engine picks, the demand partners are asked for the slots they may
// fill; their bids join the slots' bids and compete as the page's do
// (deals lift a listed partner's bid whatever the deal's clientBids).

// auction asks the partners for bids for decision d's slots (e, in: the
// request; signals: what its signals deny, before Marquee's own rules)
// and adds the bids to the slots. Nothing for a preview, invalid
// traffic, or slots no partner buys.
func (s *Service) auction(ctx context.Context, e *Edge, in *Input, plan *delivery.Plan, d *Decision, signals privacy.Verdict) {
	r := &d.Request
	var imps []demand.Imp
	site, sellerID := "", ""
	for i := range r.Slots {
		sl := &r.Slots[i]
		pl, ok := plan.Placement(sl.Placement)
		if !ok || sl.Count > 1 || !s.demand.Any(marquee.FormatBanner, pl.Name) {
			continue
		}
		imp := openrtb2.Imp{ID: strconv.Itoa(i), TagID: pl.Name, Banner: &openrtb2.Banner{}, BidFloorCur: s.currency}
		for _, size := range pl.Sizes {
			if w, h, ok := parseSize(size); ok {
				imp.Banner.Format = append(imp.Banner.Format, openrtb2.Format{W: w, H: h})
			}
		}
		if pl.Floor > 0 {
			imp.BidFloor = pl.Floor.Float()
		}
		if secure := int8(1); strings.HasPrefix(string(e.Origin), "https:") {
			imp.Secure = &secure
		}
		if site == "" {
			site, sellerID = pl.Site, s.sites.SellerID(plan, pl.Name)
		}
		imps = append(imps, demand.Imp{Imp: imp, Format: marquee.FormatBanner, Placement: pl.Name})
	}
	if len(imps) == 0 {
		return
	}
	var id [16]byte
	for i := range id {
		id[i] = byte(d.Rand.Uint32())
	}
	a := demand.Auction{Imps: imps, Verdict: signals,
		Context: privacy.Context{Country: r.Viewer.CountryCode(), Site: site, Sections: signals.Sections}}
	req := &a.Request
	req.ID, req.AT, req.TMax, req.Cur = hex.EncodeToString(id[:]), 1, s.tmax.Milliseconds(), []string{s.currency}
	req.Site = &openrtb2.Site{ID: site, Page: string(in.URL), Ref: string(in.Referrer)}
	if req.Site.Page == "" {
		req.Site.Page = string(e.Referer)
	}
	if u, err := url.Parse(req.Site.Page); err == nil {
		req.Site.Domain = u.Hostname()
	}
	if sellerID != "" {
		req.Site.Publisher = &openrtb2.Publisher{ID: sellerID}
	}
	ip, _ := viewerIP(e, in)
	ua := viewerUA(e, in)
	dev := &openrtb2.Device{UA: string(ua), DeviceType: deviceType(targeting.DeviceType(ua))}
	if ip.Is4() {
		dev.IP = ip.String()
	} else if ip.IsValid() {
		dev.IPv6 = ip.String()
	}
	if c := r.Viewer.CountryCode(); c != "" {
		dev.Geo = &openrtb2.Geo{Country: alpha3(c), Region: string(in.Region), City: string(in.City), Metro: string(in.Metro), Type: adcom1.LocationIP}
	}
	req.Device = dev
	if r.User != 0 {
		req.User = &openrtb2.User{ID: strconv.FormatUint(r.User, 16)}
	}
	regs := &openrtb2.Regs{GPP: string(in.GPP), USPrivacy: string(in.USP)}
	if in.GDPR == 0 || in.GDPR == 1 { // -1: not said
		regs.GDPR = &in.GDPR
	}
	for _, sid := range strings.Split(string(in.GPPSID), ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(sid), 10, 8); err == nil {
			regs.GPPSID = append(regs.GPPSID, int8(n))
		}
	}
	if signals.Carried&privacy.SaidCOPPA != 0 {
		regs.COPPA = 1
	}
	req.Regs = regs
	if len(in.TCF) > 0 {
		if req.User == nil {
			req.User = &openrtb2.User{}
		}
		req.User.Consent = string(in.TCF)
	}
	req.Source = &openrtb2.Source{TID: req.ID}
	if s.schain != nil && sellerID != "" {
		req.Source.SChain = s.schain(sellerID, req.ID)
	}
	a.Deals = func(partner string) []openrtb2.Deal {
		var out []openrtb2.Deal
		for _, dl := range s.engine.DealsOf(partner, d.Now) {
			out = append(out, openrtb2.Deal{ID: dl.ID, BidFloor: dl.Floor.Float(), BidFloorCur: s.currency})
		}
		return out
	}
	d.Partners = s.demand.Run(ctx, &a)
	for k := range d.Partners {
		b := &d.Partners[k]
		sl := &r.Slots[b.Imp]
		bid := delivery.Bid{Bidder: marquee.PartnerBidder(b.Partner), CPM: b.Price, AdID: []byte(b.Raw.ID), Deal: b.Raw.DealID, Server: true, Index: k}
		if b.Raw.W > 0 && b.Raw.H > 0 {
			bid.Size = strconv.FormatInt(b.Raw.W, 10) + "x" + strconv.FormatInt(b.Raw.H, 10)
		}
		sl.Bids = append(sl.Bids[:len(sl.Bids):len(sl.Bids)], bid) // the page's bids share one array: never write past a slot's
	}
}

// notify sends the partners' notices of decision d: its winners' nurl,
// its losers' lurl with the loss code.
func (s *Service) notify(d *Decision) {
	if len(d.Partners) == 0 {
		return
	}
	won := make([]bool, len(d.Partners))
	for si := range d.Chosen {
		for _, ch := range d.Chosen[si] {
			if ch.Bid != nil && ch.Bid.Server {
				won[ch.Bid.Index] = true
			}
		}
	}
	for k := range d.Partners {
		b := &d.Partners[k]
		if won[k] {
			s.demand.Win(b, true)
			continue
		}
		loss := demand.LossOutbid
		if ch := d.Chosen[b.Imp]; len(ch) > 0 && ch[0].Bid != nil && ch[0].Bid.Deal != "" && b.Raw.DealID == "" {
			loss = demand.LossToDeal
		}
		s.demand.Lose(b, loss)
	}
}

// KeepMarkup keeps, under decision id, the markup and billing notice of
// the partner's bid ch of decision d won with (its frame draws it, its
// verified impression bills it).
func (d *Decision) KeepMarkup(id [16]byte, ch delivery.Choice) {
	if ch.Bid == nil || !ch.Bid.Server || d.svc.demand == nil {
		return
	}
	d.svc.demand.Keep(id, &d.Partners[ch.Bid.Index])
}

// Partner is the partner's bid of choice ch (nil: not a partner's).
func (d *Decision) Partner(ch delivery.Choice) *demand.Bid {
	if ch.Bid == nil || !ch.Bid.Server {
		return nil
	}
	return &d.Partners[ch.Bid.Index]
}

// PartnerSize is the size partner bid pb of slot si is drawn at: the
// bid's, else its placement's first.
func (d *Decision) PartnerSize(si int, pb *demand.Bid) (w, h int64) {
	if pb.Raw.W > 0 && pb.Raw.H > 0 {
		return pb.Raw.W, pb.Raw.H
	}
	if pl, ok := d.svc.engine.Plan().Placement(d.Request.Slots[si].Placement); ok && len(pl.Sizes) > 0 {
		w, h, _ = parseSize(pl.Sizes[0])
	}
	return w, h
}

// parseSize reads "300x250".
func parseSize(s string) (w, h int64, ok bool) {
	a, b, found := strings.Cut(s, "x")
	w, err1 := strconv.ParseInt(a, 10, 64)
	h, err2 := strconv.ParseInt(b, 10, 64)
	return w, h, found && err1 == nil && err2 == nil && w > 0 && h > 0
}

// alpha3 is an ISO 3166-1 alpha-2 code's alpha-3 (OpenRTB's geo.country).
func alpha3(alpha2 string) string {
	r, err := language.ParseRegion(alpha2)
	if err != nil {
		return ""
	}
	return r.ISO3()
}

// deviceType is AdCOM's device type of targeting's.
func deviceType(t string) adcom1.DeviceType {
	switch t {
	case "desktop":
		return adcom1.DevicePC
	case "phone":
		return adcom1.DevicePhone
	case "tablet":
		return adcom1.DeviceTablet
	case "tv":
		return adcom1.DeviceTV
	}
	return 0
}
