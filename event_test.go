package marquee_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"marquee"
)

func TestAppendJSONString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"nl\n\r\t\x00\x1f", `"nl\n\r\t\u0000\u001f"`},
		{"ünï 中 😀", `"ünï 中 😀"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"</script>&", `"</script>&"`},
	} {
		if got := string(marquee.AppendJSONString(nil, []byte(c.in))); got != c.want {
			t.Errorf("AppendJSONString(%q) = %s; want %s", c.in, got, c.want)
		}
	}
}

// Whatever valid UTF-8 goes in, the output is one JSON string that decodes
// back to it.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", `"`, "\\", "\x00", "a\u2028b", "ü", strings.Repeat("é", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		out := marquee.AppendJSONString([]byte("x"), []byte(s))[1:]
		var back string
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Fatalf("AppendJSONString(%q) = %s: decodes to %q, %v", s, out, back, err)
		}
	})
}

func TestCheckEventKey(t *testing.T) {
	for k, ok := range map[string]bool{"type": true, "a.b-c_d:e": true, "": false, "id": false, "ua": false,
		"has space": false, strings.Repeat("k", 64): true, strings.Repeat("k", 65): false, "ké": false, `q"`: false} {
		if got := marquee.CheckEventKey([]byte(k)) == ""; got != ok {
			t.Errorf("CheckEventKey(%q) ok = %v; want %v", k, got, ok)
		}
	}
}
