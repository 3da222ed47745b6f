package demand

import (
	"net/netip"

	"github.com/prebid/openrtb/v20/openrtb2"

	"marquee/privacy"
)

// denied are the activities partner p may not receive in a: what the
// request's signals deny every partner, and what rules deny p (its
// component is its name).
func denied(rules *privacy.Rules, a *Auction, p string) privacy.Activities {
	v, c := a.Verdict, a.Context
	c.Component = p
	rules.Apply(&v, c)
	return v.Denied
}

// requestFor is p's bid request of a's impressions imps: a's common
// objects copied, then cut to what p may receive (docs/demand.md#privacy):
// without transmitUserId no user id, buyer id or eids; without
// transmitPreciseGeo the geo is the country alone; without transmitIp
// the address is truncated (IPv4 /24, IPv6 /48) and the User-Agent left
// out; without transmitUrl no page or referrer (the domain stays). Its
// impressions carry the deals that name p; test marks a test partner's.
func (x *Exchange) requestFor(p *partner, a *Auction, imps []int) openrtb2.BidRequest {
	r := a.Request
	r.Imp = make([]openrtb2.Imp, len(imps))
	var deals []openrtb2.Deal
	if a.Deals != nil {
		deals = a.Deals(p.Name)
	}
	for i, k := range imps {
		r.Imp[i] = a.Imps[k].Imp
		if len(deals) > 0 {
			r.Imp[i].PMP = &openrtb2.PMP{Deals: deals}
		}
	}
	if p.Test {
		r.Test = 1
	}
	denied := denied(x.cfg.Rules, a, p.Name)
	if r.User != nil && denied.Has(privacy.TransmitUserID) {
		u := *r.User
		u.ID, u.BuyerUID, u.EIDs = "", "", nil
		r.User = &u
	}
	if r.Device != nil {
		d := *r.Device
		if d.Geo != nil && denied.Has(privacy.TransmitPreciseGeo) {
			d.Geo = &openrtb2.Geo{Country: d.Geo.Country, Type: d.Geo.Type}
		}
		if denied.Has(privacy.TransmitIP) {
			d.IP, d.IPv6, d.UA, d.SUA = truncated(d.IP), truncated(d.IPv6), "", nil
		}
		r.Device = &d
	}
	if r.Site != nil && denied.Has(privacy.TransmitURL) {
		s := *r.Site
		s.Page, s.Ref = "", ""
		r.Site = &s
	}
	return r
}

// truncated is the address s truncated (privacy.Truncate), "" if none.
func truncated(s string) string {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	return privacy.Truncate(ip).String()
}
