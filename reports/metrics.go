package reports

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are a Tally's Prometheus metrics.
type metrics struct {
	counted      prometheus.Counter
	skipped      *prometheus.CounterVec
	rows         prometheus.Counter
	flushErrors  prometheus.Counter
	flushSeconds prometheus.Histogram
	lag          prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		counted:      f.NewCounter(prometheus.CounterOpts{Name: "marquee_reports_events_counted_total", Help: "Events added to reports (an event naming an ad and a link counts once for each)."}),
		skipped:      f.NewCounterVec(prometheus.CounterOpts{Name: "marquee_reports_events_not_counted_total", Help: "Event lines read and not counted, by reason."}, []string{"reason"}),
		rows:         f.NewCounter(prometheus.CounterOpts{Name: "marquee_reports_rows_upserted_total", Help: "Report rows added to or created by flushes."}),
		flushErrors:  f.NewCounter(prometheus.CounterOpts{Name: "marquee_reports_flush_errors_total", Help: "Flushes that failed (their counts are kept and retried)."}),
		flushSeconds: f.NewHistogram(prometheus.HistogramOpts{Name: "marquee_reports_flush_duration_seconds", Help: "How long a flush of counts to the store took.", Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}),
		lag:          f.NewGauge(prometheus.GaugeOpts{Name: "marquee_reports_lag_seconds", Help: "At the last flush: how long its oldest line had been in its file (the lag from an event to its report)."}),
	}
}

func (m *metrics) notCounted(reason string, n int64) {
	m.skipped.WithLabelValues(reason).Add(float64(n))
}
