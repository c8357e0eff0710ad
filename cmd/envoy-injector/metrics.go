package main

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The webhook's metrics, served on /metrics from component-base's
// registry like every Kubernetes component's.
var (
	admissionsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "envoy_injector",
		Name:           "admissions_total",
		Help:           "Pod admissions by result: injected, unchanged (injected already: reinvocation or a copy), skipped (did not ask, or hostNetwork), denied.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	admissionDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "envoy_injector",
		Name:           "admission_duration_seconds",
		Help:           "Time to decide one admission, by result, from the decoded request to the encoded answer.",
		Buckets:        metrics.ExponentialBuckets(0.0001, 2, 16),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	registerOnce sync.Once
)

// observeAdmission is the Webhook's Observe.
func observeAdmission(result string, elapsed time.Duration) {
	admissionsTotal.WithLabelValues(result).Inc()
	admissionDuration.WithLabelValues(result).Observe(elapsed.Seconds())
}

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(admissionsTotal, admissionDuration) })
}
