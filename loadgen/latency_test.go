package loadgen_test

import (
	"math"
	"testing"
	"time"

	"marquee/loadgen"
)

// Uniform 1..100,000 µs, each value once: the q-quantile is q·100,000 µs.
// Recorded across four histograms and merged, as Run does per connection.
func TestLatencyPercentilesOfUniform(t *testing.T) {
	parts := []*loadgen.Latency{loadgen.NewLatency(), loadgen.NewLatency(), loadgen.NewLatency(), loadgen.NewLatency()}
	for v := 1; v <= 100_000; v++ {
		parts[v%4].Record(time.Duration(v) * time.Microsecond)
	}
	l := loadgen.NewLatency()
	for _, p := range parts {
		l.Merge(p)
	}
	if l.Count() != 100_000 {
		t.Fatalf("Count() = %d; want 100000", l.Count())
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := q * 100_000
		got := float64(l.Quantile(q) / time.Microsecond)
		if math.Abs(got-want)/want > 0.001 {
			t.Errorf("Quantile(%v) = %vµs; want %vµs ±0.1%%", q, got, want)
		}
	}
	if got := l.Max(); math.Abs(float64(got-100*time.Millisecond)) > float64(100*time.Microsecond) {
		t.Errorf("Max() = %v; want 100ms ±0.1%%", got)
	}
	if got := l.Mean(); math.Abs(float64(got-50*time.Millisecond)) > float64(50*time.Microsecond) {
		t.Errorf("Mean() = %v; want 50ms ±0.1%%", got)
	}
}

// A bimodal distribution: 99% at 1 ms, 1% at 1 s. p99 must still be 1 ms,
// p99.9 must be 1 s: the tail is not averaged away.
func TestLatencyBimodalTail(t *testing.T) {
	l := loadgen.NewLatency()
	for i := range 10_000 {
		if i%100 == 0 {
			l.Record(time.Second)
		} else {
			l.Record(time.Millisecond)
		}
	}
	p := l.Percentiles()
	near := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) <= float64(want)/1000 }
	if !near(p.P50, time.Millisecond) || !near(p.P99, time.Millisecond) || !near(p.P999, time.Second) || !near(p.Max, time.Second) {
		t.Errorf("Percentiles() = %+v; want p50 = p99 = 1ms, p99.9 = max = 1s", p)
	}
}

func TestLatencyClampsOutOfRange(t *testing.T) {
	l := loadgen.NewLatency()
	l.Record(0)
	l.Record(time.Hour)
	if l.Count() != 2 || l.Quantile(0) > 2*time.Microsecond || l.Max() < time.Minute-time.Second {
		t.Errorf("after Record(0), Record(1h): count %d, min %v, max %v; want 2, ~1µs, ~1m", l.Count(), l.Quantile(0), l.Max())
	}
}

func TestLatencyCurveIsMonotonic(t *testing.T) {
	l := loadgen.NewLatency()
	for v := 1; v <= 10_000; v++ {
		l.Record(time.Duration(v*v) * time.Nanosecond * 10)
	}
	c := l.Curve()
	if c[0].Q != 0 || c[len(c)-1].Q != 1 {
		t.Fatalf("Curve() spans q %v..%v; want 0..1", c[0].Q, c[len(c)-1].Q)
	}
	for i := 1; i < len(c); i++ {
		if c[i].Q <= c[i-1].Q || c[i].LatencyUs < c[i-1].LatencyUs {
			t.Fatalf("Curve()[%d] = %+v after %+v; want q and latency increasing", i, c[i], c[i-1])
		}
	}
}
