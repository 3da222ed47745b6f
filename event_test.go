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
		{"long plain ascii run of more than eight bytes", `"long plain ascii run of more than eight bytes"`},
		{"12345678\"2345678\\", `"12345678\"2345678\\"`},
	} {
		got, valid := marquee.AppendJSONString(nil, []byte(c.in))
		if string(got) != c.want || !valid {
			t.Errorf("AppendJSONString(%q) = %s, %v; want %s, true", c.in, got, valid, c.want)
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
		out, valid := marquee.AppendJSONString([]byte("x"), []byte(s))
		out = out[1:]
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendJSONString(%q) = %s: not a JSON string: %v", s, out, err)
		}
		if valid != utf8.ValidString(s) {
			t.Fatalf("AppendJSONString(%q) valid = %v; want %v", s, valid, utf8.ValidString(s))
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want && valid {
			t.Fatalf("AppendJSONString(%q) = %s: decodes to %q", s, out, back)
		}
	})
}

func TestAppendJSONStringInvalidUTF8(t *testing.T) {
	got, valid := marquee.AppendJSONString(nil, []byte("a\xffb"))
	if string(got) != `"a\ufffdb"` || valid {
		t.Errorf("AppendJSONString(a\\xffb) = %s, %v; want \"a\\ufffdb\", false", got, valid)
	}
}

func TestCheckEventKey(t *testing.T) {
	for k, ok := range map[string]bool{"type": true, "a.b-c_d:e": true, "": false, "id": false, "ua": false,
		"has space": false, strings.Repeat("k", 64): true, strings.Repeat("k", 65): false, "ké": false, `q"`: false} {
		if got := marquee.CheckEventKey([]byte(k)) == ""; got != ok {
			t.Errorf("CheckEventKey(%q) ok = %v; want %v", k, got, ok)
		}
	}
}
