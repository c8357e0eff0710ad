// Package options is the controller's command line: its flags, in the
// named sections its --help prints, their defaults and what of them
// cannot work together, as kube-controller-manager's options package is
// for it. `network-controller plan` shares its grant flags.
package options

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/component/events"
	"github.com/samplecrd/network-controller/pkg/component/leader"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/component/serving"
	"github.com/samplecrd/network-controller/pkg/controller/cloud"
	"github.com/samplecrd/network-controller/pkg/controller/conversion"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
)

// Options are the controller's command line.
type Options struct {
	Kubeconfig   string
	Master       string
	Workers      int
	ResyncPeriod time.Duration
	KubeAPIQPS   float64
	KubeAPIBurst int
	Namespace    string

	Cloud               cloud.Options
	ClusterName         string
	Grants              tenancy.Defaults
	OrphanCollection    bool
	OrphanGracePeriod   time.Duration
	MaxOrphansPerList   int
	MaxCredentials      int
	NeutronResyncPeriod time.Duration
	MaxRetryDelay       time.Duration
	EventLimit          events.Limit

	// MaxCredentialsPerNamespace bounds one namespace's share of
	// MaxCredentials, so that it cannot push out another's.
	MaxCredentialsPerNamespace int

	LeaderElection     componentbaseconfig.LeaderElectionConfiguration
	ProbeBindAddress   string
	MetricsBindAddress string
	Profiling          bool
	MetricsSecure      bool
	CertFile, KeyFile  string
	TracingConfigFile  string

	// Conversion serves the Network CRD's conversion webhook.
	Conversion conversion.Options

	// Logs are the logging flags, applied by Logs.Apply.
	Logs *command.LogOptions
}

// New returns the controller's defaults.
func New() *Options {
	o := &Options{
		Workers: 8, ResyncPeriod: 5 * time.Minute, KubeAPIQPS: 200, KubeAPIBurst: 400,
		Cloud:            cloud.NewOptions(),
		OrphanCollection: true, OrphanGracePeriod: 2 * time.Minute, MaxOrphansPerList: 50,
		MaxCredentials: 256, MaxCredentialsPerNamespace: 4,
		NeutronResyncPeriod: 5 * time.Minute, MaxRetryDelay: 2 * time.Minute,
		EventLimit: events.Limit{QPS: 50, Burst: 100},
		// The --leader-elect* flags, bound and validated by component-base
		// as kube-controller-manager's are, with this controller's defaults.
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect:   true,
			LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:   metav1.Duration{Duration: 2 * time.Second},
			ResourceLock:  resourcelock.LeasesResourceLock,
			ResourceName:  "network-controller",
			// Empty: the Pod's namespace, or "default" out of cluster (Complete).
			ResourceNamespace: "",
		},
		ProbeBindAddress: ":8081", MetricsBindAddress: ":8080",
	}
	o.Cloud.Reload = 10 * time.Second
	return o
}

// Flags binds o to the controller's flags, in the sections of its --help.
func (o *Options) Flags() *cliflag.NamedFlagSets {
	fss := &cliflag.NamedFlagSets{}
	fs := fss.FlagSet("kubernetes")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig. Only required if out-of-cluster.")
	fs.StringVar(&o.Master, "master", o.Master, "The address of the Kubernetes API server. Overrides any value in kubeconfig. Only required if out-of-cluster.")
	fs.Float64Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Client-side rate limit of requests to the API server, per second.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst allowed above --kube-api-qps.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Only manage the Networks of this namespace (default: all namespaces).")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", o.ResyncPeriod, "How often every Network is re-checked against the cached Neutron state even when nothing changed. Costs no API server writes and no Neutron requests when in sync.")

	fs = fss.FlagSet("controller")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Number of Networks synced in parallel, and so the most Neutron requests in flight.")
	fs.DurationVar(&o.MaxRetryDelay, "max-retry-delay", o.MaxRetryDelay, "Cap of the exponential backoff of a Network whose sync failed (Neutron unavailable, over quota, a delete blocked by ports): the longest it takes to notice the cause is gone. Neutron's refusals of an invalid request are retried every 5 minutes instead, or at once when the Network changes.")
	fs.Float32Var(&o.EventLimit.QPS, "event-qps", o.EventLimit.QPS, "Most Events per second written for all Networks together, on average (as the kubelet's flag); beyond it and --event-burst they are dropped and counted in network_controller_events_dropped_total. 0: no limit beyond client-go's per-object one.")
	fs.IntVar(&o.EventLimit.Burst, "event-burst", o.EventLimit.Burst, "Events allowed at once above --event-qps.")
	AddClusterNameFlag(fs, &o.ClusterName)

	fs = fss.FlagSet("cloud")
	o.Cloud.AddFlags(fs)
	fs.DurationVar(&o.Cloud.Reload, "cloud-reload-interval", o.Cloud.Reload, "How often clouds.yaml is read again. When it changed (a Secret updated in place), the controller authenticates with the new one without a restart.")
	fs.DurationVar(&o.NeutronResyncPeriod, "neutron-resync-period", o.NeutronResyncPeriod, "How often the controller lists its Neutron networks, subnets and routers anew, with their subnets' address counts and the project's quota (QuotaNearlyFull), which is how changes made outside it are noticed.")

	fs = fss.FlagSet("tenancy")
	AddGrantFlags(fs, &o.Grants)
	fs.IntVar(&o.MaxCredentials, "max-cloud-credentials", o.MaxCredentials, "Most namespaces' cloud credentials (spec.cloudCredentialsRef) held at once, each with its Neutron client and its project's inventory; beyond it the least recently used of the namespace that holds the most is let go, and built again when a Network needs it.")
	fs.IntVar(&o.MaxCredentialsPerNamespace, "max-cloud-credentials-per-namespace", o.MaxCredentialsPerNamespace, "Most cloud credentials of one namespace held at once; beyond it the least recently used of that namespace is let go, never another's. At most --max-cloud-credentials.")

	fs = fss.FlagSet("orphan collection")
	fs.BoolVar(&o.OrphanCollection, "orphan-collection", o.OrphanCollection, "Delete the Neutron resources of this cluster whose Network is gone (a finalizer removed by hand, a create that completed late). Off, they are only counted (network_controller_orphans_held_back_total).")
	fs.DurationVar(&o.OrphanGracePeriod, "orphan-grace-period", o.OrphanGracePeriod, "How long Neutron resources must have been seen without their Network, by two lists of Neutron, before they are collected (after a live read of the API server confirms the Network is gone).")
	fs.IntVar(&o.MaxOrphansPerList, "max-orphans-per-list", o.MaxOrphansPerList, "Most Networks' orphaned Neutron resources collected per list of Neutron; the rest wait for the next list, and a Warning Event on their namespace says so.")

	componentbaseoptions.BindLeaderElectionFlags(&o.LeaderElection, fss.FlagSet("leader election"))

	fs = fss.FlagSet("serving")
	fs.StringVar(&o.ProbeBindAddress, "health-probe-bind-address", o.ProbeBindAddress, "Address of /healthz and /readyz; \"0\" turns them off.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of /metrics (Prometheus); \"0\" turns it off. May equal --health-probe-bind-address, unless --metrics-secure.")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Serve Go's profiler at /debug/pprof/ on the metrics address.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "Serve /metrics (and the profiler) over HTTPS, with the certificate of --tls-cert-file (else a self-signed one), to callers the API server authenticates (TokenReview) and authorizes to get the path (SubjectAccessReview), as kube-controller-manager's secure port does; needs the ClusterRole system:auth-delegator. The Deployment turns it on.")
	fs.StringVar(&o.CertFile, "tls-cert-file", o.CertFile, "Serving certificate (PEM) of /metrics with --metrics-secure, reloaded when it changes; the Deployment mounts one signed by the CA Prometheus trusts (docs/monitoring.md). Without it and --tls-private-key-file, a self-signed certificate made at each start is served, which Prometheus cannot verify: a scraper must then skip verification and sends its token to whatever answers at the address.")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", o.KeyFile, "Private key (PEM) of --tls-cert-file, reloaded when it changes.")

	o.Conversion.AddFlags(fss.FlagSet("conversion webhook"), "Served from the process's start, leader or standby (make run does; in cluster the chart runs network-controller conversion-webhook apart). Empty (the default) serves none: set it where the CRD's spec.conversion names this process (docs/operations.md).")

	fss.FlagSet("tracing").StringVar(&o.TracingConfigFile, "tracing-config-file", o.TracingConfigFile, "A TracingConfiguration file, as kube-apiserver's (endpoint: an OTLP gRPC collector, default localhost:4317; samplingRatePerMillion). Set, each sync is an OpenTelemetry span with a child for each request it makes; set or not, each Neutron request carries the sync's trace ID as its global request ID (X-OpenStack-Request-ID), and a condition Neutron's answer caused names the request as Neutron's log does (docs/tracing.md).")
	o.Logs = command.AddLogFlags(fss.FlagSet("logging"))
	return fss
}

// AddClusterNameFlag binds --cluster-name: the controller's, and plan's,
// which must mark as the controller does.
func AddClusterNameFlag(fs *pflag.FlagSet, name *string) {
	fs.StringVar(name, "cluster-name", *name, "This cluster's identity in the ownership mark written into the description of every Neutron resource the controller makes: a DNS-1123 label. Empty (the default) means the UID of the kube-system namespace, which no other cluster has. Set it only to keep the mark of an earlier install (the old default was \"kubernetes\"); see docs/ownership.md.")
}

// AddGrantFlags binds the deprecated grants beside TenantPolicies: the
// controller's, and plan's, which must decide as the controller does.
func AddGrantFlags(fs *pflag.FlagSet, d *tenancy.Defaults) {
	fs.StringSliceVar(&d.AdoptionNamespaces, "adoption-namespaces", d.AdoptionNamespaces, "Deprecated: a TenantPolicy with adoption: true grants adoption. Namespaces whose Networks may adopt an existing Neutron network of their project with spec.adopt, beside what TenantPolicies grant; \"*\" for all. Default none.")
	fs.StringSliceVar(&d.ExternalNetworks, "router-external-networks", d.ExternalNetworks, "Deprecated: a TenantPolicy's externalNetworks grants them. External networks, by name or ID, on which a Network of any namespace may have a router of its own (spec.router.externalNetwork), beside what TenantPolicies grant. Default none.")
}

// Complete fills in what the flags leave to the environment: the
// namespace of the Lease, when --leader-elect-resource-namespace is empty.
func (o *Options) Complete() error {
	o.Cloud.MaxRetryDelay = o.MaxRetryDelay
	if o.LeaderElection.ResourceNamespace == "" {
		ns, err := command.Namespace(o.Kubeconfig)
		if err != nil {
			return err
		}
		o.LeaderElection.ResourceNamespace = ns
	}
	o.Grants.ControllerNamespace = o.LeaderElection.ResourceNamespace
	return nil
}

// Validate says which flags cannot work, or together.
func (o *Options) Validate() error {
	if err := o.Cloud.Validate(); err != nil {
		return err
	}
	if o.Workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d", o.Workers)
	}
	if o.ResyncPeriod <= 0 || o.NeutronResyncPeriod <= 0 || o.MaxRetryDelay <= 0 || o.Cloud.Reload <= 0 {
		return fmt.Errorf("--resync-period, --neutron-resync-period, --max-retry-delay and --cloud-reload-interval must be positive")
	}
	if o.OrphanGracePeriod < 0 || o.MaxOrphansPerList < 1 || o.MaxCredentials < 1 || o.MaxCredentialsPerNamespace < 1 {
		return fmt.Errorf("--orphan-grace-period must not be negative, --max-orphans-per-list, --max-cloud-credentials and --max-cloud-credentials-per-namespace at least 1")
	}
	if o.MetricsSecure && o.MetricsBindAddress == o.ProbeBindAddress && o.MetricsBindAddress != "0" {
		return fmt.Errorf("--metrics-secure serves /metrics over HTTPS with authentication, so it needs a --metrics-bind-address other than --health-probe-bind-address, which the kubelet probes without either")
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together: give both or neither")
	}
	if o.CertFile != "" && !o.MetricsSecure {
		return fmt.Errorf("--tls-cert-file serves /metrics over HTTPS, which --metrics-secure turns on: give it too")
	}
	if err := o.Conversion.Validate(); err != nil {
		return err
	}
	if errs := validation.IsDNS1123Label(o.ClusterName); o.ClusterName != "" && len(errs) > 0 {
		return fmt.Errorf("--cluster-name %q cannot be part of the ownership mark of Neutron resources: %s", o.ClusterName, strings.Join(errs, "; "))
	}
	return leader.Validate(o.LeaderElection)
}

// TenancyConfig is what the flags say of the projects (pkg/controller/tenancy).
func (o *Options) TenancyConfig() tenancy.Config {
	return tenancy.Config{
		Namespace: o.Namespace, Defaults: o.Grants,
		NeutronResyncPeriod: o.NeutronResyncPeriod, NeutronTimeout: o.Cloud.Timeout,
		OrphanCollection: o.OrphanCollection, OrphanGracePeriod: o.OrphanGracePeriod, MaxOrphansPerList: o.MaxOrphansPerList,
		MaxCredentials: o.MaxCredentials, MaxCredentialsPerNamespace: o.MaxCredentialsPerNamespace,
		CloudReload: o.Cloud.Reload, MaxRetryDelay: o.MaxRetryDelay,
	}
}

// Endpoints are the controller's /healthz, /readyz and /metrics as the
// flags say: /metrics over HTTPS, behind the API server's delegated
// authentication and authorization, with --metrics-secure.
func (o *Options) Endpoints(ctx context.Context, name string, kube kubernetes.Interface, health, ready []healthz.HealthChecker) (serving.Endpoints, error) {
	e := serving.Endpoints{Name: name, ProbeAddress: o.ProbeBindAddress, MetricsAddress: o.MetricsBindAddress,
		Profiling: o.Profiling, Health: health, Ready: ready}
	if !o.MetricsSecure {
		return e, nil
	}
	var err error
	if e.Auth, err = serving.NewDelegatedAuth(kube); err != nil {
		return e, err
	}
	e.TLS, err = o.MetricsTLS(ctx, name)
	return e, err
}

// MetricsTLS is the TLS configuration of the secure /metrics: the
// certificate of --tls-cert-file, followed as its Secret is renewed, or
// without it one made now and signed by itself for host, which no scraper
// can verify (out of cluster, where nothing else is at hand).
func (o *Options) MetricsTLS(ctx context.Context, host string) (*tls.Config, error) {
	if o.CertFile == "" {
		return serving.SelfSignedTLS(host)
	}
	// The expiry of the one served is what
	// NetworkControllerCertificateExpiring reads.
	return serving.FileTLS(ctx, o.CertFile, o.KeyFile, func(cert *x509.Certificate) {
		metrics.MetricsCertificateExpiration.Set(float64(cert.NotAfter.Unix()))
	})
}

// NewCommand is `network-controller`: with no subcommand, the controller,
// started with run once its flags are complete and valid and the logs set
// up; subcommands beside it.
func NewCommand(run func(context.Context, *Options) error, subcommands ...*cobra.Command) *cobra.Command {
	opts := New()
	flags := opts.Flags() // binds opts.Logs, which Serve's steps name
	cmd := &cobra.Command{
		Use:   "network-controller",
		Short: "Keep OpenStack Neutron equal to the cluster's Networks",
		Long:  "The network-controller keeps OpenStack Neutron equal to the Network objects (samplecrd.k8s.io/v2, also served as v1) of a Kubernetes cluster: a Neutron network and its subnets for each, in the project its namespace may use (README.md).",
		RunE: command.Serve("network-controller", func(ctx context.Context) error { return run(ctx, opts) },
			opts.Complete, opts.Validate, opts.Logs.Apply),
	}
	cmd.AddCommand(subcommands...)
	command.SetupRoot(cmd, flags)
	return cmd
}
