package reports

import (
	"bytes"
	"net/netip"
	"strings"

	"marquee"
	"marquee/geoip"
	"marquee/targeting"
)

// platforms are the platforms a report breaks down by, as stored: the
// vocabulary's.
var platforms = marquee.Platforms

// Platform is an event's platform: its own platform field when that is
// android, ios or web (any case), else what its User-Agent says —
// Android, then iPhone/iPad/iOS, then web.
func Platform(field, ua []byte) string {
	if p, ok := platformField(field); ok {
		return p
	}
	return marquee.UAPlatform(ua)
}

// platformField is the platform a platform field names (any case), if
// it names one (the targeting package's codes).
func platformField(field []byte) (string, bool) {
	p := targeting.PlatformName(targeting.PlatformCode(field))
	return p, p != ""
}

// Direct is the referrer of an event that names none.
const Direct = "direct"

// Other is the browser or OS of a User-Agent the parser does not know.
const Other = "Other"

// ReferrerHost is the host a referrer URL names, lower case, without a
// "www." (what a report by referrer groups by), Direct for none, and
// "(invalid)" for one that is not a URL with a host name.
func ReferrerHost(ref []byte) string {
	if len(ref) == 0 {
		return Direct
	}
	// The line keeps JSON's escapes: a client may have sent "\/" for "/".
	if bytes.Contains(ref, []byte(`\/`)) {
		ref = bytes.ReplaceAll(ref, []byte(`\/`), []byte("/"))
	}
	_, rest, ok := bytes.Cut(ref, []byte("://"))
	if !ok {
		return "(invalid)"
	}
	if i := bytes.IndexAny(rest, "/?#\\"); i >= 0 {
		rest = rest[:i]
	}
	if i := bytes.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := bytes.LastIndexByte(rest, ':'); i >= 0 && bytes.IndexByte(rest, ']') < 0 {
		rest = rest[:i]
	}
	host, msg := marquee.NormDomain(string(rest))
	if msg != "" {
		return "(invalid)"
	}
	return strings.TrimPrefix(host, "www.")
}

// Unknown is the country of an event that names none and whose address
// says none.
const Unknown = "ZZ"

// Country is an event's country: its own country field when that is a
// valid ISO 3166-1 alpha-2 code (any case), else the server's geo field
// (where GeoIP placed the address before privacy truncated it), else
// where geo places its address (geo may be nil), else Unknown.
func Country(field, geoField, ip []byte, geo *geoip.DB) [2]byte {
	for _, f := range [2][]byte{field, geoField} {
		if slot, ok := marquee.CountrySlot(f); ok {
			c := marquee.CountryCode(slot)
			return [2]byte{c[0], c[1]}
		}
	}
	if geo != nil {
		if a, err := netip.ParseAddr(string(ip)); err == nil {
			if c := geo.Country(a); c != "" {
				return [2]byte{c[0], c[1]}
			}
		}
	}
	return [2]byte{'Z', 'Z'}
}
