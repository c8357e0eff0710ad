package main

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	// Registers client-go's metrics providers: workqueue_* for our named
	// queue, rest_client_* for API server requests, leader_election_*.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"

	"github.com/samplecrd/network-controller/pkg/neutron"
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

	neutronRefreshesTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_refreshes_total",
		Help:           "Lists of the Neutron resources that carry this cluster's mark, by result (success or error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	neutronAuthFailures = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_auth_failures_total",
		Help:           "Failed attempts to authenticate to the cloud's Keystone (unreachable, or the credentials refused); retried with capped backoff, and at once when clouds.yaml changes.",
		StabilityLevel: metrics.ALPHA,
	})
	unrecognisedResources = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_unrecognised_resources",
		Help:           "Neutron networks and subnets that carry this cluster's mark but whose name does not parse as a Network's: never touched; an operator should look at them.",
		StabilityLevel: metrics.ALPHA,
	})
	orphansCollected = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "orphans_collected_total",
		Help:           "Neutron resources deleted because their Network no longer exists, by resource (network or subnet).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource"})
	orphansHeldBack = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "orphans_held_back_total",
		Help:           "Looks at Neutron resources whose Network is not in the cache that deleted nothing, by reason: disabled (--orphan-collection=false), not-this-cluster (their name records another cluster, or none), owner-alive (the API server still has the Network), cap (--max-orphans-per-list reached).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	duplicatesDeleted = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "duplicate_networks_deleted_total",
		Help:           "Duplicate Neutron networks of one Network deleted: creates that completed after their answer was lost while a retry made another.",
		StabilityLevel: metrics.ALPHA,
	})

	neutronThrottled = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_throttled_total",
		Help:           "Neutron's answers that asked the controller to slow down (429, or 503 with Retry-After), by status code: each paused all requests and was sent again.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"code"})

	breakerOpen = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_breaker_open",
		Help:           "1 while Neutron is known to be down and syncs fail fast without asking it, else 0.",
		StabilityLevel: metrics.ALPHA,
	})

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
		legacyregistry.MustRegister(syncsTotal, syncDuration, neutronRequestsTotal, neutronRequestDuration,
			neutronRefreshesTotal, neutronAuthFailures, unrecognisedResources, orphansCollected, orphansHeldBack, duplicatesDeleted, breakerOpen, neutronThrottled)
	})
}

// observeSync records one sync's result and duration.
func observeSync(result string, d time.Duration) {
	syncsTotal.WithLabelValues(result).Inc()
	syncDuration.WithLabelValues(result).Observe(d.Seconds())
}

// observeRefresh records the outcome of one list of Neutron.
func observeRefresh(st neutron.Status, err error) {
	if err != nil {
		neutronRefreshesTotal.WithLabelValues(resultError).Inc()
		return
	}
	neutronRefreshesTotal.WithLabelValues(resultSuccess).Inc()
	unrecognisedResources.Set(float64(st.Unrecognised))
}

// instrumentedTransport counts and times the requests a Neutron client
// makes, and tells reach whether Neutron answered.
type instrumentedTransport struct {
	next  http.RoundTripper
	reach *reachability
}

func (t instrumentedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	code := "<error>"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	t.reach.observe(req, resp, err)
	neutronRequestsTotal.WithLabelValues(req.Method, code).Inc()
	neutronRequestDuration.WithLabelValues(req.Method).Observe(time.Since(start).Seconds())
	return resp, err
}

// instrument returns an HTTP client whose requests are counted and whose
// answers reach observes.
func instrument(c *http.Client, reach *reachability) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out := *c
	out.Transport = instrumentedTransport{next: next, reach: reach}
	return &out
}

// reachability remembers whether Neutron answered the latest request: no
// answer or a server error makes /readyz fail at once, rather than at the
// next list of Neutron.
type reachability struct {
	mu  sync.Mutex
	err error
}

func (r *reachability) observe(req *http.Request, resp *http.Response, err error) {
	if err == nil && resp.StatusCode >= 500 {
		err = fmt.Errorf("%s %s: Neutron answered %s", req.Method, req.URL.Path, resp.Status)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// Err returns why the latest request got no good answer, or nil.
func (r *reachability) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
