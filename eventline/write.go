// Package eventline owns the event line: the NDJSON object the collector
// stores for each event. It writes the line — the server's fields first,
// in a fixed order (receivedAt, id, ip, ua), then the client's — and reads
// it back (Scan: the fields reports count, without allocating). What a
// client may send is the vocabulary's (marquee.CheckEventKey and the
// limits); how it stands in a line is this package's.
package eventline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync/atomic"
	"time"

	"marquee"
	"marquee/jsonstr"
)

// MaxUA is how much of a User-Agent an event keeps.
const MaxUA = 512

// Stamper formats times as RFC 3339 with nanoseconds in UTC
// ("2006-01-02T15:04:05.000000000Z"), keeping the formatted second so that
// most calls only append the nine fractional digits. It is safe for
// concurrent use.
type Stamper struct {
	last atomic.Pointer[stampedSecond]
}

type stampedSecond struct {
	unix   int64
	prefix []byte // "2006-01-02T15:04:05."
}

// Append appends t.
func (s *Stamper) Append(dst []byte, t time.Time) []byte {
	t = t.UTC()
	sec := s.last.Load()
	if sec == nil || sec.unix != t.Unix() {
		sec = &stampedSecond{unix: t.Unix(), prefix: t.AppendFormat(nil, "2006-01-02T15:04:05.")}
		s.last.Store(sec)
	}
	dst = append(dst, sec.prefix...)
	ns := t.Nanosecond()
	var frac [9]byte
	for i := 8; i >= 0; i-- {
		frac[i] = byte('0' + ns%10)
		ns /= 10
	}
	return append(append(dst, frac[:]...), 'Z')
}

// AppendHead opens an event line with the fields the server adds, in
// the order Scan reads them by position: receivedAt (at, stamped by st),
// id (appended by id: a unique id without quotes or backslashes), ip
// (as the privacy mode keeps it), geo (the country of the address before
// it was truncated, when a GeoIP database knew it: two letters, or ""
// and no field), and ua (at most MaxUA bytes; bytes that are not UTF-8
// become U+FFFD). The line goes on with AppendString or AppendRaw and
// ends with End.
func AppendHead(dst []byte, st *Stamper, at time.Time, id func([]byte) []byte, ip netip.Addr, geo string, ua []byte) []byte {
	dst = append(dst, `{"receivedAt":"`...)
	dst = st.Append(dst, at)
	dst = append(dst, `","id":"`...)
	dst = id(dst)
	dst = append(dst, `","ip":"`...)
	dst = ip.AppendTo(dst)
	if len(geo) == 2 {
		dst = append(append(dst, `","geo":"`...), geo...)
	}
	dst = append(dst, `","ua":`...)
	if len(ua) > MaxUA {
		ua = ua[:MaxUA] // a rune cut in two becomes U+FFFD
	}
	dst, _ = jsonstr.Append(dst, ua)
	return dst
}

// AppendString appends the field key (a valid event key: it needs no
// escaping) with the string v, escaped (bytes that are not UTF-8 become
// U+FFFD).
func AppendString[K string | []byte](dst []byte, key K, v []byte) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	dst, _ = jsonstr.Append(dst, v)
	return dst
}

// AppendPlain appends the field key with the string v, which needs no
// escaping (a link code, digits, a constant): it is written as it is.
func AppendPlain[K, V string | []byte](dst []byte, key K, v V) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':', '"')
	dst = append(dst, v...)
	return append(dst, '"')
}

// AppendRaw appends the field key (a valid event key) with raw, a
// compact JSON value.
func AppendRaw[K string | []byte](dst []byte, key K, raw []byte) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return append(dst, raw...)
}

// End closes the line.
func End(dst []byte) []byte { return append(dst, '}', '\n') }

// Writer says how AppendEvents writes what is the server's in a line.
type Writer struct {
	// Head appends the opening of a line (AppendHead).
	Head func(dst []byte) []byte
	// UID appends an event's uid field (its value: a string's text, or
	// any other value's JSON) as privacy keeps it — or nothing.
	UID func(dst, uid []byte) []byte
	// Value, when set, is what a field's value (compact JSON) is written
	// as: a privacy rule's (privacy.Policy.RedactEmails).
	Value func(v []byte) []byte
}

// AppendEvents appends every event of a POST /e body — one JSON object, a
// JSON array of them, or NDJSON — as one line each: w.Head's opening of
// the line (AppendHead), the event's fields as compact JSON (its uid as
// w.UID writes it), "}\n".
// It returns the lines and how many events there were. Either every event
// is valid or the error names every problem (KindInvalid); more than
// marquee.MaxEventsPerPost events is marquee.KindTooLarge.
func AppendEvents(dst, body []byte, w Writer) ([]byte, int, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return dst, 0, marquee.InvalidEvent("body", "no events")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	array := body[0] == '['
	if array {
		dec.Token() // [
	}
	var problems marquee.Problems
	n := 0
	for {
		if array && !dec.More() {
			if _, err := dec.Token(); err != nil { // ]
				return dst, n, marquee.InvalidEvent("body", "malformed JSON: "+err.Error())
			}
			if _, err := dec.Token(); err != io.EOF {
				return dst, n, marquee.InvalidEvent("body", "unexpected data after the array")
			}
			break
		}
		if n == marquee.MaxEventsPerPost {
			if !array && !dec.More() {
				break
			}
			return dst, n, marquee.Errorf(marquee.KindTooLarge, "more than %d events in one request", marquee.MaxEventsPerPost)
		}
		start := len(dst)
		var err error
		dst, err = appendEvent(dst, dec, w, n, &problems)
		if errors.Is(err, io.EOF) && !array && n > 0 {
			dst = dst[:start]
			break
		}
		if err != nil {
			return dst, n, marquee.InvalidEvent(fmt.Sprintf("[%d]", n), err.Error())
		}
		n++
	}
	if problems != nil {
		return dst, n, marquee.Invalid("invalid events", problems)
	}
	return dst, n, nil
}

// appendEvent decodes event i, one JSON object, and appends its line.
// Field problems go to problems; a malformed body is the error.
func appendEvent(dst []byte, dec *json.Decoder, w Writer, i int, problems *marquee.Problems) ([]byte, error) {
	t, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return dst, err
		}
		return dst, fmt.Errorf("malformed JSON: %v", err)
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return dst, errors.New("an event must be a JSON object")
	}
	dst = w.Head(dst)
	var seen []string
	var raw json.RawMessage
	var compact bytes.Buffer
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return dst, fmt.Errorf("malformed JSON: %v", err)
		}
		k := kt.(string)
		if err := dec.Decode(&raw); err != nil {
			return dst, fmt.Errorf("malformed JSON: %v", err)
		}
		path := fmt.Sprintf("[%d].%s", i, k)
		compact.Reset()
		json.Compact(&compact, raw)
		switch {
		case len(seen) == marquee.MaxEventFields:
			*problems = marquee.AddEventProblem(*problems, fmt.Sprintf("[%d]", i), fmt.Sprintf("at most %d fields", marquee.MaxEventFields))
			continue
		case marquee.CheckEventKey([]byte(k)) != "":
			*problems = marquee.AddEventProblem(*problems, path, marquee.CheckEventKey([]byte(k)))
			continue
		case compact.Len() > marquee.MaxEventValue:
			*problems = marquee.AddEventProblem(*problems, path, fmt.Sprintf("values must be at most %d bytes of JSON", marquee.MaxEventValue))
			continue
		case marquee.CheckJSONText(raw) != "":
			*problems = marquee.AddEventProblem(*problems, path, marquee.CheckJSONText(raw))
			continue
		case depth(compact.Bytes()) > marquee.MaxEventDepth:
			*problems = marquee.AddEventProblem(*problems, path, fmt.Sprintf("nests deeper than %d levels", marquee.MaxEventDepth))
			continue
		}
		for _, s := range seen {
			if s == k {
				*problems = marquee.AddEventProblem(*problems, path, "is repeated")
			}
		}
		seen = append(seen, k)
		if marquee.IsConsentKey(k) { // read from the query, never kept
			continue
		}
		if k == "uid" {
			uid := compact.Bytes()
			var text string
			if uid[0] == '"' && json.Unmarshal(uid, &text) == nil {
				uid = []byte(text)
			}
			dst = w.UID(dst, uid)
			continue
		}
		v := compact.Bytes()
		if w.Value != nil {
			v = w.Value(v)
		}
		dst = AppendRaw(dst, k, v)
	}
	if _, err := dec.Token(); err != nil { // }
		return dst, fmt.Errorf("malformed JSON: %v", err)
	}
	if len(seen) == 0 && *problems == nil {
		*problems = marquee.AddEventProblem(*problems, fmt.Sprintf("[%d]", i), "an event needs at least one field")
	}
	return End(dst), nil
}

// depth is the deepest nesting of arrays and objects in valid JSON.
func depth(v []byte) int {
	d, deepest, inString, escaped := 0, 0, false, false
	for _, c := range v {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			d++
			deepest = max(deepest, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return deepest
}
