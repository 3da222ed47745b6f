package reports

import (
	"fmt"
	"math"
	"testing"

	"github.com/axiomhq/hyperloglog"

	"marquee/reportrow"
)

// days returns n days of a busy ad's reach sketches: 5,000 uids a day,
// of which 2,000 are new each day.
func days(tb testing.TB, n int) []Reach {
	var out []Reach
	for d := range n {
		sk := hyperloglog.New()
		for u := range 5000 {
			sk.Insert(fmt.Appendf(nil, "u%d", d*2000+u))
		}
		enc, err := sk.MarshalBinary()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, Reach{Entity: "ad", ID: 1, Day: int64(d) * 86400, Sketch: enc})
	}
	return out
}

func TestReachUnion(t *testing.T) {
	t.Parallel()
	sketches := days(t, 30)
	total, per, err := reach(sketches, 30, func(day int64) int { return int(day / 86400) })
	if err != nil {
		t.Fatal(err)
	}
	// Days overlap: day d holds uids [2000d, 2000d+5000).
	if want := 29*2000 + 5000; math.Abs(float64(total-int64(want))) > 0.02*float64(want) {
		t.Errorf("reach over 30 days = %d; want %d within 2%%", total, want)
	}
	for d, u := range per {
		if math.Abs(float64(u-5000)) > 0.02*5000 {
			t.Errorf("reach of day %d = %d; want 5000 within 2%%", d, u)
		}
	}
	// Two halves of the same day (two slots) union to the day.
	a, b := hyperloglog.New(), hyperloglog.New()
	for u := range 6000 {
		[]*hyperloglog.Sketch{a, b}[u%2].Insert(fmt.Appendf(nil, "x%d", u))
	}
	ea, _ := a.MarshalBinary()
	eb, _ := b.MarshalBinary()
	merged, err := reportrow.MergeSketches(ea, eb)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := reportrow.DecodeSketch(merged)
	if err != nil {
		t.Fatal(err)
	}
	if got := sk.Estimate(); math.Abs(float64(got)-6000) > 120 {
		t.Errorf("MergeSketches of two 3,000-uid halves estimates %d; want 6000 within 2%%", got)
	}
}

// BenchmarkReach reads 90 days of a busy ad's reach (5,000 uids a day)
// into a total and a point a day, as a 90-day daily report does.
//
//	go test ./reports -run XXX -bench Reach
func BenchmarkReach(b *testing.B) {
	sketches := days(b, 90)
	for b.Loop() {
		if _, _, err := reach(sketches, 90, func(day int64) int { return int(day / 86400) }); err != nil {
			b.Fatal(err)
		}
	}
}
