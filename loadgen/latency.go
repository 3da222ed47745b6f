package loadgen

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency is an HDR histogram of request latencies: 1 µs to 60 s at three
// significant digits (every figure within 0.1% of the recorded value), in a
// fixed ~150 KB whatever the number of samples. Record allocates nothing.
// A Latency is not safe for concurrent use: each connection records into its
// own, and Merge combines them afterwards.
type Latency struct{ h *hdrhistogram.Histogram }

const (
	minLatency = time.Microsecond
	maxLatency = time.Minute
)

// NewLatency returns an empty histogram.
func NewLatency() *Latency {
	return &Latency{hdrhistogram.New(int64(minLatency/time.Microsecond), int64(maxLatency/time.Microsecond), 3)}
}

// Record adds one latency; values outside 1 µs – 60 s are clamped to the range.
func (l *Latency) Record(d time.Duration) {
	us := int64(min(max(d, minLatency), maxLatency) / time.Microsecond)
	_ = l.h.RecordValue(us) // in range by construction
}

// Merge adds every sample of o into l.
func (l *Latency) Merge(o *Latency) { l.h.Merge(o.h) }

// Count is the number of samples.
func (l *Latency) Count() int64 { return l.h.TotalCount() }

// Quantile returns the latency that a fraction q (0–1) of the samples are at
// or below; 0 when there are none.
func (l *Latency) Quantile(q float64) time.Duration {
	return time.Duration(l.h.ValueAtQuantile(q*100)) * time.Microsecond
}

// Max is the largest sample.
func (l *Latency) Max() time.Duration { return time.Duration(l.h.Max()) * time.Microsecond }

// Mean is the average sample.
func (l *Latency) Mean() time.Duration {
	return time.Duration(l.h.Mean() * float64(time.Microsecond))
}

// Percentiles is the summary every report shows.
type Percentiles struct {
	P50, P90, P99, P999, Max, Mean time.Duration
}

// Percentiles returns p50, p90, p99, p99.9, max and mean.
func (l *Latency) Percentiles() Percentiles {
	return Percentiles{
		P50: l.Quantile(0.5), P90: l.Quantile(0.9), P99: l.Quantile(0.99), P999: l.Quantile(0.999),
		Max: l.Max(), Mean: l.Mean(),
	}
}

// CurvePoint is one point of the percentile curve: a fraction of requests
// (0–1) and the latency they are at or below.
type CurvePoint struct {
	Q         float64 `json:"q"`
	LatencyUs float64 `json:"latencyUs"`
}

// Curve returns the latency at quantiles spaced evenly on a log scale of
// 1/(1-q) — 0, 0.5, 0.75, … up to 0.99999 and 1 — the usual shape of an HDR
// percentile plot, where the tail gets as much room as the median.
func (l *Latency) Curve() []CurvePoint {
	var out []CurvePoint
	for i := 0; ; i++ {
		q := 1 - 1/float64(uint64(1)<<(i/4))/pow4(i%4)
		if q > 0.99999 {
			break
		}
		out = append(out, CurvePoint{q, us(l.Quantile(q))})
	}
	return append(out, CurvePoint{1, us(l.Max())})
}

// pow4 returns 2^(k/4): four points per halving of the tail.
func pow4(k int) float64 {
	return [4]float64{1, 1.189207115, 1.414213562, 1.681792831}[k]
}

// us converts d to microseconds, the unit of every latency in a report.
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
