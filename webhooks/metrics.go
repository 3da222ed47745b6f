package webhooks

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	deliveries *prometheus.CounterVec
	dropped    prometheus.Counter
	disabled   prometheus.Counter
}

// newMetrics registers the webhooks' metrics: delivery attempts by
// result, events dropped from full queues, webhooks disabled after a day
// of failures, and the events queued.
func newMetrics(reg prometheus.Registerer, d *Dispatcher) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by result (ok: a 2xx answer; failed)."}, []string{"result"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "marquee_webhook_events_dropped_total",
			Help: "Events dropped from a webhook's full queue (its receiver failing or slow for long); they stay in the event files."}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{Name: "marquee_webhook_disabled_total",
			Help: "Webhooks this instance disabled after a day without a successful delivery."}),
	}
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marquee_webhook_queued_events",
		Help: "Events waiting for delivery to webhooks, on this instance."}, func() float64 { return float64(d.queued()) })
	if reg != nil {
		reg.MustRegister(m.deliveries, m.dropped, m.disabled, queued)
	}
	return m
}
