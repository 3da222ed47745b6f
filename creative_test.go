package marquee_test

import (
	"strings"
	"testing"

	"marquee"
)

func TestCheckPlacementName(t *testing.T) {
	for name, ok := range map[string]bool{"home-top": true, "a": true, "0_side-2": true, "a-": true,
		"": false, "-a": false, "_a": false, "Home": false, "home top": false, "é": false, strings.Repeat("a", 65): false} {
		if got := marquee.CheckPlacementName(name) == ""; got != ok {
			t.Errorf("CheckPlacementName(%q) ok = %v; want %v", name, got, ok)
		}
	}
}

// IsSize is the one rule of a size, for placements and bids alike; a
// placement's sizes are held to it.
func TestIsSize(t *testing.T) {
	for s, ok := range map[string]bool{"300x250": true, "1x1": true, "4000x4000": true, "970x90": true,
		"": false, "x": false, "300x": false, "x250": false, "0x250": false, "0300x250": false, "4001x250": false,
		"300x4001": false, "300 x 250": false, "300X250": false, "300x250x1": false, "10000x1": false, "-1x5": false} {
		if got := marquee.IsSize(s); got != ok || marquee.IsSize([]byte(s)) != ok {
			t.Errorf("IsSize(%q) = %v; want %v", s, got, ok)
		}
		_, err := marquee.ParsePlacementInput([]byte(`{"name":"p","sizes":["` + s + `"]}`))
		if (err == nil) != ok {
			t.Errorf(`ParsePlacementInput(sizes ["%s"]) = %v; want ok %v`, s, err, ok)
		}
	}
}
