// Package privacy decides what of a visitor an event keeps and what
// Marquee may do with it (docs/privacy.md): the mode (off, balanced,
// strict), what a request's signals allow (Decide: a TCF v2 string's
// purposes, read with Prebid's go-gdpr; a GPP string's US and TCF
// sections, read with Prebid's go-gpp; a US Privacy string; the Sec-GPC
// header; COPPA) — the activities of one table —, the truncation of
// addresses, and the pseudonyms
// user keys become — a keyed hash (SipHash-2-4) under a secret that never
// leaves the server, rotated daily in strict mode.
//
// Everything here runs on the hot paths (beacons, decisions, tracking
// URLs, redirects) and allocates nothing, but the parse of a consent
// string, which only requests that carry one pay.
package privacy

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dchest/siphash"
)

// Mode is how much of a visitor events keep.
type Mode uint8

// The modes (docs/privacy.md has the table of what each stores).
const (
	// Balanced, the default: addresses truncated, user keys as stable
	// pseudonyms, referrers without their query.
	Balanced Mode = iota
	// Strict: as balanced, but pseudonyms rotate every UTC day, a user
	// key is used only with a signal that allows it (consent, or GDPR
	// said not to apply), and referrers keep only their origin.
	Strict
	// Off: events keep the full address, the user id as sent and the
	// full referrer — unless the request withholds consent.
	Off
)

// Modes are the modes' names, in the order of their values.
var Modes = [...]string{Balanced: "balanced", Strict: "strict", Off: "off"}

func (m Mode) String() string { return Modes[m] }

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for m, name := range Modes {
		if s == name {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("privacy mode %q: want balanced, strict or off", s)
}

// Limit is why a request's visitor must not be followed: none, or the
// reason, which the event line names ("limited").
type Limit uint8

// The limits.
const (
	None Limit = iota
	// GPC: the browser sent Sec-GPC: 1 (Global Privacy Control), an
	// opt-out of sale and sharing.
	GPC
	// Refused: GDPR applies and the TCF string does not give consent to
	// storing and reading a device identifier (purpose 1) — or to the
	// configured vendor —, or is missing or unreadable.
	Refused
	// NoSignal: strict mode, and the request said neither that GDPR
	// does not apply nor that consent was given.
	NoSignal
	// Withheld: the publisher said its visitor did not consent (a
	// decision's consent.given false).
	Withheld
	// Child: the site or placement is directed to children (COPPA): no
	// user, ever.
	Child
	// Malformed: a GPP string (or its section ids) could not be read: a
	// signal of no consent.
	Malformed
	// NotMeasured: a user key may be used (caps), but not to measure by
	// user: GDPR applies and the TC string allows no measurement
	// (purpose 7). An event under it keeps no uid.
	NotMeasured
	// Ruled: an operator's privacy rule denies the user key
	// (-privacy-rules).
	Ruled
)

var limitNames = [...]string{None: "", GPC: "gpc", Refused: "tcf", NoSignal: "nosignal", Withheld: "consent", Child: "coppa", Malformed: "malformed", NotMeasured: "measure", Ruled: "rule"}

// String is the limit's name in event lines: "gpc" (before GPC stopped
// withholding a user key: tokens issued by earlier versions), "tcf",
// "nosignal", "consent", "coppa", "malformed", "measure", "rule", or ""
// for None.
func (l Limit) String() string { return limitNames[l] }

// Signal is what a request says about consent.
type Signal struct {
	// GPC is a Sec-GPC: 1 header.
	GPC bool
	// GDPR is whether GDPR applies: -1 unknown (not said), 0 no, 1 yes.
	GDPR int8
	// TCF is the TCF v2 consent string (base64url), as sent; empty when
	// none was.
	TCF []byte
	// Given is the publisher's own word on consent, collected without TCF
	// (the tag's data-consent). It wins over a TCF string, never over
	// an opt-out.
	Given Said
	// GPP is a Global Privacy Platform string, GPPSID the ids of its
	// sections that apply ("7", "7,8"; none: every section it holds).
	GPP, GPPSID []byte
	// USP is a US Privacy (CCPA) string: "1YYN".
	USP []byte
	// Child: the site or placement is directed to children (COPPA).
	Child bool
}

// Said is what a publisher said of its visitor's consent.
type Said uint8

// What a publisher may say.
const (
	Unsaid Said = iota
	Yes
	No
)

// ParseGDPR reads a gdpr parameter as OpenRTB and Prebid send it: "1"
// or "true" applies, "0" or "false" does not, anything else (or nothing)
// is unknown.
func ParseGDPR(v []byte) int8 {
	switch string(v) {
	case "1", "true":
		return 1
	case "0", "false":
		return 0
	}
	return -1
}

// Policy is a server's privacy: its mode, the TCF vendor whose consent
// counts, and the pseudonyms' secret. It is safe for concurrent use.
type Policy struct {
	mode       Mode
	vendor     uint16
	names      *Pseudonyms
	keepEmails bool
	rules      *Rules
}

// KeepingEmails is p keeping the email addresses in beacons' values as
// sent (-events-keep-emails); by default they are redacted (RedactEmails).
func (p *Policy) KeepingEmails() *Policy {
	q := *p
	q.keepEmails = true
	return &q
}

// WithRules is p applying an operator's activity controls (Rules) to
// what its requests' signals allow.
func (p *Policy) WithRules(r *Rules) *Policy {
	q := *p
	q.rules = r
	return &q
}

// Rules are the policy's activity controls (nil: none).
func (p *Policy) Rules() *Rules { return p.rules }

// RedactedEmail is what stands for an email address in a beacon's value.
const RedactedEmail = "[email]"

// emailLike is what looks like an email address: a local part, an @, and
// a domain of at least two labels.
var emailLike = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+`)

// RedactEmails is v (a beacon's field value, as text or as JSON) with
// every part that looks like an email address replaced by RedactedEmail:
// a page's analytics that put email=… in an event must not make the
// event files a list of people's addresses. v itself when it holds no @
// (no work, no allocation) or when the policy keeps emails.
func (p *Policy) RedactEmails(v []byte) []byte {
	if p.keepEmails || bytes.IndexByte(v, '@') < 0 {
		return v
	}
	return emailLike.ReplaceAll(v, []byte(RedactedEmail))
}

// NewPolicy returns the policy of mode. Pseudonyms are HMACs under a
// key derived from secret (at least 16 bytes, shared by every instance),
// rotated daily in strict mode. vendor, when not 0, is the TCF vendor id
// whose consent is needed besides purpose 1's.
func NewPolicy(mode Mode, secret []byte, vendor uint16) (*Policy, error) {
	if len(secret) < 16 {
		return nil, fmt.Errorf("privacy: a secret of at least 16 bytes is required")
	}
	return &Policy{mode: mode, vendor: vendor, names: newPseudonyms(secret, mode == Strict)}, nil
}

// Mode is the policy's mode.
func (p *Policy) Mode() Mode { return p.mode }

// Limit decides whether a request's visitor may be followed — whether a
// user key may be used (Decide's Limit).
func (p *Policy) Limit(s Signal) Limit { return p.Decide(s).Limit }

// Truncates reports whether an event under limit keeps a truncated
// address: always but in off mode, and there when the visitor is not to
// be followed.
func (p *Policy) Truncates(l Limit) bool { return p.mode != Off || l != None }

// Truncate is ip with its host bits cleared: an IPv4 address to its /24,
// an IPv6 address to its /48.
func Truncate(ip netip.Addr) netip.Addr {
	bits := 48
	if ip.Is4() {
		bits = 24
	}
	pre, err := ip.Prefix(bits)
	if err != nil {
		return ip // the zero Addr
	}
	return pre.Addr()
}

// User is the pseudonym of a user key at at — never 0, which stands for
// no user — or 0 when the key is empty or the visitor is not to be
// followed.
func (p *Policy) User(key []byte, at time.Time, l Limit) uint64 {
	if len(key) == 0 || l != None {
		return 0
	}
	return p.names.Of(key, at)
}

// AppendUID appends the uid an event keeps of the user id key at at: in
// off mode the key as sent (the caller escapes it: raw reports whether
// it did append key itself), else its pseudonym (AppendName). ok is false
// when the event keeps no uid (the visitor is not to be followed).
func (p *Policy) AppendUID(dst, key []byte, at time.Time, l Limit) (out []byte, raw, ok bool) {
	if l != None || len(key) == 0 {
		return dst, false, false
	}
	if p.mode == Off {
		return append(dst, key...), true, true
	}
	return AppendName(dst, p.names.Of(key, at)), false, true
}

// AppendName appends a pseudonym as events write it: 16 lower-case hex
// digits (a table look-up a digit, where base 36 took a division: ~40 ns
// of a beacon).
func AppendName(dst []byte, pseudonym uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], pseudonym)
	return hex.AppendEncode(dst, b[:])
}

// Referrer is what an event keeps of a referrer: all of it in off mode,
// without its query and fragment in balanced, its origin
// (scheme://host[:port]) in strict. It is a prefix of ref. (Loops, not
// bytes.IndexAny, which builds its set on every call: a redirect's cost.)
func (p *Policy) Referrer(ref []byte) []byte {
	switch p.mode {
	case Off:
		return ref
	case Strict:
		if i := bytes.Index(ref, []byte("://")); i >= 0 {
			for j := i + 3; j < len(ref); j++ {
				if c := ref[j]; c == '/' || c == '?' || c == '#' {
					return ref[:j]
				}
			}
		}
		return ref
	}
	for i, c := range ref {
		if c == '?' || c == '#' {
			return ref[:i]
		}
	}
	return ref
}

// Subject is every pseudonym key may have had within the last days days
// at now, newest first: the one of the policy (stable), or, in strict
// mode, each day's. Erasure forgets all of them.
func (p *Policy) Subject(key []byte, now time.Time, days int) []uint64 {
	if !p.names.daily {
		return []uint64{p.names.Of(key, now)}
	}
	out := make([]uint64, 0, days)
	for d := range days {
		out = append(out, p.names.Of(key, now.Add(-time.Duration(d)*24*time.Hour)))
	}
	return out
}

// Pseudonyms turns user keys into keyed hashes: SipHash-2-4 of the key
// under a 128-bit key k derived from the secret (HMAC-SHA256) — once, or,
// when daily, for each UTC day, so that one day's pseudonyms cannot be
// joined to another's without the secret. SipHash is a pseudorandom
// function made for short inputs under a secret key (Plausible's
// pseudonyms are SipHash too): ~20 ns a key where HMAC-SHA256 took ~210
// ns (go test ./privacy -bench User), on every beacon and decision. Safe
// for concurrent use; Of allocates nothing but at a day's first call.
type Pseudonyms struct {
	secret []byte
	daily  bool
	today  atomic.Pointer[dayKey]
}

// dayKey is the SipHash key of one UTC day (days since 1970; stable: the
// stable key).
type dayKey struct {
	day    int64
	k0, k1 uint64
}

// stable is the day of the stable key.
const stable = math.MinInt64

func newPseudonyms(secret []byte, daily bool) *Pseudonyms {
	return &Pseudonyms{secret: deriveKey(secret, []byte("marquee pseudonyms v1")), daily: daily}
}

func deriveKey(secret, label []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(label)
	return m.Sum(nil)
}

// Of is key's pseudonym at at (never 0).
func (ps *Pseudonyms) Of(key []byte, at time.Time) uint64 {
	day := int64(stable)
	if ps.daily {
		day = at.UTC().Truncate(24*time.Hour).Unix() / 86400
	}
	k := ps.today.Load()
	if k == nil || k.day != day {
		k = ps.keyOf(day)
		ps.today.Store(k)
	}
	return siphash.Hash(k.k0, k.k1, key) | 1 // never 0: 0 is "no user"
}

// keyOf derives the SipHash key of day from the secret.
func (ps *Pseudonyms) keyOf(day int64) *dayKey {
	key := ps.secret
	if day != stable {
		key = deriveKey(ps.secret, strconv.AppendInt([]byte("day "), day, 10))
	}
	return &dayKey{day: day, k0: binary.LittleEndian.Uint64(key[:8]), k1: binary.LittleEndian.Uint64(key[8:16])}
}
