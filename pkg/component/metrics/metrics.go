// Package metrics holds the metrics of both programs, network-controller
// and envoy-injector, in one place: like every Kubernetes component's they
// are component-base metrics, registered once in its legacy registry, which
// /metrics serves (pkg/component/serving). Their names are API for dashboards and
// alerts: they only ever gain members.
package metrics

import (
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	// Registers client-go's metrics providers: workqueue_* for the named
	// queue, rest_client_* for API server requests, leader_election_*.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
)

// The controller's own metrics, beside client-go's.
var (
	SyncsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "syncs_total",
		Help:           "Network syncs by result: success, error (retried with backoff), rejected (Neutron refused; retried later), or invalid (a spec Neutron would refuse; not retried until it changes).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	SyncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "network_controller",
		Name:           "sync_duration_seconds",
		Help:           "Duration of Network syncs by result.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	NeutronRequestsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_requests_total",
		Help:           "HTTP requests to Neutron by method and status code (\"<error>\" when no response came).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method", "code"})
	NeutronRequestDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_request_duration_seconds",
		Help:           "Latency of HTTP requests to Neutron by method.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"method"})

	NeutronRefreshesTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_refreshes_total",
		Help:           "Lists of the Neutron resources that carry this cluster's mark, by result (success or error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	NeutronAuthFailures = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_auth_failures_total",
		Help:           "Failed attempts to authenticate to the cloud's Keystone (unreachable, or the credentials refused); retried with capped backoff, and at once when clouds.yaml changes.",
		StabilityLevel: metrics.ALPHA,
	})
	KeystoneTokens = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "keystone_tokens_total",
		Help:           "Tokens the controller got from Keystone, by reason: connect (a new client: the first, or after credentials were refused or changed) or reauth (gophercloud's re-authentication after a 401, one at a time per client). One per token lifetime per cloud is what the work needs.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	UnrecognisedResources = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_unrecognised_resources",
		Help:           "Neutron networks and subnets that carry this cluster's mark but whose name does not parse as a Network's: never touched; an operator should look at them.",
		StabilityLevel: metrics.ALPHA,
	})
	OrphansCollected = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "orphans_collected_total",
		Help:           "Neutron resources deleted because their Network no longer exists, by resource (network, subnet or router).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource"})
	OrphansHeldBack = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "orphans_held_back_total",
		Help:           "Looks at Neutron resources whose Network is not in the cache that deleted nothing, by reason: disabled (--orphan-collection=false), not-this-cluster (their name records another cluster, or none), owner-alive (the API server still has the Network), cap (--max-orphans-per-list reached).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	DuplicatesDeleted = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "duplicate_networks_deleted_total",
		Help:           "Duplicate Neutron networks of one Network deleted: creates that completed after their answer was lost while a retry made another.",
		StabilityLevel: metrics.ALPHA,
	})

	NeutronThrottled = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_throttled_total",
		Help:           "Neutron's answers that asked the controller to slow down (429, or 503 with Retry-After), by status code: each paused all requests and was sent again.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"code"})

	// WritesFenced counts writes not made because this replica could not
	// prove it still held the leader Lease (pkg/component/leader's Fence), by where
	// they were going: "neutron" or "apiserver" (status, finalizer, Events).
	WritesFenced = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "writes_fenced_total",
		Help:           "Writes not made because this replica had not renewed its leader Lease within the renew deadline (it may have been frozen, or cut off from the API server, while another took over), by target: neutron or apiserver.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"to"})

	// EventsDropped counts Events over --event-qps and --event-burst.
	EventsDropped = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "network_controller",
		Name:           "events_dropped_total",
		Help:           "Events not written because all objects together were over --event-qps and --event-burst.",
		StabilityLevel: metrics.ALPHA,
	})

	// MetricsCertificateExpiration is when the certificate the secure
	// /metrics serves (--tls-cert-file) expires.
	MetricsCertificateExpiration = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "network_controller",
		Name:           "serving_certificate_expiration_timestamp_seconds",
		Help:           "When the certificate the secure /metrics serves (--tls-cert-file) now expires, in seconds since the epoch: it moves when a rotated certificate is loaded. Absent without --tls-cert-file.",
		StabilityLevel: metrics.ALPHA,
	})

	// NeutronQuotaLimit and NeutronQuotaUsed are Neutron's own quota of
	// each project the controller lists in, read once per list (never per
	// Network): one series per project, region and resource (networks,
	// subnets, ports, routers), as many as the places the controller
	// acts in, and removed when it stops listing one.
	NeutronQuotaLimit = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_quota_limit",
		Help:           "Neutron's quota of each resource in each project the controller lists in, read with each list; -1 when unlimited.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"region", "project_id", "resource"})
	NeutronQuotaUsed = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_quota_used",
		Help:           "How many of each resource Neutron counts against the project's quota (used and reserved), read with each list, by anyone in the project, the controller or not.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"region", "project_id", "resource"})

	BreakerOpen = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "network_controller",
		Name:           "neutron_breaker_open",
		Help:           "How many projects' breakers are open: each while Neutron is known to be down for that project's credentials, and its syncs fail fast without asking it. 0 when none is.",
		StabilityLevel: metrics.ALPHA,
	})
)

// Where a fenced write was going, the values of WritesFenced's "to".
const (
	FencedNeutron   = "neutron"
	FencedAPIServer = "apiserver"
)

// Sync and list results, the values of the "result" label.
const (
	ResultSuccess  = "success"
	ResultError    = "error"
	ResultRejected = "rejected"
	ResultInvalid  = "invalid"
)

// The webhook's metrics.
var (
	AdmissionsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "envoy_injector",
		Name:           "admissions_total",
		Help:           "Pod admissions by result (injected, unchanged: injected already or its own sidecar, skipped: did not ask or hostNetwork, denied, overloaded: refused with 503 while --max-concurrent-reviews were under way, or --memory-budget was spent) and reason (pkg/injector's Reason* values).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result", "reason"})
	AdmissionDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "envoy_injector",
		Name:           "admission_duration_seconds",
		Help:           "Time to decide one admission, by result, from the decoded request to the encoded answer.",
		Buckets:        metrics.ExponentialBuckets(0.0001, 2, 16),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	// HeldBytes and MemoryBudget are the webhook's memory budget
	// (serving.LimitConcurrency): what requests hold of it, and its size.
	HeldBytes = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "envoy_injector",
		Name:           "held_bytes",
		Help:           "Bytes of the memory budget (--memory-budget) held now by admission requests: their bodies as they arrive, and what answering each read one costs. Never above envoy_injector_memory_budget_bytes: a request that finds it spent is refused with 503.",
		StabilityLevel: metrics.ALPHA,
	})
	MemoryBudget = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "envoy_injector",
		Name:           "memory_budget_bytes",
		Help:           "The most bytes admission requests may hold at once (--memory-budget).",
		StabilityLevel: metrics.ALPHA,
	})
	ServingCertificateExpiration = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "envoy_injector",
		Name:           "serving_certificate_expiration_timestamp_seconds",
		Help:           "When the serving certificate the webhook hands out now expires, in seconds since the epoch: it moves when a rotated certificate is loaded.",
		StabilityLevel: metrics.ALPHA,
	})
)

// Why an orphan was not collected: the values of the "reason" label of
// orphans_held_back_total.
const (
	HeldDisabled       = "disabled"
	HeldNotThisCluster = "not-this-cluster"
	HeldOwnerAlive     = "owner-alive"
	HeldCap            = "cap"
	// HeldNotOnlyOurs: the orphan's network holds a subnet that is not
	// its owner's, which Neutron would delete with it, or lost its mark
	// since the list (inventory.SubnetsNotOursError, ErrMarkGone).
	HeldNotOnlyOurs = "not-only-ours"
)

// Reasons of network_controller_keystone_tokens_total.
const (
	TokenConnect = "connect"
	TokenReauth  = "reauth"
)

// SetNeutronQuota records one resource's quota of the project listed in:
// its limit (-1: none) and what Neutron counts against it.
func SetNeutronQuota(region, projectID, resource string, limit, used int) {
	NeutronQuotaLimit.WithLabelValues(region, projectID, resource).Set(float64(limit))
	NeutronQuotaUsed.WithLabelValues(region, projectID, resource).Set(float64(used))
}

// ForgetNeutronQuota removes the quota series of a project no longer
// listed in; another list of the same project sets them again.
func ForgetNeutronQuota(region, projectID string) {
	if !NeutronQuotaLimit.IsCreated() {
		return // not registered (a unit test's): nothing was set
	}
	place := map[string]string{"region": region, "project_id": projectID}
	NeutronQuotaLimit.DeletePartialMatch(place)
	NeutronQuotaUsed.DeletePartialMatch(place)
}

// controllerMetrics and injectorMetrics are each program's own metrics.
var (
	controllerMetrics = []metrics.Registerable{SyncsTotal, SyncDuration, NeutronRequestsTotal, NeutronRequestDuration,
		NeutronRefreshesTotal, NeutronAuthFailures, KeystoneTokens, UnrecognisedResources, OrphansCollected, OrphansHeldBack,
		DuplicatesDeleted, BreakerOpen, NeutronThrottled, WritesFenced, EventsDropped, MetricsCertificateExpiration,
		NeutronQuotaLimit, NeutronQuotaUsed}
	injectorMetrics = []metrics.Registerable{AdmissionsTotal, AdmissionDuration, ServingCertificateExpiration, HeldBytes, MemoryBudget}
)

// Names are the names of both programs' own metrics, as Prometheus sees
// them (histograms add _bucket, _sum and _count).
func Names() []string {
	var out []string
	for _, m := range append(slices.Clone(controllerMetrics), injectorMetrics...) {
		out = append(out, m.FQName())
	}
	return out
}

var registerController, registerInjector sync.Once

// RegisterController registers the controller's metrics; called once more,
// it does nothing. The series of every known label value start at zero, so
// that a rate or an alert sees them before the first event, not only after.
func RegisterController() {
	registerController.Do(func() {
		legacyregistry.MustRegister(controllerMetrics...)
		for _, r := range []string{ResultSuccess, ResultError, ResultRejected, ResultInvalid} {
			SyncsTotal.WithLabelValues(r)
		}
		for _, r := range []string{ResultSuccess, ResultError} {
			NeutronRefreshesTotal.WithLabelValues(r)
		}
		for _, r := range []string{"network", "subnet"} {
			OrphansCollected.WithLabelValues(r)
		}
		for _, r := range []string{TokenConnect, TokenReauth} {
			KeystoneTokens.WithLabelValues(r)
		}
		for _, to := range []string{FencedNeutron, FencedAPIServer} {
			WritesFenced.WithLabelValues(to)
		}
		for _, r := range []string{HeldDisabled, HeldNotThisCluster, HeldOwnerAlive, HeldCap} {
			OrphansHeldBack.WithLabelValues(r)
		}
	})
}

// RegisterInjector registers the webhook's metrics, with a zero series for
// each admission "result/reason" it names; called once more, it does
// nothing.
func RegisterInjector(results ...string) {
	registerInjector.Do(func() {
		legacyregistry.MustRegister(injectorMetrics...)
		for _, r := range results {
			result, reason, _ := strings.Cut(r, "/")
			AdmissionsTotal.WithLabelValues(result, reason)
		}
	})
}

// ObserveSync records one sync's result and duration.
func ObserveSync(result string, d time.Duration) {
	SyncsTotal.WithLabelValues(result).Inc()
	SyncDuration.WithLabelValues(result).Observe(d.Seconds())
}

// ObserveRefresh records the outcome of one list of Neutron and, when it
// succeeded, how many marked resources it could not attribute.
func ObserveRefresh(err error, unrecognised int) {
	if err != nil {
		NeutronRefreshesTotal.WithLabelValues(ResultError).Inc()
		return
	}
	NeutronRefreshesTotal.WithLabelValues(ResultSuccess).Inc()
	UnrecognisedResources.Set(float64(unrecognised))
}

// ObserveNeutronRequest records one HTTP request to Neutron; code is
// "<error>" when no response came.
func ObserveNeutronRequest(method, code string, d time.Duration) {
	NeutronRequestsTotal.WithLabelValues(method, code).Inc()
	NeutronRequestDuration.WithLabelValues(method).Observe(d.Seconds())
}

// ObserveAdmission records one admission's result, its reason and the
// time it took; it is the webhook's Observe.
func ObserveAdmission(result, reason string, elapsed time.Duration) {
	AdmissionsTotal.WithLabelValues(result, reason).Inc()
	AdmissionDuration.WithLabelValues(result).Observe(elapsed.Seconds())
}
