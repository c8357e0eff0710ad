// Command network-controller keeps OpenStack Neutron equal to the Network
// objects (samplecrd.k8s.io/v1) of a Kubernetes cluster: for each Network it
// creates (or adopts) a Neutron network and subnet, keeps their options
// equal to the spec, attaches the subnet to the router the spec names, and
// deletes (or releases) them when the Network goes, reporting in status and
// Events. Each Network lives in the controller's OpenStack project or in
// one its namespace names, as the administrator's TenantPolicies allow.
//
// It runs out of cluster with --kubeconfig, or in cluster with the Pod's
// ServiceAccount when neither --kubeconfig nor --master is given; with
// leader election, one replica works and the others stand by. This file
// reads the flags, builds the clients, and starts the informers and the
// controller of controller.go for each term as leader.
package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	// --logging-format=json.
	_ "k8s.io/component-base/logs/json/register"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	// Root CAs compiled in, used only where the system has none: the image
	// is FROM scratch, and Keystone is reached over HTTPS.
	_ "golang.org/x/crypto/x509roots/fallback"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/configmap"
	"github.com/samplecrd/network-controller/pkg/events"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
	"github.com/samplecrd/network-controller/pkg/importer"
	"github.com/samplecrd/network-controller/pkg/incluster"
	"github.com/samplecrd/network-controller/pkg/leader"
	"github.com/samplecrd/network-controller/pkg/logging"
	"github.com/samplecrd/network-controller/pkg/metrics"
	"github.com/samplecrd/network-controller/pkg/neutron"
	"github.com/samplecrd/network-controller/pkg/plan"
	"github.com/samplecrd/network-controller/pkg/reconcile"
	"github.com/samplecrd/network-controller/pkg/serving"
	"github.com/samplecrd/network-controller/pkg/tenancy"
	"github.com/samplecrd/network-controller/pkg/tracing"
)

// options are the command line.
type options struct {
	kubeconfig   string
	masterURL    string
	workers      int
	resyncPeriod time.Duration
	kubeAPIQPS   float64
	kubeAPIBurst int
	namespace    string

	neutronEndpoint     string
	osCloud             string
	cloudReload         time.Duration
	clusterName         string
	adoptionNamespaces  []string
	externalNetworks    []string
	orphanCollection    bool
	orphanGracePeriod   time.Duration
	maxOrphansPerList   int
	maxCredentials      int
	neutronResyncPeriod time.Duration
	neutronTimeout      time.Duration
	neutronQPS          float64
	neutronBurst        int
	maxRetryDelay       time.Duration
	eventLimit          events.Limit

	// maxCredentialsPerNamespace bounds one namespace's share of
	// maxCredentials, so that it cannot push out another's.
	maxCredentialsPerNamespace int

	leaderElection     componentbaseconfig.LeaderElectionConfiguration
	probeBindAddress   string
	metricsBindAddress string
	profiling          bool
	metricsSecure      bool
	certFile, keyFile  string
	tracingConfigFile  string
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Only required if out-of-cluster.")
	fs.StringVar(&o.masterURL, "master", "", "The address of the Kubernetes API server. Overrides any value in kubeconfig. Only required if out-of-cluster.")
	fs.IntVar(&o.workers, "workers", 8, "Number of Networks synced in parallel, and so the most Neutron requests in flight.")
	fs.DurationVar(&o.resyncPeriod, "resync-period", 5*time.Minute, "How often every Network is re-checked against the cached Neutron state even when nothing changed. Costs no API server writes and no Neutron requests when in sync.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 200, "Client-side rate limit of requests to the API server, per second.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 400, "Burst allowed above --kube-api-qps.")

	fs.StringVar(&o.namespace, "namespace", "", "Only manage the Networks of this namespace (default: all namespaces).")
	o.addCloudFlags(fs)
	fs.DurationVar(&o.cloudReload, "cloud-reload-interval", 10*time.Second, "How often clouds.yaml is read again. When it changed (a Secret updated in place), the controller authenticates with the new one without a restart.")
	fs.StringVar(&o.clusterName, "cluster-name", "", "This cluster's identity in the ownership mark written into the description of every Neutron resource the controller makes: a DNS-1123 label. Empty (the default) means the UID of the kube-system namespace, which no other cluster has. Set it only to keep the mark of an earlier install (the old default was \"kubernetes\"); see docs/ownership.md.")
	o.addGrantFlags(fs)
	fs.BoolVar(&o.orphanCollection, "orphan-collection", true, "Delete the Neutron resources of this cluster whose Network is gone (a finalizer removed by hand, a create that completed late). Off, they are only counted (network_controller_orphans_held_back_total).")
	fs.DurationVar(&o.orphanGracePeriod, "orphan-grace-period", 2*time.Minute, "How long Neutron resources must have been seen without their Network, by two lists of Neutron, before they are collected (after a live read of the API server confirms the Network is gone).")
	fs.IntVar(&o.maxOrphansPerList, "max-orphans-per-list", 50, "Most Networks' orphaned Neutron resources collected per list of Neutron; the rest wait for the next list, and a Warning Event on their namespace says so.")
	fs.IntVar(&o.maxCredentials, "max-cloud-credentials", 256, "Most namespaces' cloud credentials (spec.cloudCredentialsRef) held at once, each with its Neutron client and its project's inventory; beyond it the least recently used of the namespace that holds the most is let go, and built again when a Network needs it.")
	fs.IntVar(&o.maxCredentialsPerNamespace, "max-cloud-credentials-per-namespace", 4, "Most cloud credentials of one namespace held at once; beyond it the least recently used of that namespace is let go, never another's. At most --max-cloud-credentials.")
	fs.DurationVar(&o.neutronResyncPeriod, "neutron-resync-period", 5*time.Minute, "How often the controller lists its Neutron networks, subnets and routers anew, which is how changes made outside it are noticed.")
	fs.Float32Var(&o.eventLimit.QPS, "event-qps", 50, "Most Events per second written for all Networks together, on average (as the kubelet's flag); beyond it and --event-burst they are dropped and counted in network_controller_events_dropped_total. 0: no limit beyond client-go's per-object one.")
	fs.IntVar(&o.eventLimit.Burst, "event-burst", 100, "Events allowed at once above --event-qps.")
	fs.DurationVar(&o.maxRetryDelay, "max-retry-delay", 2*time.Minute, "Cap of the exponential backoff of a Network whose sync failed (Neutron unavailable, over quota, a delete blocked by ports): the longest it takes to notice the cause is gone. Neutron's refusals of an invalid request are retried every 5 minutes instead, or at once when the Network changes.")

	// The --leader-elect* flags, bound and validated by component-base as
	// kube-controller-manager's are, with this controller's defaults.
	o.leaderElection = componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:   true,
		LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
		RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
		RetryPeriod:   metav1.Duration{Duration: 2 * time.Second},
		ResourceLock:  resourcelock.LeasesResourceLock,
		ResourceName:  "network-controller",
		// Empty: the Pod's namespace, or "default" out of cluster (main).
		ResourceNamespace: "",
	}
	componentbaseoptions.BindLeaderElectionFlags(&o.leaderElection, fs)
	fs.StringVar(&o.probeBindAddress, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; \"0\" turns them off.")
	fs.BoolVar(&o.profiling, "profiling", false, "Serve Go's profiler at /debug/pprof/ on the metrics address.")
	fs.StringVar(&o.metricsBindAddress, "metrics-bind-address", ":8080", "Address of /metrics (Prometheus); \"0\" turns it off. May equal --health-probe-bind-address, unless --metrics-secure.")
	fs.StringVar(&o.tracingConfigFile, "tracing-config-file", "", "A TracingConfiguration file, as kube-apiserver's (endpoint: an OTLP gRPC collector, default localhost:4317; samplingRatePerMillion). Set, each sync is an OpenTelemetry span with a child for each request it makes; set or not, each Neutron request carries the sync's trace ID as its global request ID (X-OpenStack-Request-ID), and a condition Neutron's answer caused names the request as Neutron's log does (docs/tracing.md).")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", false, "Serve /metrics (and the profiler) over HTTPS, with the certificate of --tls-cert-file (else a self-signed one), to callers the API server authenticates (TokenReview) and authorizes to get the path (SubjectAccessReview), as kube-controller-manager's secure port does; needs the ClusterRole system:auth-delegator. The Deployment turns it on.")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "Serving certificate (PEM) of /metrics with --metrics-secure, reloaded when it changes; the Deployment mounts one signed by the CA Prometheus trusts (docs/monitoring.md). Without it and --tls-private-key-file, a self-signed certificate made at each start is served, which Prometheus cannot verify: a scraper must then skip verification and sends its token to whatever answers at the address.")
	fs.StringVar(&o.keyFile, "tls-private-key-file", "", "Private key (PEM) of --tls-cert-file, reloaded when it changes.")
}

// addCloudFlags adds the flags that say which Neutron to talk to, and how:
// the controller's, and import's.
func (o *options) addCloudFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.neutronEndpoint, "neutron-endpoint", "", "URL of a neutron-server that runs with auth_strategy = noauth, e.g. http://127.0.0.1:9696/ (tests, and the operator's view in the local stack). When empty, the normal case, the controller authenticates to Keystone with the cloud of --os-cloud.")
	fs.StringVar(&o.osCloud, "os-cloud", "", "Name of the cloud in clouds.yaml ($OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/, /etc/openstack/) to authenticate to Keystone with; empty means $OS_CLOUD. Password and application-credential clouds both work; tokens are renewed when they expire.")
	fs.DurationVar(&o.neutronTimeout, "neutron-timeout", 30*time.Second, "Timeout of one Neutron request.")
	fs.Float64Var(&o.neutronQPS, "neutron-qps", 20, "Client-side rate limit of requests to Neutron, per second. Beside it, a 429 (or a 503 with Retry-After) from Neutron pauses all requests for the time it names, and the refused request is sent again.")
	fs.IntVar(&o.neutronBurst, "neutron-burst", 40, "Burst allowed above --neutron-qps.")
}

// addGrantFlags adds the deprecated grants beside TenantPolicies: the
// controller's, and plan's, which must decide as the controller does.
func (o *options) addGrantFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.adoptionNamespaces, "adoption-namespaces", nil, "Deprecated: a TenantPolicy with adoption: true grants adoption. Namespaces whose Networks may adopt an existing Neutron network of their project with spec.adopt, beside what TenantPolicies grant; \"*\" for all. Default none.")
	fs.StringSliceVar(&o.externalNetworks, "router-external-networks", nil, "Deprecated: a TenantPolicy's externalNetworks grants them. External networks, by name or ID, on which a Network of any namespace may have a router of its own (spec.router.externalNetwork), beside what TenantPolicies grant. Default none.")
}

func (o *options) validate() error {
	if o.neutronQPS <= 0 || o.neutronBurst < 1 {
		return fmt.Errorf("--neutron-qps must be above 0 and --neutron-burst at least 1, got %g and %d", o.neutronQPS, o.neutronBurst)
	}
	if o.workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d", o.workers)
	}
	if o.resyncPeriod <= 0 || o.neutronResyncPeriod <= 0 || o.maxRetryDelay <= 0 || o.cloudReload <= 0 {
		return fmt.Errorf("--resync-period, --neutron-resync-period, --max-retry-delay and --cloud-reload-interval must be positive")
	}
	if o.orphanGracePeriod < 0 || o.maxOrphansPerList < 1 || o.maxCredentials < 1 || o.maxCredentialsPerNamespace < 1 {
		return fmt.Errorf("--orphan-grace-period must not be negative, --max-orphans-per-list, --max-cloud-credentials and --max-cloud-credentials-per-namespace at least 1")
	}
	if o.metricsSecure && o.metricsBindAddress == o.probeBindAddress && o.metricsBindAddress != "0" {
		return fmt.Errorf("--metrics-secure serves /metrics over HTTPS with authentication, so it needs a --metrics-bind-address other than --health-probe-bind-address, which the kubelet probes without either")
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together: give both or neither")
	}
	if o.certFile != "" && !o.metricsSecure {
		return fmt.Errorf("--tls-cert-file serves /metrics over HTTPS, which --metrics-secure turns on: give it too")
	}
	if errs := validation.IsDNS1123Label(o.clusterName); o.clusterName != "" && len(errs) > 0 {
		return fmt.Errorf("--cluster-name %q cannot be part of the ownership mark of Neutron resources: %s", o.clusterName, strings.Join(errs, "; "))
	}
	return leader.Validate(o.leaderElection)
}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "import":
			os.Exit(importNetworks(os.Args[2:]))
		case "plan":
			os.Exit(planNetworks(os.Args[2:]))
		}
	}
	var opts options
	opts.addFlags(pflag.CommandLine)
	logOpts := logging.AddFlags(pflag.CommandLine)
	pflag.Parse()
	defer logging.Flush()
	if err := logOpts.Apply(); err != nil {
		fmt.Fprintf(os.Stderr, "network-controller: %v\n", err)
		os.Exit(2)
	}
	if opts.leaderElection.ResourceNamespace == "" {
		ns, err := incluster.Namespace(opts.kubeconfig)
		if err != nil {
			fmt.Fprintf(os.Stderr, "network-controller: %v\n", err)
			os.Exit(2)
		}
		opts.leaderElection.ResourceNamespace = ns
	}
	if err := opts.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "network-controller: %v\n", err)
		os.Exit(2)
	}

	// SIGTERM (kubelet stopping the Pod) and SIGINT cancel the context: the
	// informers stop, the workers finish their current item, and Run returns.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)

	if err := run(ctx, opts); err != nil {
		logger.Error(err, "network-controller failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	logger.Info("Shut down cleanly")
	klog.Flush()
}

// importNetworks is `network-controller import`: it prints a Network
// manifest that adopts each network of the cloud's project that a Network
// can manage, and on stderr why it skips each other (pkg/importer). It
// only reads Neutron. It returns the exit code.
func importNetworks(args []string) int {
	fs := pflag.NewFlagSet("network-controller import", pflag.ContinueOnError)
	var opts options
	opts.addCloudFlags(fs)
	names := fs.StringArray("name", nil, "Import only the networks whose Neutron name matches this pattern (path.Match: *, ?, [...]); repeat for several. Default: every network.")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "Usage: network-controller import [flags] > networks.yaml\n\nPrints a Network that adopts each network of the cloud's project a Network can manage; apply it with kubectl in a namespace a TenantPolicy grants adoption (docs/import.md).\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// A Session's other settings, which only a long-running controller
	// needs: one clouds.yaml reading, a patient backoff.
	opts.cloudReload, opts.maxRetryDelay = time.Hour, 2*time.Minute
	client, _, _, err := newNeutronClient(opts, &neutron.Reachability{}, tracenoop.NewTracerProvider())
	if err != nil {
		fmt.Fprintf(os.Stderr, "network-controller import: %s\n", reconcile.Printable(err.Error())) // Neutron's answer: one line
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	candidates, err := importer.Candidates(ctx, client, *names)
	if err == nil {
		err = importer.Write(os.Stdout, os.Stderr, candidates)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "network-controller import: %s\n", reconcile.Printable(err.Error())) // Neutron's answer: one line
		return 1
	}
	return 0
}

// planNetworks is `network-controller plan`: for each Network of the
// manifests, the requests a sync would send to Neutron and the condition
// the controller would then report (pkg/plan). It writes nothing. It
// returns the exit code: 1 when a Network would be refused.
func planNetworks(args []string) int {
	fs := pflag.NewFlagSet("network-controller plan", pflag.ContinueOnError)
	var opts options
	fs.StringVar(&opts.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Only required if out-of-cluster.")
	fs.StringVar(&opts.clusterName, "cluster-name", "", "The controller's --cluster-name: the mark that says which Neutron resources are this cluster's.")
	opts.addCloudFlags(fs)
	opts.addGrantFlags(fs)
	files := fs.StringArrayP("filename", "f", nil, "A file of Network manifests, as kubectl apply -f takes it, or - for standard input; repeat for several. Other kinds are skipped.")
	namespace := fs.StringP("namespace", "n", metav1.NamespaceDefault, "The namespace of the Networks whose manifest names none.")
	output := fs.StringP("output", "o", "text", "text, or json for a pipeline.")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "Usage: network-controller plan -f network.yaml [flags]\n\nPrints the Neutron requests the controller would send to make Neutron match each Network, and the condition it would report, without writing anything; exits 1 when one would be refused (docs/plan.md).\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(*files) == 0 || (*output != "text" && *output != "json") {
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	results, err := runPlan(ctx, opts, *files, *namespace)
	if err == nil {
		write := plan.WriteText
		if *output == "json" {
			write = plan.WriteJSON
		}
		err = write(os.Stdout, results)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "network-controller plan: %s\n", reconcile.Printable(err.Error())) // Neutron's or a manifest's words: one line
		return 2
	}
	for _, r := range results {
		if r.Refused {
			return 1
		}
	}
	return 0
}

// runPlan plans the Networks of files through the controller's own
// policy, projects, door and reconciler, on the live cluster and cloud:
// its API server clients send only reads and dry runs (plan.ReadOnly), and
// each project's Neutron client is a plan.DryRun.
func runPlan(ctx context.Context, opts options, files []string, namespace string) ([]plan.Result, error) {
	networks, err := readManifests(files, namespace)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("building the API server client configuration: %w", err)
	}
	cfg.Wrap(plan.ReadOnly)
	cfg.UserAgent = controllerAgentName + "-plan"
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	networkClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mark, err := clusterMark(ctx, kubeClient, opts.clusterName)
	if err != nil {
		return nil, err
	}
	// A Session's other settings, which only a long-running controller
	// needs: one clouds.yaml reading, a patient backoff.
	// A plan holds every credential its files name: it lets none go.
	opts.cloudReload, opts.maxRetryDelay, opts.maxCredentials, opts.maxCredentialsPerNamespace = time.Hour, 2*time.Minute, 256, 256
	neutronClient, ownCloud, _, err := newNeutronClient(opts, &neutron.Reachability{}, tracenoop.NewTracerProvider())
	if err != nil {
		return nil, err
	}
	dryRuns := map[tenancy.Key]*plan.DryRun{}
	clusterFactory := informers.NewSharedInformerFactory(networkClient, 0)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	set, err := tenancy.Build(tenancy.Parts{
		Networks: clusterFactory.Samplecrd().V1().Networks(), TenantPolicies: clusterFactory.Samplecrd().V1().TenantPolicies(),
		Namespaces: kubeFactory.Core().V1().Namespaces(), Secrets: kubeClient.CoreV1(), NetworkClient: networkClient, Mark: mark,
		Own: neutronClient, OwnCloud: ownCloud, Reach: &neutron.Reachability{}, Connect: opts.tenantSession(tracenoop.NewTracerProvider()),
		Records: plan.Unwritten{},
		Wrap: func(key tenancy.Key, client neutron.Interface) neutron.Interface {
			dryRuns[key] = plan.NewDryRun(client)
			return dryRuns[key]
		}}, opts.tenancyConfig())
	if err != nil {
		return nil, err
	}
	// The informers stop when the plan is done: Shutdown waits for them.
	defer clusterFactory.Shutdown()
	defer kubeFactory.Shutdown()
	informing, done := context.WithCancel(ctx)
	defer done()
	clusterFactory.Start(informing.Done())
	kubeFactory.Start(informing.Done())
	if err := set.ListOnce(ctx); err != nil {
		return nil, err
	}
	project := func(ctx context.Context, network *samplecrdv1.Network) (plan.Reconciler, *plan.DryRun, error) {
		r, err := set.For(ctx, network)
		if err != nil {
			return nil, nil, err
		}
		return r, dryRuns[tenancy.KeyOf(network)], nil
	}
	var results []plan.Result
	for _, n := range networks {
		stored, exists, err := plan.Admit(ctx, networkClient, n)
		if errors.Is(err, plan.ErrAPIServerRefused) {
			results = append(results, plan.Result{Network: n.Namespace + "/" + n.Name, Exists: exists, Requests: []plan.Request{}, Refused: true,
				Condition: &metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(metav1.StatusReasonInvalid), Message: err.Error()}})
			continue
		}
		if err != nil {
			return nil, err
		}
		results = append(results, plan.Sync(ctx, stored, exists, project))
	}
	return results, nil
}

// readManifests reads the Networks of files ("-": standard input), each
// in namespace unless it names its own; it says on stderr which other
// objects it skips.
func readManifests(files []string, namespace string) ([]*samplecrdv1.Network, error) {
	var out []*samplecrdv1.Network
	for _, name := range files {
		f := os.Stdin
		if name != "-" {
			var err error
			if f, err = os.Open(name); err != nil {
				return nil, err
			}
		}
		networks, others, err := plan.ReadNetworks(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, o := range others {
			fmt.Fprintf(os.Stderr, "%s: skipped %s: plan reads Networks only\n", name, o)
		}
		for _, n := range networks {
			if n.Namespace == "" {
				n.Namespace = namespace
			}
		}
		out = append(out, networks...)
	}
	return out, nil
}

func run(ctx context.Context, opts options) error {
	metrics.RegisterController()
	cfg, err := clientcmd.BuildConfigFromFlags(opts.masterURL, opts.kubeconfig)
	if err != nil {
		return fmt.Errorf("building the API server client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(opts.kubeAPIQPS), opts.kubeAPIBurst
	cfg.UserAgent = controllerAgentName

	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the kubernetes clientset: %w", err)
	}
	mark, err := clusterMark(ctx, kubeClient, opts.clusterName)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Ownership mark", "description", mark.Description(), "clusterUID", mark.ClusterUID())
	reach := &neutron.Reachability{}
	// The cloud is read before anything is served: a clouds.yaml that
	// cannot be read is a configuration error, reported at once. Whether
	// its credentials work is found out, and reported on the Networks,
	// once the controller runs.
	tracingConfig, err := tracing.ReadConfig(opts.tracingConfigFile)
	if err != nil {
		return err
	}
	tp, err := tracing.NewProvider(ctx, tracingConfig, controllerAgentName)
	if err != nil {
		return err
	}
	// Shut down last: it sends the spans still batched, for a few
	// seconds at most, so that a collector that is away cannot hold up
	// the exit the kubelet waits for.
	defer func() {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(flush)
	}()
	neutronClient, ownCloud, authErr, err := newNeutronClient(opts, reach, tp)
	if err != nil {
		return err
	}

	// /healthz fails when the leader could not renew its lease in time
	// (the process is stuck: restart it); /readyz as readiness says.
	watchdog := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	ready := readiness{auth: authErr}
	var auth *serving.DelegatedAuth
	var metricsTLS *tls.Config
	if opts.metricsSecure {
		if auth, err = serving.NewDelegatedAuth(kubeClient); err != nil {
			return err
		}
		if metricsTLS, err = opts.metricsTLS(ctx); err != nil {
			return err
		}
	}
	if err := serve(ctx, opts.probeBindAddress, opts.metricsBindAddress, opts.profiling, auth, metricsTLS,
		[]healthz.HealthChecker{healthz.PingHealthz, watchdog}, ready.checks()); err != nil {
		return err
	}

	// Every write asks the fence first: a leader frozen past its lease
	// must not act on its stale cache when it resumes (pkg/leader). The
	// inventory asks it before each write to Neutron; the clients the work
	// writes to the API server with carry it in their transport. Only the
	// Lease's own client goes without. (Without leader election the fence
	// is nil, and refuses nothing.) The work's requests made within a sync
	// are spans of it (pkg/tracing).
	var fence *leader.Fence
	if opts.leaderElection.LeaderElect {
		fence = &leader.Fence{}
	}
	traced := rest.CopyConfig(cfg)
	traced.Wrap(func(rt http.RoundTripper) http.RoundTripper { return tracing.Transport(tp, rt) })
	workKube, workNetworks, err := fencedClients(traced, fence.Check)
	if err != nil {
		return err
	}
	work := func(ctx context.Context) error {
		kubeClient, networkClient := workKube, workNetworks
		informerFactory := informers.NewSharedInformerFactoryWithOptions(networkClient, opts.resyncPeriod,
			informers.WithNamespace(opts.namespace))
		networks := informerFactory.Samplecrd().V1().Networks()
		// The ConfigMaps Networks publish into are watched where Networks
		// are, and only those with the controller's mark: a tenant's
		// ConfigMaps are not even sent (pkg/configmap).
		ownedFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, opts.resyncPeriod,
			kubeinformers.WithNamespace(opts.namespace), kubeinformers.WithTweakListOptions(configmap.SelectMarked))
		// TenantPolicies are cluster-scoped, and namespaces' labels select
		// them: both are watched cluster-wide, whatever --namespace says.
		clusterFactory := informers.NewSharedInformerFactory(networkClient, opts.resyncPeriod)
		kubeFactory := kubeinformers.NewSharedInformerFactory(kubeClient, opts.resyncPeriod)
		// The garbage collector is a controller of its own, with Events
		// of its own, as kube-controller-manager's controllers each have.
		gcEvents := events.NewBroadcaster(ctx, kubeClient, opts.eventLimit, metrics.EventsDropped.Inc)
		defer gcEvents.Shutdown()
		set, err := tenancy.Build(tenancy.Parts{
			Networks: networks, TenantPolicies: clusterFactory.Samplecrd().V1().TenantPolicies(), Namespaces: kubeFactory.Core().V1().Namespaces(),
			Secrets: kubeClient.CoreV1(), NetworkClient: networkClient, Mark: mark,
			Own: neutronClient, OwnCloud: ownCloud, Reach: reach, Connect: opts.tenantSession(tp), Fence: fence.Check,
			// Copies for deletions, in the controller's own namespace.
			Keeper:   tenancy.SecretKeeper{Secrets: kubeClient.CoreV1(), Namespace: opts.leaderElection.ResourceNamespace},
			Recorder: gcEvents.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "network-controller-garbage-collector"}),
		}, opts.tenancyConfig())
		if err != nil {
			return err
		}
		controller, err := NewController(ctx, kubeClient, networkClient, networks, ownedFactory.Core().V1().ConfigMaps(), projectsOf{set},
			Options{MaxRetryDelay: opts.maxRetryDelay, EventLimit: opts.eventLimit, Tracer: tp.Tracer(controllerAgentName)})
		if err != nil {
			return err
		}
		ready.set(false, &term{synced: controller.networksSynced, neutron: func() error { return set.Own().Inventory.Health().Err() }})
		// Start runs each informer's ListAndWatch in its own goroutine; Run
		// waits for their caches before it starts workers.
		for _, f := range []interface {
			Start(<-chan struct{})
			Shutdown()
		}{informerFactory, ownedFactory, clusterFactory, kubeFactory} {
			f.Start(ctx.Done())
			defer f.Shutdown()
		}
		return controller.Run(ctx, opts.workers)
	}
	if !opts.leaderElection.LeaderElect {
		return work(ctx)
	}
	return leader.Run(ctx, kubeClient, opts.leaderElection, watchdog, fence, work, func() { ready.set(true, nil) })
}

// fencedClients are clients of cfg that send no write while check (the
// fence) refuses (leader.WrapTransport), each refusal counted in
// network_controller_writes_fenced_total{to="apiserver"}.
func fencedClients(cfg *rest.Config, check func() error) (kubernetes.Interface, clientset.Interface, error) {
	fenced := rest.CopyConfig(cfg)
	fenced.Wrap(leader.WrapTransport(check, metrics.WritesFenced.WithLabelValues(metrics.FencedAPIServer).Inc))
	kube, err := kubernetes.NewForConfig(fenced)
	if err != nil {
		return nil, nil, fmt.Errorf("building the fenced kubernetes clientset: %w", err)
	}
	networks, err := clientset.NewForConfig(fenced)
	if err != nil {
		return nil, nil, fmt.Errorf("building the fenced network clientset: %w", err)
	}
	return kube, networks, nil
}

// projectsOf is a tenancy.Set as the controller asks for it: For's
// reconciler as the controller's Reconciler.
type projectsOf struct{ *tenancy.Set }

func (p projectsOf) For(ctx context.Context, network *samplecrdv1.Network) (Reconciler, error) {
	return p.Set.For(ctx, network)
}

// tenancyConfig is what the flags say of the projects (pkg/tenancy).
func (o options) tenancyConfig() tenancy.Config {
	return tenancy.Config{
		Namespace: o.namespace,
		Defaults: tenancy.Defaults{AdoptionNamespaces: o.adoptionNamespaces, ExternalNetworks: o.externalNetworks,
			ControllerNamespace: o.leaderElection.ResourceNamespace},
		NeutronResyncPeriod: o.neutronResyncPeriod, NeutronTimeout: o.neutronTimeout,
		OrphanCollection: o.orphanCollection, OrphanGracePeriod: o.orphanGracePeriod, MaxOrphansPerList: o.maxOrphansPerList,
		MaxCredentials: o.maxCredentials, MaxCredentialsPerNamespace: o.maxCredentialsPerNamespace,
		CloudReload: o.cloudReload, MaxRetryDelay: o.maxRetryDelay,
	}
}

// tenantSession connects a namespace's cloud: a Session of its own, read
// once, traced with tp.
func (o options) tenantSession(tp trace.TracerProvider) func(*neutron.Cloud) neutron.Interface {
	return func(cloud *neutron.Cloud) neutron.Interface {
		return newSession(cloud, func() (*neutron.Cloud, error) { return cloud, nil }, "a namespace's", o, &neutron.Reachability{}, tp)
	}
}

// clusterMark is the ownership mark of this cluster: named by
// clusterName, else by the UID of its kube-system namespace, read live
// from the API server. Either way the mark records that UID in the name of
// every resource (see pkg/neutron/ownership.go).
func clusterMark(ctx context.Context, client kubernetes.Interface, clusterName string) (neutron.Mark, error) {
	ns, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return neutron.Mark{}, fmt.Errorf("reading the kube-system namespace, whose UID identifies this cluster in Neutron: %w", err)
	}
	return neutron.NewMark(clusterName, ns.UID)
}

// newNeutronClient returns the controller's Neutron client, its cloud
// and what readiness asks about authentication: for --neutron-endpoint a
// noauth client and no cloud, for a cloud a Session that authenticates
// lazily and follows changes of clouds.yaml.
func newNeutronClient(opts options, reach *neutron.Reachability, tp trace.TracerProvider) (neutron.Interface, *neutron.Cloud, func() error, error) {
	if opts.neutronEndpoint != "" {
		traced := &http.Client{Timeout: opts.neutronTimeout, Transport: tracing.OpenStack(tp, http.DefaultTransport)}
		client, err := neutron.NewNoAuthServiceClient(opts.neutronEndpoint, throttled(neutron.Instrument(traced, reach), opts))
		if err != nil {
			return nil, nil, nil, err
		}
		return neutron.NewGophercloud(client, neutron.Place{}), nil, func() error { return nil }, nil
	}
	read := func() (*neutron.Cloud, error) { return neutron.ReadCloud(opts.osCloud) }
	cloud, err := read()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connecting to Neutron (set --os-cloud, or --neutron-endpoint for a noauth server): %w", err)
	}
	session := newSession(cloud, read, "the controller's", opts, reach, tp)
	return session, cloud, session.Err, nil
}

// newSession returns a Session on cloud, read anew with read, whose
// requests are instrumented and throttled (--neutron-qps: each cloud has
// its own budget, as Neutron's rate limits are per project); whose is
// whose cloud it is, for the log.
func newSession(cloud *neutron.Cloud, read func() (*neutron.Cloud, error), whose string, opts options, reach *neutron.Reachability, tp trace.TracerProvider) *neutron.Session {
	return neutron.NewSession(cloud, neutron.SessionOptions{
		Read: read,
		Connect: func(ctx context.Context, cloud *neutron.Cloud) (*gophercloud.ServiceClient, neutron.Place, error) {
			client, place, err := cloud.Connect(ctx, opts.neutronTimeout)
			if err != nil {
				return nil, neutron.Place{}, err
			}
			// Connect's client already has the --neutron-timeout; the copies keep it.
			client.HTTPClient.Transport = tracing.OpenStack(tp, cmp.Or[http.RoundTripper](client.HTTPClient.Transport, http.DefaultTransport))
			client.HTTPClient = *throttled(neutron.Instrument(&client.HTTPClient, reach), opts)
			return client, place, nil
		},
		OnConnectFailure: func(err error) {
			metrics.NeutronAuthFailures.Inc()
			klog.Background().Error(err, "Cannot authenticate to the cloud; its Networks wait until it succeeds", "whose", whose)
		},
		ReloadInterval: opts.cloudReload,
		MaxRetryDelay:  opts.maxRetryDelay,
	})
}

// throttled puts c's requests behind the --neutron-qps limit and Neutron's
// own requests to slow down. The throttle is outside the instrumentation,
// so that every attempt, a refused one too, is counted.
func throttled(c *http.Client, opts options) *http.Client {
	t := neutron.NewThrottle(c.Transport, float32(opts.neutronQPS), opts.neutronBurst)
	t.OnThrottled = func(code int) { metrics.NeutronThrottled.WithLabelValues(strconv.Itoa(code)).Inc() }
	out := *c
	out.Transport = t
	return &out
}

// readiness is what /readyz reports: a replica that leads is ready once its
// informer cache has synced and Neutron answers; a standby replica is ready
// as it is (it is healthy and waiting to take over).
type readiness struct {
	// auth returns why the controller cannot authenticate to the cloud.
	auth func() error

	mu      sync.Mutex
	standby bool
	term    *term
}

// term is what readiness asks of a leader's term: whether its Network
// informer has synced, and why Neutron does not answer its own project.
type term struct {
	synced  cache.InformerSynced
	neutron func() error
}

func (r *readiness) set(standby bool, t *term) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.standby, r.term = standby, t
}

func (r *readiness) checks() []healthz.HealthChecker {
	// leaderCheck runs check on the working controller; a standby passes.
	leaderCheck := func(name string, check func(t *term) error) healthz.HealthChecker {
		return healthz.NamedCheck(name, func(*http.Request) error {
			r.mu.Lock()
			standby, t := r.standby, r.term
			r.mu.Unlock()
			switch {
			case standby:
				return nil
			case t == nil:
				return errors.New("the controller is starting")
			}
			return check(t)
		})
	}
	return []healthz.HealthChecker{
		withheld(healthz.NamedCheck("cloud-auth", func(*http.Request) error { return r.auth() })),
		leaderCheck("informer-sync", func(t *term) error {
			if !t.synced() {
				return errors.New("the Network informer's cache has not synced yet")
			}
			return nil
		}),
		withheld(leaderCheck("neutron", func(t *term) error { return t.neutron() })),
	}
}

// withheld is check without its reason: a failing check's error may carry
// the cloud's own answers (Keystone's error text, an endpoint), and anyone
// who reaches the probes' port, which the kubelet calls without
// credentials, may read /readyz/<check>. The reason goes to the log.
func withheld(check healthz.HealthChecker) healthz.HealthChecker {
	return healthz.NamedCheck(check.Name(), func(r *http.Request) error {
		err := check.Check(r)
		if err == nil {
			return nil
		}
		klog.FromContext(r.Context()).V(2).Info("Readiness check failing", "check", check.Name(), "err", err)
		return errors.New("failing; the reason is in the controller's log")
	})
}

// metricsTLS is the TLS configuration of the secure /metrics: the
// certificate of --tls-cert-file, followed as its Secret is renewed, or
// without it one made now and signed by itself, which no scraper can
// verify (out of cluster, where nothing else is at hand).
func (o *options) metricsTLS(ctx context.Context) (*tls.Config, error) {
	if o.certFile == "" {
		return serving.SelfSignedTLS(controllerAgentName)
	}
	// The expiry of the one served is what
	// NetworkControllerCertificateExpiring reads.
	return serving.FileTLS(ctx, o.certFile, o.keyFile, func(cert *x509.Certificate) {
		metrics.MetricsCertificateExpiration.Set(float64(cert.NotAfter.Unix()))
	})
}

// serve serves /healthz and /readyz on probeAddr and /metrics on
// metricsAddr (the same server when they are equal; "0" turns one off)
// until ctx ends. With auth, /metrics is served over HTTPS with
// metricsTLS to the callers auth lets through.
func serve(ctx context.Context, probeAddr, metricsAddr string, profiling bool, auth *serving.DelegatedAuth, metricsTLS *tls.Config, health, ready []healthz.HealthChecker) error {
	muxes := map[string]*mux.PathRecorderMux{}
	muxFor := func(addr string) *mux.PathRecorderMux {
		if muxes[addr] == nil {
			muxes[addr] = serving.NewMux(controllerAgentName)
		}
		return muxes[addr]
	}
	if probeAddr != "0" {
		serving.InstallProbes(muxFor(probeAddr), health, ready)
	}
	if metricsAddr != "0" {
		serving.InstallMetrics(muxFor(metricsAddr), profiling, auth)
	}
	logger := klog.FromContext(ctx)
	for addr, m := range muxes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
		if auth != nil && addr == metricsAddr {
			srv.TLSConfig = metricsTLS
		}
		go func() {
			if err := serving.Run(ctx, srv, ln); err != nil {
				logger.Error(err, "HTTP server failed", "address", addr)
			}
		}()
		logger.Info("Serving", "address", ln.Addr().String(), "tls", srv.TLSConfig != nil)
	}
	return nil
}
