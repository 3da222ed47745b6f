package marquee

import "unicode/utf8"

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
