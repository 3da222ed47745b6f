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
