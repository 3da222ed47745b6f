package jsonstr_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"marquee/jsonstr"
)

func TestAppend(t *testing.T) {
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
		got, valid := jsonstr.Append(nil, []byte(c.in))
		if string(got) != c.want || !valid {
			t.Errorf("Append(%q) = %s, %v; want %s, true", c.in, got, valid, c.want)
		}
	}
}

// Whatever valid UTF-8 goes in, the output is one JSON string that decodes
// back to it.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", `"`, "\\", "\x00", "a\u2028b", "ü", strings.Repeat("é", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, valid := jsonstr.Append([]byte("x"), []byte(s))
		out = out[1:]
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("Append(%q) = %s: not a JSON string: %v", s, out, err)
		}
		if valid != utf8.ValidString(s) {
			t.Fatalf("Append(%q) valid = %v; want %v", s, valid, utf8.ValidString(s))
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want && valid {
			t.Fatalf("Append(%q) = %s: decodes to %q", s, out, back)
		}
	})
}

func TestAppendInvalidUTF8(t *testing.T) {
	got, valid := jsonstr.Append(nil, []byte("a\xffb"))
	if string(got) != `"a\ufffdb"` || valid {
		t.Errorf("Append(a\\xffb) = %s, %v; want \"a\\ufffdb\", false", got, valid)
	}
}
