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
