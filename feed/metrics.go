package feed

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	lastSeq       prometheus.Gauge
	up            prometheus.Gauge
	lag           prometheus.Histogram
	reloads       *prometheus.CounterVec
	notifications prometheus.Counter
	applied       prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		lastSeq: prometheus.NewGauge(prometheus.GaugeOpts{Name: "marquee_feed_last_applied_seq",
			Help: "Changelog seq up to which every change is applied to this instance's index."}),
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "marquee_feed_store_up",
			Help: "1 when the last changelog read succeeded, 0 while the store is unreachable."}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "marquee_feed_apply_lag_seconds",
			Help:    "Time from a change's commit to its being applied here (millisecond clock of the commit).",
			Buckets: []float64{.001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5, 10, 30}}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_feed_reloads_total",
			Help: "Full reloads of the index from the store, by reason."}, []string{"reason"}),
		notifications: prometheus.NewCounter(prometheus.CounterOpts{Name: "marquee_feed_notifications_total",
			Help: "Changelog notifications received (PostgreSQL LISTEN/NOTIFY)."}),
		applied: prometheus.NewCounter(prometheus.CounterOpts{Name: "marquee_feed_changes_applied_total",
			Help: "Changelog entries applied."}),
	}
	if reg != nil {
		reg.MustRegister(m.lastSeq, m.up, m.lag, m.reloads, m.notifications, m.applied)
	}
	return m
}
