package eventline_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"marquee"
	"marquee/eventline"
)

func TestAppendEvents(t *testing.T) {
	w := eventline.Writer{
		Head: func(dst []byte) []byte { return append(dst, `{"id":"x"`...) },
		// a uid as the writer gets it: a string's text, other values' JSON
		UID: func(dst, uid []byte) []byte { return eventline.AppendString(dst, "uid", append([]byte("p:"), uid...)) },
	}
	for _, c := range []struct {
		body, lines string
		n           int
		err         string
	}{
		{`{"type":"a","n":{"b": [1, 2]}}`, "{\"id\":\"x\",\"type\":\"a\",\"n\":{\"b\":[1,2]}}\n", 1, ""},
		{`{"uid":"v\u00e9","a":1}`, "{\"id\":\"x\",\"uid\":\"p:vé\",\"a\":1}\n", 1, ""},
		{`{"uid":42}`, "{\"id\":\"x\",\"uid\":\"p:42\"}\n", 1, ""},
		// consent is read from the query, never written
		{`{"type":"a","gdpr":1,"gdpr_consent":"CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"}`, "{\"id\":\"x\",\"type\":\"a\"}\n", 1, ""},
		{`[{"a":1},{"b":2}]`, "{\"id\":\"x\",\"a\":1}\n{\"id\":\"x\",\"b\":2}\n", 2, ""},
		{"{\"a\":1}\n{\"b\":2}\n", "{\"id\":\"x\",\"a\":1}\n{\"id\":\"x\",\"b\":2}\n", 2, ""},
		{``, "", 0, "invalid event: body: no events"},
		{`[{"a":1}] x`, "", 1, "invalid event: body: unexpected data after the array"},
		{`[{},{"ip":"1","a":1,"a":2}]`, "", 2, "invalid events: [0]: an event needs at least one field; [1].a: is repeated; [1].ip: is set by the server"},
		{`{"a":` + strings.Repeat("[", 9) + strings.Repeat("]", 9) + `}`, "", 1, "invalid events: [0].a: nests deeper than 8 levels"},
		{strings.Repeat(`{"a":1}`+"\n", marquee.MaxEventsPerPost+1), "", marquee.MaxEventsPerPost, "more than 500 events in one request"},
	} {
		got, n, err := eventline.AppendEvents(nil, []byte(c.body), w)
		if c.err != "" {
			if err == nil || err.Error() != c.err || n != c.n {
				t.Errorf("AppendEvents(%.40q) = %d, %v; want %d, %s", c.body, n, err, c.n, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.lines || n != c.n {
			t.Errorf("AppendEvents(%.40q) = %q, %d, %v; want %q, %d", c.body, got, n, err, c.lines, c.n)
		}
	}
}

// TestRoundTrip writes event lines with hostile values — quotes,
// backslashes, escapes that look like the line's own framing, control
// characters, U+2028, invalid UTF-8, keys that read like the server's —
// and reads them back: Scan finds exactly the fields written, whatever
// the values hold.
func TestRoundTrip(t *testing.T) {
	hostile := []string{
		"", "plain", `q"uote`, `back\slash\`, `\"`, `","ip":"6.6.6.6`, `"}` + "\n" + `{"type":"click`, "\x00\x01\x1f\x7f",
		"\u2028\u2029", "\xff\xfe bad UTF-8", "tab\tnewline\n", `{"nested":["x"]}`, "日本語 😀", strings.Repeat(`\"`, 40),
	}
	rnd := rand.New(rand.NewPCG(7, 8))
	var st eventline.Stamper
	at := time.Date(2026, 11, 25, 13, 4, 5, 123456789, time.UTC)
	id := func(dst []byte) []byte { return append(dst, "01JD0000000000000000000000"...) }
	ip := netip.MustParseAddr("2001:db8::1")
	for i := range 2000 {
		pick := func() string {
			if rnd.IntN(3) == 0 {
				return hostile[rnd.IntN(len(hostile))] + hostile[rnd.IntN(len(hostile))]
			}
			return hostile[rnd.IntN(len(hostile))]
		}
		ua, typ, country, uid, other := pick(), pick(), pick(), pick(), pick()
		geo := [...]string{"", "FR"}[i%2]
		line := eventline.AppendHead(nil, &st, at, id, ip, geo, []byte(ua))
		line = eventline.AppendString(line, "other", []byte(other))
		line = eventline.AppendString(line, "type", []byte(typ))
		line = eventline.AppendRaw(line, "n", []byte(`{"ip":"1.1.1.1","type":["x"]}`))
		line = eventline.AppendPlain(line, "ad", fmt.Sprint(i+1))
		line = eventline.AppendString(line, "country", []byte(country))
		line = eventline.AppendString(line, "uid", []byte(uid))
		line = eventline.End(line)

		var f eventline.Fields
		if !eventline.Scan(line[:len(line)-1], &f) {
			t.Fatalf("Scan(%q) = false; want the line read", line)
		}
		want := map[int]string{eventline.ReceivedAt: "2026-11-25T13:04:05.123456789Z", eventline.ID: "01JD0000000000000000000000", eventline.IP: "2001:db8::1",
			eventline.UA: escaped(ua), eventline.Type: escaped(typ), eventline.Ad: fmt.Sprint(i + 1),
			eventline.Country: escaped(country), eventline.UID: escaped(uid), eventline.Geo: geo}
		for k := range eventline.NumFields {
			if got := string(f[k]); got != want[k] {
				t.Fatalf("line %q: field %d = %q; want %q", line, k, got, want[k])
			}
		}
		if h, ok := eventline.Hour(f[eventline.ReceivedAt]); !ok || h != at.Truncate(time.Hour).Unix() {
			t.Fatalf("Hour(%q) = %d, %v; want %d", f[eventline.ReceivedAt], h, ok, at.Truncate(time.Hour).Unix())
		}
	}
}

// escaped is v as it stands between the quotes of a line: Scan leaves a
// value's escapes as they are.
func escaped(v string) string {
	var b []byte
	b = eventline.AppendString(b, "k", []byte(v))
	s := string(b[len(`,"k":"`) : len(b)-1])
	if !utf8.ValidString(s) {
		panic("escaped value is not UTF-8")
	}
	return s
}

// A line with a forged head (a client field named like the server's, in
// a POSTed event) is refused before it is written.
func TestServerFieldsCannotBeForged(t *testing.T) {
	head := eventline.Writer{Head: func(dst []byte) []byte { return append(dst, `{"receivedAt":"x","id":"y","ip":"1.2.3.4","ua":""`...) }}
	for _, k := range marquee.ReservedEventKeys {
		_, _, err := eventline.AppendEvents(nil, []byte(`{"`+k+`":"forged"}`), head)
		if marquee.KindOf(err) != marquee.KindInvalid {
			t.Errorf("an event naming %s = %v; want refused", k, err)
		}
	}
}
