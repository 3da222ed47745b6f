package marquee_test

import (
	"testing"
	"time"

	"marquee"
)

func TestCheckJSONText(t *testing.T) {
	const lone = "holds half a surrogate pair (a lone \\ud800-\\udfff escape): not text"
	for _, c := range []struct{ raw, want string }{
		{`"plain"`, ""},
		{`"\ud83d\ude00 emoji by escape"`, ""},
		{`"\uD83D\uDE00 upper case"`, ""},
		{`"😀 é"`, ""},
		{`"\\ud800 an escaped backslash, then text"`, ""},
		{`"\n\t\"\u00e9"`, ""},
		{`["a",{"b":"\u0041"}]`, ""},
		{`"\ud800"`, lone},
		{`"x\udc00"`, lone},
		{`"\ud800\u0041"`, lone},
		{`"\ud800\ud800"`, lone},
		{`"\ud800x\udc00"`, lone},
		{`{"a":["\udfff"]}`, lone},
		{"\"\xff\"", "is not valid UTF-8"},
		{"\"\xed\xa0\x80\"", "is not valid UTF-8"}, // a surrogate in raw bytes (CESU-8)
	} {
		if got := marquee.CheckJSONText([]byte(c.raw)); got != c.want {
			t.Errorf("CheckJSONText(%q) = %q; want %q", c.raw, got, c.want)
		}
	}
}

// Text that is not text is refused in every JSON input, naming the field,
// instead of being stored as U+FFFD.
func TestInputsRefuseWhatIsNotText(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name  string
		parse func([]byte) error
		body  string
		field string
	}{
		{"ad title, lone surrogate", func(b []byte) error { _, err := marquee.ParseAdInput(b); return err }, `{"title":"\ud800",` + window + `}`, "title"},
		{"ad title, bad bytes", func(b []byte) error { _, err := marquee.ParseAdInput(b); return err }, "{\"title\":\"a\xffb\"," + window + `}`, "title"},
		{"ad url", func(b []byte) error { _, err := marquee.ParseAdInput(b); return err }, `{"title":"a","url":"https://x.test/\udc00",` + window + `}`, "url"},
		{"link url", func(b []byte) error { _, err := marquee.ParseLinkInput(b); return err }, `{"url":"https://x.test/\ud800"}`, "url"},
		{"user email", func(b []byte) error { _, err := marquee.ParseUserInput(b, true); return err }, `{"email":"a\ud800@x.test","role":"viewer","password":"long enough pass"}`, "email"},
		{"key name", func(b []byte) error { _, err := marquee.ParseKeyInput(b, now); return err }, `{"name":"ci\ud800","scopes":["ads:read"]}`, "name"},
	} {
		err := c.parse([]byte(c.body))
		e := marquee.AsError(err)
		if e == nil || e.Kind != marquee.KindInvalid || e.Problems[c.field] == "" {
			t.Errorf("%s: %s = %v; want a 400 naming %s", c.name, c.body, err, c.field)
		}
	}
}
