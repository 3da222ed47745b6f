package marquee

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The rules of JSON input every body shares (ads, links, users, keys):
// one object of known fields, text that is text, RFC 3339 times in,
// TimeLayout out.

// TimeLayout is how every timestamp leaves Marquee: UTC, three fractional
// digits, "Z".
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// object decodes body as a JSON object and reports to p every field not
// in known, and every field whose text is not text (CheckJSONText). It
// reports false (and the problem under "body") when body is
// not an object.
func object(body []byte, p Problems, known ...string) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		p["body"] = bodyProblem(body, err)
		return nil, false
	}
	for k, raw := range fields {
		switch {
		case !slices.Contains(known, k):
			p[k] = "unknown field"
		case CheckJSONText(raw) != "":
			p[k] = CheckJSONText(raw)
		}
	}
	return fields, true
}

func bodyProblem(body []byte, err error) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return "is empty; want a JSON object"
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return "malformed JSON: " + err.Error()
	}
	return "must be a JSON object"
}

// present returns the raw value of a field that is set and not null.
func present(fields map[string]json.RawMessage, k string) (json.RawMessage, bool) {
	raw, ok := fields[k]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func parseTimeField(fields map[string]json.RawMessage, k string, p Problems) (time.Time, bool) {
	raw, ok := present(fields, k)
	if !ok {
		p[k] = "is required"
		return time.Time{}, false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		p[k] = "must be an RFC 3339 timestamp string"
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		p[k] = fmt.Sprintf("must be an RFC 3339 timestamp, got %q", s)
		return time.Time{}, false
	}
	return t, true
}

// firstByte is the first byte of raw after JSON whitespace (0 when none).
func firstByte(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// CheckJSONText reports what is wrong with the text in raw, a JSON value
// that parsed: bytes that are not UTF-8, or a \u escape of half a
// surrogate pair. encoding/json would store either as U+FFFD without a
// word, so every JSON input refuses them instead, naming the field. ""
// when nothing is wrong.
func CheckJSONText(raw []byte) string {
	if !utf8.Valid(raw) {
		return "is not valid UTF-8"
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped byte: skipped by the loop unless it starts \uXXXX
		if i+4 >= len(raw) || raw[i] != 'u' {
			continue
		}
		r := hex4(raw[i+1 : i+5])
		i += 4
		switch {
		case 0xD800 <= r && r < 0xDC00: // a high half: its low half must follow
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if lo := hex4(raw[i+3 : i+7]); 0xDC00 <= lo && lo < 0xE000 {
					i += 6
					continue
				}
			}
			return "holds half a surrogate pair (a lone \\ud800-\\udfff escape): not text"
		case 0xDC00 <= r && r < 0xE000:
			return "holds half a surrogate pair (a lone \\ud800-\\udfff escape): not text"
		}
	}
	return ""
}

// hex4 is the value of four hex digits (JSON's \u escape; parsed JSON
// has nothing else there).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// MaxNameLen is the longest name of an advertiser, campaign or site, in
// characters (see nameField).
const MaxNameLen = 200

// nameField reads a name: a non-empty string of at most MaxNameLen
// characters, trimmed, without control characters.
func nameField(fields map[string]json.RawMessage, k string, required bool, p Problems) string {
	raw, ok := present(fields, k)
	if !ok {
		if required {
			p[k] = "is required"
		}
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		p[k] = "must be a string"
		return ""
	}
	s = strings.TrimSpace(s)
	if msg := nameProblem(s); msg != "" {
		p[k] = msg
	}
	return s
}

// nameProblem is what is wrong with a trimmed name, or "".
// isControl says whether r is an ASCII control character (C0 or DEL),
// which no name, keyword, tag or key-value may hold.
func isControl(r rune) bool { return r < ' ' || r == 0x7f }

func nameProblem(s string) string {
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return "must not be empty"
	case n > MaxNameLen:
		return fmt.Sprintf("must be at most %d characters (got %d)", MaxNameLen, n)
	case strings.ContainsFunc(s, isControl):
		return "must not contain control characters"
	}
	return ""
}

// ParseID reads an id given as a JSON string or number: a positive
// integer.
func ParseID(raw json.RawMessage) (int64, bool) {
	var s string
	if firstByte(raw) == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
	} else {
		s = string(raw)
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// checkWindow applies the rules of a time window: both ends required,
// end after start; times are kept in UTC to the millisecond.
func checkWindow(start, end *time.Time, startOK, endOK bool, p Problems) {
	*start = start.UTC().Truncate(time.Millisecond)
	*end = end.UTC().Truncate(time.Millisecond)
	if startOK && endOK && !end.After(*start) {
		p["endAt"] = "must be after startAt"
	}
	for k, ok := range map[string]bool{"startAt": startOK, "endAt": endOK} {
		if _, named := p[k]; !ok && !named {
			p[k] = "is required"
		}
	}
}

// oneOfField reads a string field that must be one of allowed; absent,
// it is def.
func oneOfField(fields map[string]json.RawMessage, k string, allowed []string, def string, p Problems) string {
	raw, ok := present(fields, k)
	if !ok {
		return def
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !slices.Contains(allowed, s) {
		p[k] = "must be one of " + strings.Join(allowed, ", ")
		return def
	}
	return s
}

// subObject decodes raw as an object with only the known fields, naming
// problems under path.
func subObject(raw json.RawMessage, path string, p Problems, known ...string) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &fields) != nil {
		p[path] = "must be an object"
		return nil, false
	}
	ok := true
	for k := range fields {
		if !slices.Contains(known, k) {
			p[path+"."+k] = "unknown field"
			ok = false
		}
	}
	return fields, ok
}

// requiredOneOf reads field k of an object at path, which must be one of
// allowed.
func requiredOneOf(fields map[string]json.RawMessage, k, path string, allowed []string, p Problems) string {
	raw, ok := present(fields, k)
	if !ok {
		p[path+"."+k] = "is required"
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !slices.Contains(allowed, s) {
		p[path+"."+k] = "must be one of " + strings.Join(allowed, ", ")
	}
	return s
}

// positive reads an integer field > 0 of an object, if present.
func positive(fields map[string]json.RawMessage, k, path string, p Problems) (int64, bool) {
	raw, ok := present(fields, k)
	if !ok {
		return 0, false
	}
	var n int64
	if json.Unmarshal(raw, &n) != nil || n < 1 {
		p[path+"."+k] = "must be a positive integer"
		return 0, false
	}
	return n, true
}

// MaxURLLen bounds the bytes of a URL Marquee sends people to (a link's
// target, an ad's landing page, a creative's image or click URL, a
// webhook's endpoint).
const MaxURLLen = 2048

// CheckURL returns what is wrong with a redirect target, or "": it must be
// an absolute http or https URL with a host, at most MaxURLLen bytes,
// without control characters or spaces.
func CheckURL(s string) string {
	if s == "" {
		return "must not be empty"
	}
	if len(s) > MaxURLLen {
		return fmt.Sprintf("must be at most %d bytes (got %d)", MaxURLLen, len(s))
	}
	// The scheme first: "not a url" is told what a URL is, not that it
	// holds spaces.
	if scheme, _, ok := strings.Cut(s, "://"); !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return "must be an absolute http or https URL, such as https://example.com/page"
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return "must not contain spaces or control characters (write a space as %20)"
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return "is not a valid URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "must be an absolute http or https URL, such as https://example.com/page"
	}
	if u.Host == "" || u.Hostname() == "" {
		return "must name a host"
	}
	return ""
}

// parseOneOrMany reads an optional dimension given as one string or an array
// of strings, normalising each value with norm.
func parseOneOrMany(fields map[string]json.RawMessage, k, path string, norm func(string) (string, string), p Problems) []string {
	raw, ok := present(fields, k)
	if !ok {
		return nil
	}
	path += "." + k
	var vals []string
	switch firstByte(raw) {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			p[path] = "must be a string or an array of strings"
			return nil
		}
		v, problem := norm(s)
		if problem != "" {
			p[path] = problem
			return nil
		}
		return []string{v}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			p[path] = "must be a string or an array of strings"
			return nil
		}
		for i, it := range items {
			var s string
			if firstByte(it) != '"' || json.Unmarshal(it, &s) != nil {
				p[fmt.Sprintf("%s[%d]", path, i)] = "must be a string"
				continue
			}
			vals = append(vals, s)
		}
	default:
		p[path] = "must be a string or an array of strings"
		return nil
	}
	return normaliseAll(vals, path, norm, p)
}

// normaliseAll normalises every value, reports bad ones by index, and drops
// duplicates. An empty result is nil: no restriction.
func normaliseAll(vals []string, path string, norm func(string) (string, string), p Problems) []string {
	var out []string
	for i, s := range vals {
		v, problem := norm(s)
		if problem != "" {
			p[fmt.Sprintf("%s[%d]", path, i)] = problem
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == v
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

func normCountry(s string) (string, string) {
	if _, ok := CountrySlot(s); !ok {
		return "", fmt.Sprintf("unknown ISO 3166-1 alpha-2 code %q", s)
	}
	return strings.ToUpper(s), ""
}

// ParseReportKeysInput reads the body of PUT /api/v1/settings/report-keys:
// {"keys": [KEY, …]}, [] for none (the keys themselves are checked by
// the reports, which count them).
func ParseReportKeysInput(body []byte) ([]string, error) {
	p := Problems{}
	fields, ok := object(body, p, "keys")
	if !ok {
		return nil, Invalid("invalid report keys", p)
	}
	var keys []string
	if raw, ok := present(fields, "keys"); !ok {
		p["keys"] = "is required: the key-value keys reports count by value ([] for none)"
	} else if json.Unmarshal(raw, &keys) != nil {
		p["keys"] = "must be a list of keys"
	}
	if len(p) > 0 {
		return nil, Invalid("invalid report keys", p)
	}
	return keys, nil
}
