package serve

import (
	"net/netip"
	"sync"
	"time"

	"marquee/eventline"
	"marquee/privacy"
)

// EventSink is where event lines go (the collector).
type EventSink interface {
	// Append accepts event lines for the shard that key picks; in durable
	// mode it returns once they are written.
	Append(key uint64, lines []byte, events int) error
	// AppendID appends a new unique event id.
	AppendID(dst []byte) []byte
}

// Lines writes event lines into a sink: it adds the server's fields
// (time, id, address, country, user agent) and the user id, as the
// privacy policy says. The event beacons, the redirect's clicks, and the
// tracking URLs' and conversions' events all write through it.
type Lines struct {
	sink    EventSink
	stamp   eventline.Stamper
	privacy *privacy.Policy
	geo     Geo // nil: no GeoIP database
}

// NewLines returns the writer of event lines into sink, under the
// privacy policy pol (required), placing addresses with geo (nil: none).
func NewLines(sink EventSink, pol *privacy.Policy, geo Geo) *Lines {
	return &Lines{sink: sink, privacy: pol, geo: geo}
}

// Sink is where the lines go.
func (l *Lines) Sink() EventSink { return l.sink }

// Policy is the privacy policy the lines are written under.
func (l *Lines) Policy() *privacy.Policy { return l.privacy }

// Geo is the GeoIP database (nil: none).
func (l *Lines) Geo() Geo { return l.geo }

// AppendHead opens the event line of a request (eventline.AppendHead):
// received at at, from the client's address ip — truncated where the
// policy says (after GeoIP placed it: the country goes in the line) —,
// with its User-Agent, and, when lim says the visitor is not to be
// followed, why ("limited").
func (l *Lines) AppendHead(dst []byte, at time.Time, ip netip.Addr, ua []byte, lim privacy.Limit) []byte {
	geo := ""
	if l.privacy.Truncates(lim) {
		if l.geo != nil {
			geo = l.geo.Country(ip)
		}
		ip = privacy.Truncate(ip)
	}
	dst = eventline.AppendHead(dst, &l.stamp, at, l.sink.AppendID, ip, geo, ua)
	if lim != privacy.None {
		dst = eventline.AppendPlain(dst, "limited", lim.String())
	}
	return dst
}

// AppendUID appends an event's uid field as the policy keeps it: the id
// as sent (off), its pseudonym (balanced, strict), or nothing (a visitor
// not to be followed).
func (l *Lines) AppendUID(line, uid []byte, at time.Time, lim privacy.Limit) []byte {
	start := len(line)
	line = append(line, `,"uid":"`...)
	line, raw, ok := l.privacy.AppendUID(line, uid, at, lim)
	switch {
	case !ok:
		return line[:start]
	case raw: // the id as sent, escaped
		return eventline.AppendString(line[:start], "uid", uid)
	}
	return append(line, '"')
}

// appendEdgeHead opens the event line of the request e.
func (l *Lines) appendEdgeHead(dst []byte, e *Edge, lim privacy.Limit) []byte {
	return l.AppendHead(dst, e.Time, e.IP, e.UserAgent, lim)
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}
