package web

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"marquee/index"
)

// metrics are the server's Prometheus metrics.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	unrouted prometheus.Counter
	// clickEventsDropped counts redirects whose click event the collector
	// refused (spool full): the redirect and its count still happen.
	clickEventsDropped prometheus.Counter
	// connsRefused counts connections refused over -max-conns (total)
	// or -max-conns-per-ip (per ip).
	connsRefused *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, ix *index.Index) *metrics {
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marquee_http_requests_total",
			Help: "HTTP requests served, by method, route pattern and status code.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "marquee_http_request_duration_seconds",
			Help:    "Time from routing to the handler's return, by method and route pattern.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"method", "route"}),
		unrouted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "marquee_http_unrouted_requests_total",
			Help: "Requests answered 404 or 405 because no route matched.",
		}),
	}
	m.clickEventsDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "marquee_click_events_dropped_total",
		Help: "Redirects whose click event the collector refused (spool full); the redirect and its count still happened.",
	})
	m.connsRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "marquee_http_connections_refused_total",
		Help: "Connections refused over -max-conns (total) or -max-conns-per-ip (per ip).",
	}, []string{"limit"})
	reg.MustRegister(m.requests, m.latency, m.unrouted, m.clickEventsDropped, m.connsRefused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// The index's figures, read at scrape time.
	for _, f := range []struct {
		name, help string
		counter    bool
		value      func() float64
	}{
		{"marquee_index_ads", "Ads in the current index snapshot (active and scheduled).", false,
			func() float64 { return float64(ix.Snapshot().Len()) }},
		{"marquee_index_snapshot_age_seconds", "Seconds since the current index snapshot was built.", false,
			func() float64 { return time.Since(ix.Snapshot().Built()).Seconds() }},
		{"marquee_index_builds_total", "Index snapshots published (built afresh or patched).", true,
			func() float64 { n, _ := ix.Builds(); return float64(n) }},
		{"marquee_index_bytes", "Memory held by the published snapshot of the ad index (chunks of rows, bitsets and pre-rendered list items), roughly.", false,
			func() float64 { return float64(ix.Snapshot().Bytes()) }},
		{"marquee_index_last_build_seconds", "How long building or patching the current index snapshot took.", false,
			func() float64 { _, d := ix.Builds(); return d.Seconds() }},
	} {
		if f.counter {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: f.name, Help: f.help}, f.value))
		} else {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: f.name, Help: f.help}, f.value))
		}
	}
	return m
}

// routeStats records one route's requests without a label lookup per
// request: the latency observer is resolved once, status counters once per
// status code.
type routeStats struct {
	m             *metrics
	method, route string
	latency       prometheus.Observer
	byStatus      [600]atomic.Pointer[prometheus.Counter]
}

func (m *metrics) route(method, pattern string) *routeStats {
	return &routeStats{m: m, method: method, route: pattern, latency: m.latency.WithLabelValues(method, pattern)}
}

func (r *routeStats) observe(status int, d time.Duration) {
	r.latency.Observe(d.Seconds())
	if status < 0 || status >= len(r.byStatus) {
		status = 0
	}
	c := r.byStatus[status].Load()
	if c == nil {
		counter := r.m.requests.WithLabelValues(r.method, r.route, strconv.Itoa(status))
		c = &counter
		r.byStatus[status].Store(c)
	}
	(*c).Inc()
}
