package web

import (
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/valyala/fasthttp"
)

// liveFamilies are the metric families GET /api/v1/live reports (names,
// or prefixes ending in "_"): what the console's live page draws.
var liveFamilies = []string{
	"marquee_http_requests_total", "marquee_http_request_duration_seconds",
	"marquee_cache_", "marquee_events_accepted_total", "marquee_events_rejected_total",
	"marquee_events_spool_bytes", "marquee_feed_apply_lag_seconds", "marquee_feed_store_up",
	"marquee_index_ads", "marquee_clicks_pending",
}

// liveSample is one series of a family: a counter's or gauge's value, or a
// histogram's cumulative buckets ([upper bound, count]; the last bound is
// +Inf, written as null), count and sum.
type liveSample struct {
	Labels  map[string]string `json:"labels,omitempty"`
	Value   *float64          `json:"value,omitempty"`
	Buckets [][2]*float64     `json:"buckets,omitempty"`
	Count   *uint64           `json:"count,omitempty"`
	Sum     *float64          `json:"sum,omitempty"`
}

type liveBody struct {
	Time    time.Time               `json:"time"`
	Ready   map[string]string       `json:"ready"`
	Metrics map[string][]liveSample `json:"metrics"`
}

// handleLive serves GET /api/v1/live: this instance's request, latency,
// cache, event, spool, feed and store figures as they stand — the
// counters of /metrics, as JSON, for any signed-in credential (/metrics
// itself may need the metrics token). A client polls it and takes rates
// from the differences.
func handleLive(reg prometheus.Gatherer, store pinger, events any, now func() time.Time) handler {
	ready := readiness(store, events)
	return func(ctx *fasthttp.RequestCtx) error {
		mfs, err := reg.Gather()
		if err != nil {
			return err
		}
		body := liveBody{Time: now().UTC(), Ready: ready(), Metrics: map[string][]liveSample{}}
		for _, mf := range mfs {
			if !wanted(mf.GetName()) {
				continue
			}
			for _, m := range mf.GetMetric() {
				body.Metrics[mf.GetName()] = append(body.Metrics[mf.GetName()], sampleOf(m))
			}
		}
		ctx.Response.Header.Set("Cache-Control", "no-store")
		writeJSON(ctx, fasthttp.StatusOK, body)
		return nil
	}
}

func wanted(name string) bool {
	for _, f := range liveFamilies {
		if name == f || strings.HasSuffix(f, "_") && strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}

func sampleOf(m *dto.Metric) liveSample {
	s := liveSample{}
	if len(m.GetLabel()) > 0 {
		s.Labels = map[string]string{}
		for _, l := range m.GetLabel() {
			s.Labels[l.GetName()] = l.GetValue()
		}
	}
	switch {
	case m.Counter != nil:
		s.Value = m.Counter.Value
	case m.Gauge != nil:
		s.Value = m.Gauge.Value
	case m.Untyped != nil:
		s.Value = m.Untyped.Value
	case m.Histogram != nil:
		for _, b := range m.Histogram.GetBucket() {
			le, n := b.GetUpperBound(), float64(b.GetCumulativeCount())
			if math.IsInf(le, 1) {
				s.Buckets = append(s.Buckets, [2]*float64{nil, &n})
				continue
			}
			s.Buckets = append(s.Buckets, [2]*float64{&le, &n})
		}
		s.Count, s.Sum = m.Histogram.SampleCount, m.Histogram.SampleSum
	}
	return s
}
