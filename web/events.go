package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"marquee"
)

// EventSink is what the event routes need of the collector.
type EventSink interface {
	// Append accepts event lines for the shard that key picks; in durable
	// mode it returns once they are written.
	Append(key uint64, lines []byte, events int) error
	// AppendID appends a new unique event id.
	AppendID(dst []byte) []byte
}

// maxUA is how much of a User-Agent an event keeps.
const maxUA = 512

// gif1x1 is a transparent 1×1 GIF, for pixels.
var gif1x1 = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// eventEnv adds the server's fields to events.
type eventEnv struct {
	sink    EventSink
	trusted []netip.Prefix
	stamp   stamper
}

// stamper formats times as RFC 3339 with nanoseconds in UTC
// ("2006-01-02T15:04:05.000000000Z"), keeping the formatted second so that
// most calls only append the nine fractional digits.
type stamper struct {
	last atomic.Pointer[stampedSecond]
}

type stampedSecond struct {
	unix   int64
	prefix []byte // "2006-01-02T15:04:05."
}

func (s *stamper) append(dst []byte, t time.Time) []byte {
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

// appendHead opens an event line with the fields the server adds:
// receivedAt (when the request arrived; RFC 3339, nanoseconds, UTC), id,
// ip and ua.
func (e *eventEnv) appendHead(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	dst = append(dst, `{"receivedAt":"`...)
	dst = e.stamp.append(dst, ctx.Time())
	dst = append(dst, `","id":"`...)
	dst = e.sink.AppendID(dst)
	dst = append(dst, `","ip":"`...)
	dst = clientIP(ctx, e.trusted).AppendTo(dst)
	dst = append(dst, `","ua":`...)
	ua := ctx.UserAgent()
	if len(ua) > maxUA {
		ua = ua[:maxUA] // a rune cut in two becomes U+FFFD
	}
	dst, _ = marquee.AppendJSONString(dst, ua) // invalid bytes become U+FFFD
	return dst
}

// clientIP is the connection's address, or, when that is a trusted proxy,
// the nearest address in X-Forwarded-For that is not one.
func clientIP(ctx *fasthttp.RequestCtx, trusted []netip.Prefix) netip.Addr {
	ip, _ := netip.AddrFromSlice(ctx.RemoteIP())
	ip = ip.Unmap()
	if !isTrusted(ip, trusted) {
		return ip
	}
	xff := ctx.Request.Header.Peek("X-Forwarded-For")
	for len(xff) > 0 {
		i := bytes.LastIndexByte(xff, ',')
		hop := bytes.TrimSpace(xff[i+1:])
		xff = xff[:max(i, 0)]
		a, err := netip.ParseAddr(string(hop))
		if err != nil {
			break
		}
		ip = a.Unmap()
		if !isTrusted(ip, trusted) {
			break
		}
	}
	return ip
}

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// handleEventGet serves GET /e?k=v&…: one event of string fields. It
// answers 204, or a 1×1 GIF to a client that accepts only images.
func handleEventGet(e *eventEnv) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		bp := linePool.Get().(*[]byte)
		defer linePool.Put(bp)
		line := e.appendHead((*bp)[:0], ctx)
		args := ctx.QueryArgs()
		if n := args.Len(); n == 0 || n > marquee.MaxEventFields {
			return invalidEvent("query", fmt.Sprintf("an event needs 1-%d fields, got %d", marquee.MaxEventFields, n))
		}
		var problems marquee.Problems
		var keys [marquee.MaxEventFields][]byte
		i := 0
		// VisitAll, not the All iterator it is deprecated for: on fasthttp
		// v1.74 ranging over All moves the loop's variables to the heap (6
		// allocations a request, TestEventGetAllocatesNothing); VisitAll's
		// callback does not escape.
		//lint:ignore SA1019 see above
		args.VisitAll(func(k, v []byte) {
			keys[i] = k
			i++
			if msg := marquee.CheckEventKey(k); msg != "" {
				path := "fields[" + strconv.Itoa(i-1) + "]"
				if len(k) > 0 && len(k) <= marquee.MaxEventKey && utf8.Valid(k) && !bytes.ContainsAny(k, "\"\x00") {
					path = string(k)
				}
				problems = addProblem(problems, path, msg)
				return
			}
			if repeated(keys[:i-1], k) {
				problems = addProblem(problems, string(k), "is repeated")
			}
			if len(v) > marquee.MaxEventValue {
				problems = addProblem(problems, string(k), marquee.CheckEventValue(v))
				return
			}
			// A valid key needs no escaping; the value is escaped and
			// checked for UTF-8 in one pass.
			line = append(line, ',', '"')
			line = append(line, k...)
			line = append(line, '"', ':')
			var valid bool
			if line, valid = marquee.AppendJSONString(line, v); !valid {
				problems = addProblem(problems, string(k), "is not valid UTF-8")
			}
		})
		if problems != nil {
			return &marquee.InvalidError{What: "invalid event", Problems: problems}
		}
		line = append(line, '}', '\n')
		*bp = line
		if err := e.sink.Append(ctx.ConnID(), line, 1); err != nil {
			return err
		}
		if acceptsOnlyImages(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
			ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
			ctx.SetContentType("image/gif")
			ctx.SetBody(gif1x1)
			return nil
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// repeated reports whether k is among the keys seen before it.
func repeated(before [][]byte, k []byte) bool {
	for _, b := range before {
		if bytes.Equal(b, k) {
			return true
		}
	}
	return false
}

func addProblem(p marquee.Problems, path, msg string) marquee.Problems {
	if p == nil {
		p = marquee.Problems{}
	}
	if len(path) > marquee.MaxEventKey+16 {
		path = path[:marquee.MaxEventKey] + "…"
	}
	p[path] = msg
	return p
}

func invalidEvent(path, msg string) error {
	return &marquee.InvalidError{What: "invalid event", Problems: marquee.Problems{path: msg}}
}

// acceptsOnlyImages reports an Accept header that names image types and
// nothing a 204 would suit (no */*, no text or JSON): what an <img> sends.
func acceptsOnlyImages(accept []byte) bool {
	if !bytes.Contains(accept, []byte("image/")) {
		return false
	}
	for part := range bytes.SplitSeq(accept, []byte(",")) {
		media, _, _ := bytes.Cut(part, []byte(";"))
		media = bytes.TrimSpace(media)
		if len(media) > 0 && !bytes.HasPrefix(media, []byte("image/")) {
			return false
		}
	}
	return true
}

// handleEventPost serves POST /e: one JSON object, a JSON array of them, or
// NDJSON (application/json, application/x-ndjson, or text/plain as
// navigator.sendBeacon sends), at most MaxEventsPerPost events in
// MaxEventsBody bytes. Either every event is accepted (202) or none is.
func handleEventPost(e *eventEnv) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		if err := checkEventBody(ctx); err != nil {
			return err
		}
		bp := linePool.Get().(*[]byte)
		defer linePool.Put(bp)
		lines, n, err := e.parsePost((*bp)[:0], ctx)
		*bp = lines
		if err != nil {
			return err
		}
		if err := e.sink.Append(ctx.ConnID(), lines, n); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusAccepted)
		ctx.SetContentTypeBytes(contentTypeJSON)
		ctx.SetBodyString(`{"accepted":` + strconv.Itoa(n) + `}`)
		return nil
	}
}

func checkEventBody(ctx *fasthttp.RequestCtx) error {
	return checkBody(ctx, marquee.MaxEventsBody, func(media []byte) bool {
		switch string(media) {
		case "application/json", "application/x-ndjson", "application/ndjson", "text/plain":
			return true
		}
		return false
	}, "content type %q: send application/json, application/x-ndjson or text/plain")
}

// parsePost encodes every event of the body as a line after dst.
func (e *eventEnv) parsePost(dst []byte, ctx *fasthttp.RequestCtx) ([]byte, int, error) {
	body := bytes.TrimSpace(ctx.PostBody())
	if len(body) == 0 {
		return dst, 0, invalidEvent("body", "no events")
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
				return dst, n, invalidEvent("body", "malformed JSON: "+err.Error())
			}
			if _, err := dec.Token(); err != io.EOF {
				return dst, n, invalidEvent("body", "unexpected data after the array")
			}
			break
		}
		if n == marquee.MaxEventsPerPost {
			if !array && !dec.More() {
				break
			}
			return dst, n, errorf(fasthttp.StatusRequestEntityTooLarge, "more than %d events in one request", marquee.MaxEventsPerPost)
		}
		start := len(dst)
		var err error
		dst, err = e.appendPosted(dst, dec, ctx, n, &problems)
		if errors.Is(err, io.EOF) && !array && n > 0 {
			dst = dst[:start]
			break
		}
		if err != nil {
			return dst, n, invalidEvent(fmt.Sprintf("[%d]", n), err.Error())
		}
		n++
	}
	if problems != nil {
		return dst, n, &marquee.InvalidError{What: "invalid events", Problems: problems}
	}
	return dst, n, nil
}

// appendPosted decodes one event object and appends its line. Field
// problems go to problems; a malformed body is the error.
func (e *eventEnv) appendPosted(dst []byte, dec *json.Decoder, ctx *fasthttp.RequestCtx, i int, problems *marquee.Problems) ([]byte, error) {
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
	dst = e.appendHead(dst, ctx)
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
			*problems = addProblem(*problems, fmt.Sprintf("[%d]", i), fmt.Sprintf("at most %d fields", marquee.MaxEventFields))
			continue
		case marquee.CheckEventKey([]byte(k)) != "":
			*problems = addProblem(*problems, path, marquee.CheckEventKey([]byte(k)))
			continue
		case compact.Len() > marquee.MaxEventValue:
			*problems = addProblem(*problems, path, fmt.Sprintf("values must be at most %d bytes of JSON", marquee.MaxEventValue))
			continue
		case !utf8.Valid(raw):
			*problems = addProblem(*problems, path, "is not valid UTF-8")
			continue
		case depth(compact.Bytes()) > marquee.MaxEventDepth:
			*problems = addProblem(*problems, path, fmt.Sprintf("nests deeper than %d levels", marquee.MaxEventDepth))
			continue
		}
		for _, s := range seen {
			if s == k {
				*problems = addProblem(*problems, path, "is repeated")
			}
		}
		seen = append(seen, k)
		dst = append(dst, ',', '"')
		dst = append(dst, k...) // a valid key needs no escaping
		dst = append(dst, '"', ':')
		dst = append(dst, compact.Bytes()...)
	}
	if _, err := dec.Token(); err != nil { // }
		return dst, fmt.Errorf("malformed JSON: %v", err)
	}
	if len(seen) == 0 && *problems == nil {
		*problems = addProblem(*problems, fmt.Sprintf("[%d]", i), "an event needs at least one field")
	}
	return append(dst, '}', '\n'), nil
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
