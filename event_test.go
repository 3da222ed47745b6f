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
