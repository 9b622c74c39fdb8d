package webhook

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Attempt outcomes, the values of the outcome label.
const (
	OutcomeDelivered = "delivered" // answered 2xx
	OutcomeRetry     = "retry"     // failed; another attempt is scheduled
	OutcomeFailed    = "failed"    // failed and the schedule is used up: the delivery is Failed
)

// Metrics are the dispatcher's Prometheus series: attempts by outcome and
// their duration (connect, send, answer). Operators alert on the rate of
// failed outcomes; the delivery log (GET /webhook/{id}/deliveries) says
// which endpoint and why.
type Metrics struct {
	attempts   *prometheus.CounterVec
	duration   prometheus.Histogram
	dispatched prometheus.Histogram
}

// NewMetrics registers the dispatcher's series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kadens_webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome: delivered, retry (another attempt scheduled), failed (schedule used up).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kadens_webhook_attempt_duration_seconds",
			Help:    "Duration of webhook delivery attempts, from sending to the answer or the error.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		dispatched: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kadens_webhook_dispatch_events",
			Help:    "Events taken from the outbox per fan-out transaction (at most 512: a backlog is worked off in pages).",
			Buckets: []float64{1, 8, 64, 128, 256, 512, 1024, 4096},
		}),
	}
	// Every outcome is exported from the start, so a rate over it is
	// defined before the first failure.
	for _, o := range []string{OutcomeDelivered, OutcomeRetry, OutcomeFailed} {
		m.attempts.WithLabelValues(o)
	}
	reg.MustRegister(m.attempts, m.duration, m.dispatched)
	return m
}

// observe records one attempt; a nil *Metrics records nothing.
func (m *Metrics) observe(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(outcome).Inc()
	m.duration.Observe(d.Seconds())
}

// observeDispatch records one fan-out transaction that took n events.
func (m *Metrics) observeDispatch(n int) {
	if m == nil || n == 0 {
		return
	}
	m.dispatched.Observe(float64(n))
}
