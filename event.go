package marquee

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// ReservedEventKeys are the fields the server adds to every event; a client
// may not send them.
var ReservedEventKeys = [...]string{"receivedAt", "id", "ip", "ua"}

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

// AppendEvents appends every event of a POST /e body — one JSON object, a
// JSON array of them, or NDJSON — as one line each: head's opening of the
// line (the server's fields), the event's fields as compact JSON, "}\n".
// It returns the lines and how many events there were. Either every event
// is valid or the error names every problem (KindInvalid); more than
// MaxEventsPerPost events is KindTooLarge.
func AppendEvents(dst, body []byte, head func([]byte) []byte) ([]byte, int, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return dst, 0, InvalidEvent("body", "no events")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	array := body[0] == '['
	if array {
		dec.Token() // [
	}
	var problems Problems
	n := 0
	for {
		if array && !dec.More() {
			if _, err := dec.Token(); err != nil { // ]
				return dst, n, InvalidEvent("body", "malformed JSON: "+err.Error())
			}
			if _, err := dec.Token(); err != io.EOF {
				return dst, n, InvalidEvent("body", "unexpected data after the array")
			}
			break
		}
		if n == MaxEventsPerPost {
			if !array && !dec.More() {
				break
			}
			return dst, n, Errorf(KindTooLarge, "more than %d events in one request", MaxEventsPerPost)
		}
		start := len(dst)
		var err error
		dst, err = appendEvent(dst, dec, head, n, &problems)
		if errors.Is(err, io.EOF) && !array && n > 0 {
			dst = dst[:start]
			break
		}
		if err != nil {
			return dst, n, InvalidEvent(fmt.Sprintf("[%d]", n), err.Error())
		}
		n++
	}
	if problems != nil {
		return dst, n, Invalid("invalid events", problems)
	}
	return dst, n, nil
}

// appendEvent decodes event i, one JSON object, and appends its line.
// Field problems go to problems; a malformed body is the error.
func appendEvent(dst []byte, dec *json.Decoder, head func([]byte) []byte, i int, problems *Problems) ([]byte, error) {
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
	dst = head(dst)
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
		case len(seen) == MaxEventFields:
			*problems = AddEventProblem(*problems, fmt.Sprintf("[%d]", i), fmt.Sprintf("at most %d fields", MaxEventFields))
			continue
		case CheckEventKey([]byte(k)) != "":
			*problems = AddEventProblem(*problems, path, CheckEventKey([]byte(k)))
			continue
		case compact.Len() > MaxEventValue:
			*problems = AddEventProblem(*problems, path, fmt.Sprintf("values must be at most %d bytes of JSON", MaxEventValue))
			continue
		case CheckJSONText(raw) != "":
			*problems = AddEventProblem(*problems, path, CheckJSONText(raw))
			continue
		case depth(compact.Bytes()) > MaxEventDepth:
			*problems = AddEventProblem(*problems, path, fmt.Sprintf("nests deeper than %d levels", MaxEventDepth))
			continue
		}
		for _, s := range seen {
			if s == k {
				*problems = AddEventProblem(*problems, path, "is repeated")
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
		*problems = AddEventProblem(*problems, fmt.Sprintf("[%d]", i), "an event needs at least one field")
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
