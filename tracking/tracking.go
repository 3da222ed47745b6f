// Package tracking owns the signed tracking URL: its token, written once
// for each ad a decision chooses and read by the tracking route before
// anything is counted, and its path, /t/{kind}/{token}. A token is the
// payload — what was decided, for whom, when, until when — and an
// HMAC-SHA256 of it under a key from configuration; the previous key is
// still accepted, so that keys rotate without breaking URLs in flight.
//
// The kind (impression, view, click) is outside the signature: the
// decision's answer hands every kind of URL to the same client, so a
// MAC per kind would guard nothing a MAC per decision does not, and cost
// three times as much. What the MAC guarantees is that the decision
// happened as the payload says; each kind of each decision counts once.
package tracking

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"slices"
	"sync"
	"time"

	"marquee"
)

// Kinds of tracking URL: the event a URL reports. Impression, view and
// click come with every decision; the others are a video ad's (VAST's
// tracking events, and its error URL).
const (
	Impression    = 'i'
	View          = 'v'
	Click         = 'c'
	Start         = 's'
	FirstQuartile = 'f'
	Midpoint      = 'm'
	ThirdQuartile = 't'
	Complete      = 'e'
	Pause         = 'p'
	Mute          = 'u'
	Skip          = 'k'
	Error         = 'x'
	// VAST's ViewableImpression: the player measured the video impression
	// and found it viewable, not viewable, or could not tell.
	VideoViewable         = 'w'
	VideoNotViewable      = 'n'
	VideoViewUndetermined = 'd'
	// Conversion is the advertiser's: its URL reaches the landing page
	// through the click URL's {conversionUrl} macro.
	Conversion = 'a'
)

// kindNames are the event types of the kinds, by kind byte.
var kindNames = [128]string{Impression: "impression", View: "view", Click: "click",
	Start: "start", FirstQuartile: "firstQuartile", Midpoint: "midpoint", ThirdQuartile: "thirdQuartile",
	Complete: "complete", Pause: "pause", Mute: "mute", Skip: "skip", Error: "error", Conversion: "conversion",
	VideoViewable: "videoViewable", VideoNotViewable: "videoNotViewable", VideoViewUndetermined: "videoViewUndetermined"}

// KindName is the event type of kind ("impression", "view", "click",
// "start", …: VAST's names for its tracking events), or "" for a byte
// that is no kind.
func KindName(kind byte) string {
	if kind >= 128 {
		return ""
	}
	return kindNames[kind]
}

// Prefix starts every tracking URL's path.
const Prefix = "/t/"

// AppendPath appends the path of the kind's URL of token to dst:
// /t/{kind}/{token}.
func AppendPath(dst []byte, kind byte, token []byte) []byte {
	return append(append(append(dst, Prefix...), kind, '/'), token...)
}

// ParsePath reads a tracking URL's path: its kind and token; ok is false
// for a path that is not /t/{kind}/{token} with a known kind.
func ParsePath(path []byte) (kind byte, token []byte, ok bool) {
	rest, found := bytes.CutPrefix(path, []byte(Prefix))
	if !found || len(rest) < 3 || rest[1] != '/' || KindName(rest[0]) == "" {
		return 0, nil, false
	}
	return rest[0], rest[2:], true
}

// DefaultTTL is how long a tracking URL works by default.
const DefaultTTL = 24 * time.Hour

// Payload is what a tracking URL says: which decision (its id, unique),
// the ad, campaign and placement it chose, the user's pseudonym (0:
// none), the price's amount in millionths, when the URL was issued and
// stops working, and why the decision's visitor was not to be followed
// (a privacy.Limit; 0: no reason), which its events say.
type Payload struct {
	Decision    [16]byte
	Ad          int64
	Campaign    int64
	Placement   string
	UserHash    uint64
	PriceMicros int64
	Issued      time.Time
	Expires     time.Time
	Limit       uint8
	// Country and Platform are the decision's viewer's, as the request
	// said or the server found them ("" unknown): the events of its URLs
	// carry them, so that reports break tag traffic down by them.
	Country  string // ISO 3166-1 alpha-2
	Platform string // marquee.Platforms
	// KV is the decision's key-values that reports count ("section=sports&pos=atf",
	// the keys of -report-keys, values query-escaped; "" none), at most
	// MaxKV bytes: its events carry it.
	KV string
	// Bidder is the header-bidding bidder whose bid won the slot ("":
	// Marquee's own ad; Ad and Campaign are then 0, and PriceMicros is
	// the bid's CPM after its bidder's adjustment), at most MaxBidder
	// bytes.
	Bidder string
	// IVT is why the decision's traffic is invalid (an ivt.Reason; 0: a
	// person's): every event of its URLs is invalid for it, whoever fires
	// them. A click id carries its click's.
	IVT uint8
	// Denied are the privacy activities the decision's signals forbid (a
	// privacy.Activities; 0: none): its events keep no uid without
	// measurement, record no touch without attribution.
	Denied uint16
	// Signals are the privacy signals the decision's request carried (a
	// privacy.Carried): its events name them.
	Signals uint16
}

// MaxBidder bounds a payload's bidder: a bidder code's length.
const MaxBidder = marquee.MaxBidderLen

// MaxKV bounds a payload's key-values.
const MaxKV = 160

// Signer writes and reads tokens. It is safe for concurrent use.
type Signer struct {
	key, previous []byte
	macs          sync.Pool // *pooledMAC of HMAC-SHA256 under key, reset before use
}

// NewSigner returns a signer with key (required) and the previous key
// (may be nil), which tokens are still accepted under.
func NewSigner(key, previous []byte) (*Signer, error) {
	if len(key) < 16 {
		return nil, errors.New("tracking key: want at least 16 bytes")
	}
	s := &Signer{key: key, previous: previous}
	s.macs.New = func() any { return &pooledMAC{h: hmac.New(sha256.New, s.key), raw: make([]byte, 0, 128)} }
	return s, nil
}

// appendMAC appends the MAC of raw under the current key to dst, from
// m's HMAC.
func (m *pooledMAC) appendMAC(dst, raw []byte) []byte {
	m.h.Reset()
	m.h.Write(raw)
	return append(dst, m.h.Sum(m.sum[:0])[:macLen]...)
}

// pooledMAC is an HMAC and the buffers a token is written in (no
// allocation a token).
type pooledMAC struct {
	h   hash.Hash
	sum [sha256.Size]byte
	raw []byte
}

const macLen = 16 // bytes of the HMAC kept: 128 bits

var enc = base64.RawURLEncoding.Strict() // strict: a token has one spelling

// Append appends p's token to dst: base64url of the payload followed by
// its MAC. It allocates nothing when dst has room.
func (s *Signer) Append(dst []byte, p *Payload) []byte {
	return s.seal(dst, func(raw []byte) []byte { return appendPayload(raw, p) })
}

// seal appends to dst the token of the bytes body appends: base64url of
// them followed by their MAC.
func (s *Signer) seal(dst []byte, body func(raw []byte) []byte) []byte {
	m := s.macs.Get().(*pooledMAC)
	raw := body(m.raw[:0])
	raw = m.appendMAC(raw, raw)
	n := enc.EncodedLen(len(raw))
	dst = append(dst, make([]byte, n)...)
	enc.Encode(dst[len(dst)-n:], raw)
	m.raw = raw[:0]
	s.macs.Put(m)
	return dst
}

// Click ids (docs/api.md#conversions): the id a click through Marquee
// gives the landing page ({clickId}), for the advertiser's conversion to
// name. It is the click's decision's payload, the click's time (its
// second in the payload, then its millisecond after the verified byte,
// from payload version 7: how soon a conversion follows is checked to
// the millisecond) and whether the click was verified, signed as a token
// is, after a mark byte no payload starts with: a tracking token is not a
// click id, nor the other way.
const clickMark = 'C'

// MaxClickAge is how long a click id is accepted: the longest post-click
// window.
const MaxClickAge = 90 * 24 * time.Hour

// Clicked is what a click id says: the decision clicked (its Issued is the
// click's time, its Expires MaxClickAge later), and whether the click
// was verified (its impression counted first).
type Clicked struct {
	Payload
	Verified bool
}

// AppendClick appends c's click id to dst.
func (s *Signer) AppendClick(dst []byte, c *Clicked) []byte {
	return s.seal(dst, func(raw []byte) []byte {
		v := byte(0)
		if c.Verified {
			v = 1
		}
		raw = append(appendPayload(append(raw, clickMark), &c.Payload), v)
		return binary.BigEndian.AppendUint16(raw, uint16(c.Issued.Nanosecond()/1e6)) // the payload keeps seconds
	})
}

// ErrBadClick is the error of a click id that is not one of ours.
var ErrBadClick = marquee.Errorf(marquee.KindInvalid, "invalid click id: it was not issued by this server or was changed")

// OpenClick checks a click id's MAC and returns its click: ErrBadClick
// for one that is not ours. Its age is the caller's to check (against a
// campaign's post-click window).
func (s *Signer) OpenClick(id []byte) (Clicked, error) {
	var c Clicked
	var buf [maxRaw]byte
	raw, ok := s.open(id, &buf)
	if !ok || len(raw) < 2 || raw[0] != clickMark {
		return c, ErrBadClick
	}
	var ms []byte // the click's milliseconds: after the verified byte of a payload of version 7 on
	if raw[1] >= 7 && len(raw) >= 4 {
		raw, ms = raw[:len(raw)-2], raw[len(raw)-2:]
	}
	if raw[len(raw)-1] > 1 || !readPayload(raw[1:len(raw)-1], &c.Payload) {
		return c, ErrBadClick
	}
	c.Verified = raw[len(raw)-1] == 1
	if ms != nil {
		if n := binary.BigEndian.Uint16(ms); n < 1000 {
			c.Issued = c.Issued.Add(time.Duration(n) * time.Millisecond)
		}
	}
	return c, nil
}

// maxRaw bounds a token's bytes before base64: the longest payload (a
// 64-byte placement, MaxKV of key-values, MaxBidder of bidder, every
// varint at its longest: 393 bytes) and its MAC, with room to spare.
const maxRaw = 448

// open decodes token into buf and checks its MAC (under the key or the
// previous one), returning the signed bytes (in buf: nothing allocated).
func (s *Signer) open(token []byte, buf *[maxRaw]byte) ([]byte, bool) {
	if len(token) > enc.EncodedLen(maxRaw) {
		return nil, false
	}
	n, err := enc.Decode(buf[:], token)
	if err != nil || n <= macLen {
		return nil, false
	}
	raw, sum := buf[:n-macLen], buf[n-macLen:n]
	var mine [macLen]byte
	m := s.macs.Get().(*pooledMAC)
	ours := hmac.Equal(sum, m.appendMAC(mine[:0], raw))
	s.macs.Put(m)
	if !ours && (s.previous == nil || !hmac.Equal(sum, mac(s.previous, raw))) {
		return nil, false
	}
	return raw, true
}

// Errors of Open.
var (
	ErrBadToken = marquee.Errorf(marquee.KindInvalid, "invalid tracking token: it was not issued by this server or was changed")
	ErrExpired  = marquee.Errorf(marquee.KindGone, "this tracking URL has expired")
)

// Open checks token's MAC (under the key or the previous one) and expiry
// at now and returns its payload: ErrBadToken for a token that is not
// one of ours, ErrExpired for one past its expiry.
func (s *Signer) Open(token []byte, now time.Time) (Payload, error) {
	var p Payload
	var buf [maxRaw]byte
	raw, ok := s.open(token, &buf)
	if !ok {
		return p, ErrBadToken
	}
	if !readPayload(raw, &p) {
		return p, ErrBadToken
	}
	if !now.Before(p.Expires) {
		return p, ErrExpired
	}
	return p, nil
}

func mac(key, raw []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(raw)
	return m.Sum(nil)[:macLen]
}

// version is the first byte of a payload: its layout (1 held the kind,
// which the path now says; 2 had no Limit, and is still read, as 0; 3 had
// no Country and Platform, and is still read, as unknown; 4 had no KV,
// and is still read, as none; 5 had no Bidder, and is still read, as
// none; 6 had no IVT, and is still read, as a person's; 7 had no
// Denied and Signals, and is still read, as nothing denied but what its
// Limit says and no signal named).
const version = 8

func appendPayload(b []byte, p *Payload) []byte {
	b = append(b, version)
	b = append(b, p.Decision[:]...)
	b = binary.AppendUvarint(b, uint64(p.Ad))
	b = binary.AppendUvarint(b, uint64(p.Campaign))
	b = binary.AppendUvarint(b, uint64(len(p.Placement)))
	b = append(b, p.Placement...)
	b = binary.BigEndian.AppendUint64(b, p.UserHash)
	b = binary.AppendVarint(b, p.PriceMicros)
	b = binary.AppendVarint(b, p.Issued.Unix())
	b = binary.AppendVarint(b, p.Expires.Unix())
	b = append(b, p.Limit)
	var country [2]byte
	copy(country[:], p.Country)
	b = append(b, country[:]...)
	b = append(b, byte(slices.Index(marquee.Platforms, p.Platform)+1))
	kv := p.KV[:min(len(p.KV), MaxKV)]
	b = binary.AppendUvarint(b, uint64(len(kv)))
	b = append(b, kv...)
	bidder := p.Bidder[:min(len(p.Bidder), MaxBidder)]
	b = binary.AppendUvarint(b, uint64(len(bidder)))
	b = append(b, bidder...)
	b = append(b, p.IVT)
	b = binary.BigEndian.AppendUint16(b, p.Denied)
	return binary.BigEndian.AppendUint16(b, p.Signals)
}

// next reads a value from *b with read (binary.Uvarint, binary.Varint);
// a bad one sets *b to nil.
func next[T any](b *[]byte, read func([]byte) (T, int)) T {
	v, n := read(*b)
	if n <= 0 {
		*b = nil
		var zero T
		return zero
	}
	*b = (*b)[n:]
	return v
}

func readPayload(b []byte, p *Payload) bool {
	if len(b) < 1+16 || b[0] < 2 || b[0] > version {
		return false
	}
	v := b[0]
	copy(p.Decision[:], b[1:17])
	b = b[17:]
	uv := func() uint64 { return next(&b, binary.Uvarint) }
	sv := func() int64 { return next(&b, binary.Varint) }
	p.Ad, p.Campaign = int64(uv()), int64(uv())
	l := uv()
	if b == nil || uint64(len(b)) < l+8 {
		return false
	}
	p.Placement, b = string(b[:l]), b[l:]
	p.UserHash, b = binary.BigEndian.Uint64(b[:8]), b[8:]
	p.PriceMicros = sv()
	issued, expires := sv(), sv()
	if v >= 3 && len(b) >= 1 {
		p.Limit, b = b[0], b[1:]
	}
	if v >= 4 && len(b) >= 3 {
		if b[0] != 0 {
			p.Country = string(b[:2])
		}
		if i := int(b[2]) - 1; i >= 0 && i < len(marquee.Platforms) {
			p.Platform = marquee.Platforms[i]
		}
		b = b[3:]
	}
	if v >= 5 {
		l := uv()
		if b == nil || l > MaxKV || uint64(len(b)) < l || v == 5 && uint64(len(b)) != l {
			return false
		}
		p.KV, b = string(b[:l]), b[l:]
	}
	if v >= 6 {
		l := uv()
		if b == nil || l > MaxBidder || uint64(len(b)) < l || v == 6 && uint64(len(b)) != l {
			return false
		}
		p.Bidder, b = string(b[:l]), b[l:]
	}
	if v >= 7 {
		if len(b) < 1 || v == 7 && len(b) != 1 {
			return false
		}
		p.IVT, b = b[0], b[1:]
	}
	if v >= 8 {
		if len(b) != 4 {
			return false
		}
		p.Denied, p.Signals, b = binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:]), b[4:]
	}
	if b == nil || len(b) != 0 {
		return false
	}
	p.Issued, p.Expires = time.Unix(issued, 0).UTC(), time.Unix(expires, 0).UTC()
	return true
}
