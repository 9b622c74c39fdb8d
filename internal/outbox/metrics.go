package outbox

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kadens/kadens/internal/store"
)

// Handler outcomes, the values of the outcome label.
const (
	OutcomeDone  = "done"  // the handler succeeded
	OutcomeRetry = "retry" // failed; another attempt is scheduled
	OutcomeDead  = "dead"  // failed for good: the job is dead-lettered
)

// Metrics are the runner's Prometheus series: handler calls by consumer and
// outcome, their duration, and (read from the database when scraped) every
// consumer's lag, webhook delivery's included.
type Metrics struct {
	handled  *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the runner's series with reg. The lag gauges are
// read from st at scrape time (store.ConsumerLags), so they are the same
// whichever process is scraped and cover consumers of other processes.
func NewMetrics(reg prometheus.Registerer, st *store.Store, log *slog.Logger) *Metrics {
	m := &Metrics{
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kadens_outbox_handled_total",
			Help: "Outbox consumer handler calls by consumer and outcome: done, retry (another attempt scheduled), dead (dead-lettered).",
		}, []string{"consumer", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kadens_outbox_handle_duration_seconds",
			Help:    "Duration of outbox consumer handler calls.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"consumer"}),
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg.MustRegister(m.handled, m.duration, &lagCollector{st: st, log: log})
	return m
}

func (m *Metrics) observe(consumer, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.handled.WithLabelValues(consumer, outcome).Inc()
	m.duration.WithLabelValues(consumer).Observe(d.Seconds())
}

var (
	pendingDesc = prometheus.NewDesc("kadens_outbox_pending",
		"Work waiting for an outbox consumer (due, claimed or backing off): events for registered consumers, messages for webhook.",
		[]string{"consumer"}, nil)
	deadDesc = prometheus.NewDesc("kadens_outbox_dead",
		"Dead-lettered events of an outbox consumer (webhook's Failed deliveries are in kadens_webhook_attempts_total).", []string{"consumer"}, nil)
	lagDesc = prometheus.NewDesc("kadens_outbox_lag_seconds",
		"Age of the oldest work waiting for an outbox consumer; 0 when none waits.", []string{"consumer"}, nil)
	unrelayedDesc = prometheus.NewDesc("kadens_outbox_unrelayed_events",
		"Committed events not yet handed to their consumers by the relay.", nil, nil)
)

// lagCollector reads the consumers' lag from the database at scrape time.
type lagCollector struct {
	st  *store.Store
	log *slog.Logger
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- deadDesc
	ch <- lagDesc
	ch <- unrelayedDesc
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lags, unrelayed, err := c.st.ConsumerLags(ctx)
	if err != nil {
		c.log.Warn("outbox: read consumer lags for metrics", "err", err)
		ch <- prometheus.NewInvalidMetric(pendingDesc, err)
		return
	}
	now := time.Now()
	ch <- prometheus.MustNewConstMetric(unrelayedDesc, prometheus.GaugeValue, float64(unrelayed))
	for _, l := range lags {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(l.Pending), l.Consumer)
		if l.Dead >= 0 {
			ch <- prometheus.MustNewConstMetric(deadDesc, prometheus.GaugeValue, float64(l.Dead), l.Consumer)
		}
		age := 0.0
		if !l.Oldest.IsZero() {
			age = max(0, now.Sub(l.Oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, age, l.Consumer)
	}
}
