// Package linkroute chooses where a short link sends a visitor: the first
// of the link's rules that the request meets, else one of its A/B
// destinations, picked by a hash of the visitor so that a visitor keeps
// theirs, else the link's url. Choose is a pure function of the link and
// the request, and allocates nothing (a country rule's GeoIP look-up
// aside).
package linkroute

import (
	"bytes"
	"net/netip"
	"time"

	"github.com/cespare/xxhash/v2"

	"marquee"
)

// Args are a request's query arguments (*fasthttp.Args is one).
type Args interface {
	Has(key string) bool
	Peek(key string) []byte
}

// Geo places an address in a country (*geoip.DB is one): an ISO
// 3166-1 alpha-2 code, or "" when it cannot.
type Geo interface {
	Country(ip netip.Addr) string
}

// Visitor is what Choose reads of a request. Its byte slices are only
// read during the call.
type Visitor struct {
	UA             []byte     // the User-Agent (a platform rule's, and the split's hash)
	AcceptLanguage []byte     // the Accept-Language header
	IP             netip.Addr // the client's address (a country rule's, and the split's hash)
	Geo            Geo        // nil: no country is known, and country rules never match
	Query          Args       // nil: no query parameter is set
	Now            time.Time

	platform string // Platform(UA), once a rule has asked
}

// Platform is the visitor's rule platform (see Platform), worked out the
// first time a rule asks.
func (v *Visitor) Platform() string {
	if v.platform == "" {
		v.platform = Platform(v.UA)
	}
	return v.platform
}

// Choice is where a visitor goes, and why.
type Choice struct {
	URL  string
	Rule int // the index of the rule that matched; -1: none did
	Dest int // the index of the destination picked; -1: the link has no split, or a rule matched
}

// Choose returns where l sends v: the first rule of l.Rules whose
// conditions v meets, else a destination of l.Destinations (by Pick),
// else l.URL.
func Choose(l *marquee.Link, v *Visitor) Choice {
	for i := range l.Rules {
		if Matches(&l.Rules[i].When, v) {
			return Choice{URL: l.Rules[i].URL, Rule: i, Dest: -1}
		}
	}
	if len(l.Destinations) > 0 {
		d := Pick(l.Destinations, Sticky(l.ID, VisitorHash(v.IP, v.UA)))
		return Choice{URL: l.Destinations[d].URL, Rule: -1, Dest: d}
	}
	return Choice{URL: l.URL, Rule: -1, Dest: -1}
}

// Matches reports whether v meets every condition of w that is set.
func Matches(w *marquee.RuleWhen, v *Visitor) bool {
	if !w.From.IsZero() && v.Now.Before(w.From) || !w.To.IsZero() && !v.Now.Before(w.To) {
		return false
	}
	if len(w.Platforms) > 0 && !oneOf(w.Platforms, v.Platform()) {
		return false
	}
	for _, q := range w.Query {
		if v.Query == nil || !v.Query.Has(q.Name) || string(v.Query.Peek(q.Name)) != q.Value {
			return false
		}
	}
	if len(w.Languages) > 0 && !AcceptsAny(v.AcceptLanguage, w.Languages) {
		return false
	}
	if len(w.Countries) > 0 {
		if v.Geo == nil || !v.IP.IsValid() || !oneOf(w.Countries, v.Geo.Country(v.IP)) {
			return false
		}
	}
	return true
}

func oneOf(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

// Platform is the rule platform of a User-Agent: android or ios as
// reports classify it (marquee.UAPlatform), else desktop.
func Platform(ua []byte) string {
	if p := marquee.UAPlatform(ua); p != marquee.PlatformWeb {
		return p
	}
	return marquee.PlatformDesktop
}

// AcceptsAny reports whether an Accept-Language header accepts one of
// tags (canonical BCP 47 tags, as a rule holds them): a language range of
// the header with a quality above 0 that is a tag, or starts with a tag
// and "-" ("en" takes en-GB; en-US does not take a browser that says only
// en). Letters compare in any case; "*" takes nothing (it says no
// language).
func AcceptsAny(header []byte, tags []string) bool {
	for len(header) > 0 {
		var item []byte
		item, header, _ = bytes.Cut(header, []byte{','})
		rng, params, _ := bytes.Cut(item, []byte{';'})
		rng = bytes.TrimSpace(rng)
		if len(rng) == 0 || zeroQuality(params) {
			continue
		}
		for _, t := range tags {
			if len(rng) >= len(t) && bytes.EqualFold(rng[:len(t)], []byte(t)) && (len(rng) == len(t) || rng[len(t)] == '-') {
				return true
			}
		}
	}
	return false
}

// zeroQuality reports whether a language range's parameters say q=0
// (q=0, q=0.0, q=0.00, q=0.000: "not acceptable").
func zeroQuality(params []byte) bool {
	params = bytes.TrimSpace(params)
	if len(params) < 3 || params[0]|0x20 != 'q' || params[1] != '=' {
		return false
	}
	v := bytes.TrimSpace(params[2:])
	if len(v) == 0 || v[0] != '0' {
		return false
	}
	for _, c := range v[1:] {
		if c != '.' && c != '0' {
			return false
		}
	}
	return true
}

// VisitorHash is the hash of a visitor a split keeps apart: their
// address and User-Agent, so that one browser on one network keeps its
// destination with no cookie. reports computes it again from a click's
// or conversion's event line, to count conversions by destination.
func VisitorHash(ip netip.Addr, ua []byte) uint64 {
	var d xxhash.Digest
	d.Reset()
	a := ip.As16()
	d.Write(a[:])
	d.Write(ua)
	return d.Sum64()
}

// Sticky is the hash a visitor (VisitorHash) of link id is split by: two
// links split the same visitors differently. The same on every instance.
func Sticky(id int64, visitor uint64) uint64 {
	// splitmix64's finaliser over the two: every bit of each moves every
	// bit of the result.
	z := visitor ^ uint64(id)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Pick is the destination a visitor with hash h gets: the one whose
// share of the total weight holds h's place in it.
func Pick(dests []marquee.Destination, h uint64) int {
	total := 0
	for _, d := range dests {
		total += d.Weight
	}
	if total <= 0 {
		return 0
	}
	at := int(h % uint64(total))
	for i, d := range dests {
		if at < d.Weight {
			return i
		}
		at -= d.Weight
	}
	return len(dests) - 1
}
