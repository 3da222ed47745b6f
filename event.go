package marquee

import (
	"fmt"
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

// AppendJSONString appends s as a JSON string. s must be valid UTF-8 (see
// CheckEventValue): quotes, backslashes and control characters are escaped,
// and so are U+2028 and U+2029 (for JavaScript readers); nothing else is.
func AppendJSONString(dst []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainASCII[c] {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRune(s[i:])
			if r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// plainASCII marks the bytes AppendJSONString copies as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
