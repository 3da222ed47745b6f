package marquee

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Limits of a client event (GET or POST /e). Every event becomes one JSON
// line: the client's fields plus the fields the server adds.
const (
	MaxEventFields   = 64      // client fields per event
	MaxEventKey      = 64      // bytes of a field name
	MaxEventValue    = 2 << 10 // bytes of a field's value (a POSTed value: of its compact JSON)
	MaxEventDepth    = 8       // nesting of a POSTed value
	MaxEventsPerPost = 500     // events in one POST
	MaxEventsBody    = 1 << 20 // bytes of one POST body
)

// ReservedEventKeys are the fields the server adds to events (geo and
// limited when privacy says so: docs/privacy.md; verified on a tracking
// URL's event that a decision vouches for: docs/api.md#verified-counts;
// defaultFill on the events of a placement's default ad; bidder on those
// of a header-bidding bid that won its slot, partner of a demand
// partner's (docs/demand.md); redirected on a redirect's
// click; cost, attribution, conversionValue, unbilled and unbilledCost
// of what money counts: docs/api.md#money; ivt, why an event is invalid
// traffic, and adjusts, what an adjustment credits: docs/ivt.md; signals
// and denied, a decision's privacy signals and the activities they deny:
// docs/privacy.md#activities); a client may not send them.
var ReservedEventKeys = [...]string{"receivedAt", "id", "ip", "geo", "ua", "limited", "verified", "defaultFill", "bidder", "partner", "redirected",
	"cost", "attribution", "conversionValue", "unbilled", "unbilledCost", "ivt", "adjusts", "signals", "denied"}

// ConsentEventKeys are the fields that carry a visitor's consent (the
// gdpr flag, the TCF string, the GPP string and its sections, the US
// Privacy string, as the IAB names them): the server reads them and
// never writes them into an event, as docs/privacy.md promises.
var ConsentEventKeys = [...]string{"gdpr", "gdpr_consent", "gpp", "gpp_sid", "us_privacy"}

// IsConsentKey reports whether k is one of ConsentEventKeys.
func IsConsentKey[K string | []byte](k K) bool {
	for _, c := range ConsentEventKeys {
		if string(k) == c {
			return true
		}
	}
	return false
}

// CheckEventKey reports what is wrong with a field name, or "" if nothing:
// 1–64 bytes of letters, digits, '_', '-', '.' and ':', not reserved.
func CheckEventKey(k []byte) string {
	if len(k) == 0 || len(k) > MaxEventKey {
		return fmt.Sprintf("field names must be 1-%d bytes", MaxEventKey)
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return "field names may hold only letters, digits and _ - . :"
		}
	}
	for _, r := range ReservedEventKeys {
		if string(k) == r {
			return "is set by the server"
		}
	}
	return ""
}

// CheckEventValue reports what is wrong with a string value, or "".
func CheckEventValue(v []byte) string {
	if len(v) > MaxEventValue {
		return fmt.Sprintf("values must be at most %d bytes", MaxEventValue)
	}
	if !utf8.Valid(v) {
		return "is not valid UTF-8"
	}
	return ""
}

// CheckBeaconField reports what is wrong with field i (from 0) of a beacon
// (GET /e?k=v&…): key k with string value v, after the keys before it.
// It returns the field's path in the problems ("" when nothing is wrong)
// and the problem: a bad key, then a bad value, then a repeated key. It
// allocates only to report.
func CheckBeaconField(i int, before [][]byte, k, v []byte) (path, problem string) {
	if msg := CheckEventKey(k); msg != "" {
		// A key that cannot name itself in JSON is named by its position.
		if len(k) > 0 && len(k) <= MaxEventKey && utf8.Valid(k) && !bytes.ContainsAny(k, "\"\x00") {
			return string(k), msg
		}
		return "fields[" + strconv.Itoa(i) + "]", msg
	}
	if msg := CheckEventValue(v); msg != "" {
		return string(k), msg
	}
	for _, b := range before {
		if bytes.Equal(b, k) {
			return string(k), "is repeated"
		}
	}
	return "", ""
}

// AddEventProblem records that path is wrong in p, allocating p on the
// first problem; a path longer than a key's limit is cut (it names a key
// a client made up).
func AddEventProblem(p Problems, path, msg string) Problems {
	if p == nil {
		p = Problems{}
	}
	if len(path) > MaxEventKey+16 {
		path = path[:MaxEventKey] + "…"
	}
	p[path] = msg
	return p
}

// InvalidEvent is the error of an event input with one problem.
func InvalidEvent(path, msg string) error {
	return Invalid("invalid event", Problems{path: msg})
}
