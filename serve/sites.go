package serve

import (
	"bytes"
	"context"
	"sync/atomic"
	"time"

	"marquee"
	"marquee/delivery"
	"marquee/ivt"
)

// SiteStore is what the sites' view reads of the store.
type SiteStore interface {
	ListSites(ctx context.Context) ([]marquee.Site, error)
}

// siteRule is what a decision checks of its placements' site
// (docs/ivt.md#sites): the domains its pages may be on (none: any), and
// whether the network may bill it.
type siteRule struct {
	sellerID string
	domains  []string
	// unauthorized: -ads-txt-enforce, and its last ads.txt check found
	// none of its domains authorising the network.
	unauthorized bool
	// quarantined: the team stopped it billing.
	quarantined bool
	// child: directed to children (COPPA).
	child bool
}

// Sites are the sites serving knows, kept by the feed (From): what a
// decision checks of its placements' site. Safe for concurrent use.
type Sites struct {
	rules atomic.Pointer[map[string]siteRule] // swapped whole, never changed
	// enforceAdsTxt: a site the last check of whose ads.txt did not find
	// the network authorised bills nothing (-ads-txt-enforce).
	enforceAdsTxt bool
}

// NewSites returns the sites' view, none known yet; enforceAdsTxt is
// -ads-txt-enforce.
func NewSites(enforceAdsTxt bool) *Sites { return &Sites{enforceAdsTxt: enforceAdsTxt} }

// Set replaces the sites known.
func (s *Sites) Set(list []marquee.Site) {
	m := make(map[string]siteRule, len(list))
	for _, st := range list {
		m[st.Name] = siteRule{sellerID: st.SellerID, domains: st.Domains, unauthorized: s.enforceAdsTxt && !st.AdsTxt.Authorized(),
			quarantined: st.Quarantined, child: st.ChildDirected}
	}
	s.rules.Store(&m)
}

// From is the marquee.Applier that keeps the sites in step with the
// changelog: every site again on a reload or a change of any (sites are
// few).
func (s *Sites) From(st SiteStore) marquee.Applier {
	return marquee.ApplyFunc(func(ctx context.Context, b *marquee.Batch) error {
		if !b.Reload && !b.Sites {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		list, err := st.ListSites(ctx)
		if err != nil {
			return err
		}
		s.Set(list)
		return nil
	})
}

// siteIVT is why a decision of r is invalid traffic by its placements'
// sites (ivt.Human: it is not): a page on none of a bound site's domains
// (DomainMismatch), a site the team quarantined (Quarantined), or a site
// the network may not bill (Unauthorized), in that order.
// The page is the browser's Origin, else its Referer, else the body's
// url (server-to-server clients send it).
func (s *Sites) siteIVT(plan *delivery.Plan, r *delivery.Request, e *Edge, in *Input) ivt.Reason {
	if s == nil {
		return ivt.Human
	}
	m := s.rules.Load()
	if m == nil || len(*m) == 0 {
		return ivt.Human
	}
	var host []byte
	hostRead := false
	for i := range r.Slots {
		pl, ok := plan.Placement(r.Slots[i].Placement)
		if !ok || pl.Site == "" {
			continue
		}
		rule, ok := (*m)[pl.Site]
		if !ok {
			continue
		}
		if len(rule.domains) > 0 {
			if !hostRead {
				host, hostRead = pageHost(e, in), true
			}
			if !onDomains(host, rule.domains) {
				return ivt.DomainMismatch
			}
		}
		if rule.quarantined {
			return ivt.Quarantined
		}
		if rule.unauthorized {
			return ivt.Unauthorized
		}
	}
	return ivt.Human
}

// childDirected reports whether a placement of r is directed to children
// (COPPA): the placement's own flag, or its site's.
func (s *Sites) childDirected(plan *delivery.Plan, r *delivery.Request) bool {
	var m map[string]siteRule
	if s != nil {
		if p := s.rules.Load(); p != nil {
			m = *p
		}
	}
	for i := range r.Slots {
		pl, ok := plan.Placement(r.Slots[i].Placement)
		if ok && (pl.ChildDirected || pl.Site != "" && m[pl.Site].child) {
			return true
		}
	}
	return false
}

// SellerID is the seller id of placement's site in plan ("" none: no
// placement, no site, or a site not known).
func (s *Sites) SellerID(plan *delivery.Plan, placement string) string {
	if s == nil {
		return ""
	}
	pl, ok := plan.Placement(placement)
	m := s.rules.Load()
	if !ok || pl.Site == "" || m == nil {
		return ""
	}
	return (*m)[pl.Site].sellerID
}

// pageHost is the host of the page a decision is for, without its port
// or a final dot, as written (compare it in any case): the Origin
// header's, else the Referer's, else the body's url (nil none). It reads
// without allocating: an absolute URL's authority, after its scheme's
// "//" and any user info.
func pageHost(e *Edge, in *Input) []byte {
	for _, raw := range [][]byte{e.PageOrigin, e.Referer, in.URL} {
		if h := urlHost(raw); len(h) > 0 {
			return h
		}
	}
	return nil
}

// urlHost is the host of an absolute http(s) URL (nil: not one).
func urlHost(u []byte) []byte {
	i := bytes.Index(u, []byte("://"))
	if i <= 0 {
		return nil
	}
	rest := u[i+3:]
	if end := bytes.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	if at := bytes.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	if len(rest) > 0 && rest[0] == '[' { // an IPv6 literal: never a site's domain
		return nil
	}
	if c := bytes.IndexByte(rest, ':'); c >= 0 {
		rest = rest[:c]
	}
	return bytes.TrimSuffix(rest, []byte("."))
}

// onDomains reports whether host is one of domains (lower case) or a
// subdomain of one, in any case.
func onDomains(host []byte, domains []string) bool {
	if len(host) == 0 {
		return false
	}
	for _, d := range domains {
		switch {
		case len(host) == len(d) && asciiEqualFold(host, d):
			return true
		case len(host) > len(d) && host[len(host)-len(d)-1] == '.' && asciiEqualFold(host[len(host)-len(d):], d):
			return true
		}
	}
	return false
}

// asciiEqualFold reports whether b is s in any ASCII case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
