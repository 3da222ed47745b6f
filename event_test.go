package marquee_test

import (
	"strings"
	"testing"

	"marquee"
)

func TestCheckEventKey(t *testing.T) {
	for k, ok := range map[string]bool{"type": true, "a.b-c_d:e": true, "": false, "id": false, "ua": false,
		"has space": false, strings.Repeat("k", 64): true, strings.Repeat("k", 65): false, "ké": false, `q"`: false} {
		if got := marquee.CheckEventKey([]byte(k)) == ""; got != ok {
			t.Errorf("CheckEventKey(%q) ok = %v; want %v", k, got, ok)
		}
	}
}

func TestCheckBeaconField(t *testing.T) {
	before := [][]byte{[]byte("type"), []byte("ad")}
	for _, c := range []struct {
		k, v, path, problem string
	}{
		{"campaign", "x", "", ""},
		{"ad", "1", "ad", "is repeated"},
		{"id", "1", "id", "is set by the server"},
		{"has space", "1", "has space", "field names may hold only letters, digits and _ - . :"},
		{`q"`, "1", "fields[2]", "field names may hold only letters, digits and _ - . :"},
		{"v", "\xff", "v", "is not valid UTF-8"},
		{"v", strings.Repeat("x", marquee.MaxEventValue+1), "v", "values must be at most 2048 bytes"},
		{"ad", "\xff", "ad", "is not valid UTF-8"}, // a bad value is named before a repeat
	} {
		path, problem := marquee.CheckBeaconField(2, before, []byte(c.k), []byte(c.v))
		if path != c.path || problem != c.problem {
			t.Errorf("CheckBeaconField(%q, %q) = %q, %q; want %q, %q", c.k, c.v, path, problem, c.path, c.problem)
		}
	}
}

func TestAppendEvents(t *testing.T) {
	head := func(dst []byte) []byte { return append(dst, `{"id":"x"`...) }
	for _, c := range []struct {
		body, lines string
		n           int
		err         string
	}{
		{`{"type":"a","n":{"b": [1, 2]}}`, "{\"id\":\"x\",\"type\":\"a\",\"n\":{\"b\":[1,2]}}\n", 1, ""},
		{`[{"a":1},{"b":2}]`, "{\"id\":\"x\",\"a\":1}\n{\"id\":\"x\",\"b\":2}\n", 2, ""},
		{"{\"a\":1}\n{\"b\":2}\n", "{\"id\":\"x\",\"a\":1}\n{\"id\":\"x\",\"b\":2}\n", 2, ""},
		{``, "", 0, "invalid event: body: no events"},
		{`[{"a":1}] x`, "", 1, "invalid event: body: unexpected data after the array"},
		{`[{},{"ip":"1","a":1,"a":2}]`, "", 2, "invalid events: [0]: an event needs at least one field; [1].a: is repeated; [1].ip: is set by the server"},
		{`{"a":` + strings.Repeat("[", 9) + strings.Repeat("]", 9) + `}`, "", 1, "invalid events: [0].a: nests deeper than 8 levels"},
		{strings.Repeat(`{"a":1}`+"\n", marquee.MaxEventsPerPost+1), "", marquee.MaxEventsPerPost, "more than 500 events in one request"},
	} {
		got, n, err := marquee.AppendEvents(nil, []byte(c.body), head)
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
