package web

import (
	"strings"
	"testing"

	"marquee"
)

// Every kind of error has its status: a kind added to the vocabulary
// without a line in statusOf would answer 0.
func TestEveryKindHasAStatus(t *testing.T) {
	for k := marquee.Kind(0); !strings.HasPrefix(k.String(), "kind("); k++ {
		if statusOf[k] < 400 {
			t.Errorf("statusOf[%v] = %d; want an error status", k, statusOf[k])
		}
	}
	if len(statusOf) < int(marquee.KindHeadersTooLarge)+1 {
		t.Errorf("statusOf has %d kinds; want every kind up to %v", len(statusOf), marquee.KindHeadersTooLarge)
	}
}
