// Package jsonstr appends byte strings as JSON strings, for the hot paths
// that write JSON by hand (event lines): one pass, no allocation, plain
// ASCII copied eight bytes at a time.
package jsonstr

import (
	"encoding/binary"
	"unicode/utf8"
)

// Append appends s as a JSON string and reports whether s was
// valid UTF-8 (invalid bytes are written as U+FFFD). Quotes, backslashes
// and control characters are escaped, and so are U+2028 and U+2029 (for
// JavaScript readers); nothing else is. Runs of plain ASCII are copied
// eight bytes at a time.
func Append(dst []byte, s []byte) ([]byte, bool) {
	const hex = "0123456789abcdef"
	valid := true
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if plainASCII[c] {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				valid = false
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
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
	return append(append(dst, s[start:]...), '"'), valid
}

// plain8 reports whether none of the eight bytes of x needs escaping: each
// is ASCII, at least 0x20, and neither '"' nor '\\'. These are the exact
// word-at-a-time tests "has a byte ≥ 0x80", "has a byte < 0x20" (valid once
// no byte is ≥ 0x80) and "has a zero byte" (of x XOR the quote, and of x
// XOR the backslash).
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return (x|(x-ones*0x20)&^x|(q-ones)&^q|(b-ones)&^b)&highs == 0
}

// plainASCII marks the bytes Append copies as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
