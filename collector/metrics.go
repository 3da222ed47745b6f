package collector

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	rejected      *prometheus.CounterVec
	bytesOut      prometheus.Counter
	ratio         prometheus.Gauge
	rotated       prometheus.Counter
	writeErrors   prometheus.Counter
	uploads       *prometheus.CounterVec
	retries       prometheus.Counter
	uploadSeconds prometheus.Histogram
	spool         prometheus.Gauge
	diskFree      prometheus.Gauge
	diskLow       prometheus.Gauge

	salvaged, salvageDamaged, salvageDropped prometheus.Counter
}

// newMetrics registers the collector's metrics. Events and bytes accepted
// are counted per shard under the shard's lock (no shared counter on the
// hot path) and summed when scraped, by accepted.
func newMetrics(reg prometheus.Registerer, accepted func() (events, bytes uint64)) *metrics {
	acceptedEvents := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "marquee_events_accepted_total", Help: "Events accepted."},
		func() float64 { n, _ := accepted(); return float64(n) })
	bytesIn := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "marquee_events_bytes_in_total", Help: "Uncompressed NDJSON bytes accepted."},
		func() float64 { _, b := accepted(); return float64(b) })
	m := &metrics{
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_events_rejected_total",
			Help: "Events refused with 503, by reason (bad input is counted per request by the HTTP metrics)."}, []string{"reason"}),
		bytesOut:    counter("marquee_events_bytes_out_total", "Compressed bytes written to spool files."),
		ratio:       gauge("marquee_events_compression_ratio", "Uncompressed ÷ compressed size of the last finished file."),
		rotated:     counter("marquee_events_files_rotated_total", "Spool files finished."),
		writeErrors: counter("marquee_events_write_errors_total", "Failed writes to spool files."),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marquee_events_uploads_total",
			Help: "Upload attempts of finished files, by result (ok, failed)."}, []string{"result"}),
		retries: counter("marquee_events_upload_retries_total", "Upload retries after a failure."),
		uploadSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "marquee_events_upload_seconds",
			Help: "Time to store one finished file.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		spool:          gauge("marquee_events_spool_bytes", "Bytes counted against the spool bound: awaiting shipment or being written."),
		diskFree:       gauge("marquee_events_disk_free_bytes", "Free bytes of the spool's filesystem, as last read."),
		diskLow:        gauge("marquee_events_disk_low", "1 while the spool's filesystem is below its free-space watermark and events are refused."),
		salvaged:       counter("marquee_events_salvaged_files_total", "Interrupted .part files completed (after a crash, or a failed write or rotation)."),
		salvageDamaged: counter("marquee_events_salvage_damaged_files_total", "Completed .part files that had bytes no whole line could be read from (a damaged tail, not the codec's format)."),
		salvageDropped: counter("marquee_events_salvage_dropped_bytes_total", "Bytes dropped completing .part files: undecodable file bytes plus decoded bytes of a cut last line."),
	}
	if reg != nil {
		reg.MustRegister(acceptedEvents, bytesIn, m.rejected, m.bytesOut, m.ratio, m.rotated, m.writeErrors,
			m.uploads, m.retries, m.uploadSeconds, m.spool, m.diskFree, m.diskLow, m.salvaged, m.salvageDamaged, m.salvageDropped)
	}
	return m
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}
