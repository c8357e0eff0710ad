package main

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	// Registers client-go's metrics providers: workqueue_* for our named
	// queue, rest_client_* for API server requests, leader_election_*.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
)

// The controller's own metrics, beside client-go's. Like every Kubernetes
// component's, they are registered once in component-base's registry,
// which /metrics serves.
var (
	syncsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "syncs_total",
		Help:           "Network syncs by result: success, error (retried with backoff), or rejected (Neutron refused; retried later).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	syncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "network_controller",
		Name:           "sync_duration_seconds",
		Help:           "Duration of Network syncs by result.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	neutronRequestsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_requests_total",
		Help:           "HTTP requests to Neutron by method and status code (\"<error>\" when no response came).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method", "code"})
	neutronRequestDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_request_duration_seconds",
		Help:           "Latency of HTTP requests to Neutron by method.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})

	registerMetricsOnce sync.Once
)

// Sync results, the values of the "result" label.
const (
	resultSuccess  = "success"
	resultError    = "error"
	resultRejected = "rejected"
)

func registerMetrics() {
	registerMetricsOnce.Do(func() {
		legacyregistry.MustRegister(syncsTotal, syncDuration, neutronRequestsTotal, neutronRequestDuration)
	})
}

// observeSync records one sync's result and duration.
func observeSync(result string, d time.Duration) {
	syncsTotal.WithLabelValues(result).Inc()
	syncDuration.WithLabelValues(result).Observe(d.Seconds())
}

// instrumentedTransport counts and times the requests a Neutron client makes.
type instrumentedTransport struct{ next http.RoundTripper }

func (t instrumentedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	code := "<error>"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	neutronRequestsTotal.WithLabelValues(req.Method, code).Inc()
	neutronRequestDuration.WithLabelValues(req.Method).Observe(time.Since(start).Seconds())
	return resp, err
}

// instrument returns an HTTP client whose requests are counted.
func instrument(c *http.Client) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out := *c
	out.Transport = instrumentedTransport{next: next}
	return &out
}
