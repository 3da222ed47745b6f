package reportrow_test

import (
	"testing"

	"marquee/reportrow"
)

// A player's viewability events count only when a decision vouches for
// them: viewable and not viewable are measured, undetermined is not; a
// beacon's measure nothing. Display views stay apart.
func TestVideoViewabilityCounts(t *testing.T) {
	var c reportrow.Counts
	for _, e := range []struct {
		typ      string
		verified bool
	}{{"videoViewable", true}, {"videoNotViewable", true}, {"videoNotViewable", true}, {"videoViewUndetermined", true},
		{"videoViewable", false}, {"videoNotViewable", false}} {
		if !c.CountOf([]byte(e.typ), false, e.verified) {
			t.Errorf("CountOf(%s) = false; want a counted type", e.typ)
		}
	}
	if c.VideoMeasured != 3 || c.VideoViews != 1 || c.Views != 0 || c.Measured != 0 {
		t.Errorf("counts = %+v; want 3 video impressions measured, 1 viewable, no display figure", c)
	}
}
