package streams

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	produced, acknowledged, retries prometheus.Counter
}

// newMetrics registers a stream's metrics, labelled with its name:
// messages produced (every attempt) and acknowledged, failed publishes
// retried, the backlog's bytes and whether the broker is up.
func newMetrics(reg prometheus.Registerer, name string, f *Forwarder) *metrics {
	labels := prometheus.Labels{"stream": name}
	counter := func(n, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: n, Help: help, ConstLabels: labels})
	}
	m := &metrics{
		produced:     counter("marquee_stream_produced_total", "Events sent to the broker, every attempt (a retried batch counts again)."),
		acknowledged: counter("marquee_stream_acknowledged_total", "Events the broker acknowledged."),
		retries:      counter("marquee_stream_retries_total", "Publishes that failed and are tried again."),
	}
	backlog := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_stream_backlog_bytes", ConstLabels: labels,
		Help: "Bytes of events written to files and not yet acknowledged by the broker, held in memory (events get 503 past the bound)."},
		func() float64 {
			f.mu.Lock()
			defer f.mu.Unlock()
			return float64(f.backlog)
		})
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_stream_up", ConstLabels: labels,
		Help: "1 while the broker takes events (its last publish succeeded)."},
		func() float64 { return map[bool]float64{false: 0, true: 1}[f.Up()] })
	if reg != nil {
		reg.MustRegister(m.produced, m.acknowledged, m.retries, backlog, up)
	}
	return m
}
