// Command network-controller keeps OpenStack Neutron equal to the Network
// objects (samplecrd.k8s.io/v1) of a Kubernetes cluster: for each Network it
// creates a Neutron network and subnet, keeps the subnet's gateway equal to
// the spec, and deletes both when the Network goes.
//
// It runs out of cluster with --kubeconfig, or in cluster with the Pod's
// ServiceAccount when neither --kubeconfig nor --master is given.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/pflag"
	// Root CAs compiled in, used only where the system has none: the image
	// is FROM scratch, and Keystone is reached over HTTPS.
	_ "golang.org/x/crypto/x509roots/fallback"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/flowcontrol"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"
	"k8s.io/klog/v2"

	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
	"github.com/samplecrd/network-controller/pkg/incluster"
	"github.com/samplecrd/network-controller/pkg/neutron"
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
	clusterName         string
	neutronResyncPeriod time.Duration
	neutronTimeout      time.Duration
	neutronQPS          float64
	neutronBurst        int
	maxRetryDelay       time.Duration

	leaderElection     componentbaseconfig.LeaderElectionConfiguration
	probeBindAddress   string
	metricsBindAddress string
	profiling          bool
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Only required if out-of-cluster.")
	fs.StringVar(&o.masterURL, "master", "", "The address of the Kubernetes API server. Overrides any value in kubeconfig. Only required if out-of-cluster.")
	fs.IntVar(&o.workers, "workers", 8, "Number of Networks synced in parallel, and so the most Neutron requests in flight.")
	fs.DurationVar(&o.resyncPeriod, "resync-period", 5*time.Minute, "How often every Network is re-checked against the cached Neutron state even when nothing changed. Costs no API server writes and no Neutron requests when in sync.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 200, "Client-side rate limit of requests to the API server, per second.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 400, "Burst allowed above --kube-api-qps.")

	fs.StringVar(&o.namespace, "namespace", "", "Only manage the Networks of this namespace (default: all namespaces).")
	fs.StringVar(&o.neutronEndpoint, "neutron-endpoint", "", "URL of a neutron-server that runs with auth_strategy = noauth, e.g. http://127.0.0.1:9696/ (tests, and the operator's view in the local stack). When empty, the normal case, the controller authenticates to Keystone with the cloud of --os-cloud.")
	fs.StringVar(&o.osCloud, "os-cloud", "", "Name of the cloud in clouds.yaml ($OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/, /etc/openstack/) to authenticate to Keystone with; empty means $OS_CLOUD. Password and application-credential clouds both work; tokens are renewed when they expire.")
	fs.StringVar(&o.clusterName, "cluster-name", "kubernetes", "Name of this Kubernetes cluster: a DNS-1123 label, written into the description of every Neutron resource the controller makes (its ownership mark). The controller touches only resources with its own cluster's mark, so clusters sharing a Neutron project must use different names.")
	fs.DurationVar(&o.neutronResyncPeriod, "neutron-resync-period", 5*time.Minute, "How often the controller lists its Neutron networks and subnets anew, which is how changes made outside it are noticed.")
	fs.DurationVar(&o.neutronTimeout, "neutron-timeout", 30*time.Second, "Timeout of one Neutron request.")
	fs.Float64Var(&o.neutronQPS, "neutron-qps", 20, "Client-side rate limit of requests to Neutron, per second. Beside it, a 429 (or a 503 with Retry-After) from Neutron pauses all requests for the time it names, and the refused request is sent again.")
	fs.IntVar(&o.neutronBurst, "neutron-burst", 40, "Burst allowed above --neutron-qps.")
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
	fs.StringVar(&o.metricsBindAddress, "metrics-bind-address", ":8080", "Address of /metrics (Prometheus); \"0\" turns it off. May equal --health-probe-bind-address.")
}

func (o *options) validate() error {
	if o.neutronQPS <= 0 || o.neutronBurst < 1 {
		return fmt.Errorf("--neutron-qps must be above 0 and --neutron-burst at least 1, got %g and %d", o.neutronQPS, o.neutronBurst)
	}
	if o.workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d", o.workers)
	}
	if o.resyncPeriod <= 0 || o.neutronResyncPeriod <= 0 || o.maxRetryDelay <= 0 {
		return fmt.Errorf("--resync-period, --neutron-resync-period and --max-retry-delay must be positive")
	}
	if _, err := neutron.NewMark(o.clusterName); err != nil {
		return fmt.Errorf("--cluster-name: %w", err)
	}
	return validateLeaderElection(o.leaderElection)
}

func main() {
	var opts options
	opts.addFlags(pflag.CommandLine)
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	pflag.CommandLine.AddGoFlagSet(klogFlags)
	pflag.Parse()
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

func run(ctx context.Context, opts options) error {
	registerMetrics()
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
	networkClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the network clientset: %w", err)
	}
	mark, err := neutron.NewMark(opts.clusterName)
	if err != nil {
		return err
	}
	reach := &reachability{}
	// The cloud is read before anything is served: a clouds.yaml that
	// cannot be read is a configuration error, reported at once.
	var cloud *neutron.Cloud
	if opts.neutronEndpoint == "" {
		if cloud, err = neutron.ReadCloud(opts.osCloud); err != nil {
			return fmt.Errorf("connecting to Neutron (set --os-cloud, or --neutron-endpoint for a noauth server): %w", err)
		}
	}

	// /healthz fails when the leader could not renew its lease in time
	// (the process is stuck: restart it); /readyz as readiness says.
	watchdog := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	ready := readiness{reach: reach}
	if err := serve(ctx, opts.probeBindAddress, opts.metricsBindAddress, opts.profiling,
		[]healthz.HealthChecker{healthz.PingHealthz, watchdog}, ready.checks()); err != nil {
		return err
	}
	neutronClient, err := newNeutronClient(ctx, opts, cloud, reach, &ready.auth)
	if err != nil {
		return err
	}

	work := func(ctx context.Context) error {
		informerFactory := informers.NewSharedInformerFactoryWithOptions(networkClient, opts.resyncPeriod,
			informers.WithNamespace(opts.namespace))
		controller, err := NewController(ctx, kubeClient, networkClient,
			informerFactory.Samplecrd().V1().Networks(),
			neutron.NewGophercloud(neutronClient), mark,
			Options{
				NeutronResyncPeriod: opts.neutronResyncPeriod,
				MaxRetryDelay:       opts.maxRetryDelay,
				Namespace:           opts.namespace,
				// A request whose answer was lost to our own timeout may
				// still be under way in Neutron; two timeouts cover it.
				LateCompletionGrace: 2 * opts.neutronTimeout,
			})
		if err != nil {
			return err
		}
		ready.set(false, controller)
		// Start runs each informer's ListAndWatch in its own goroutine; Run
		// waits for their caches before it starts workers.
		informerFactory.Start(ctx.Done())
		defer informerFactory.Shutdown()
		return controller.Run(ctx, opts.workers)
	}
	if !opts.leaderElection.LeaderElect {
		return work(ctx)
	}
	return runLeaderElected(ctx, kubeClient, opts.leaderElection, watchdog, work, func() { ready.set(true, nil) })
}

func newNeutronClient(ctx context.Context, opts options, cloud *neutron.Cloud, reach *reachability, auth *authState) (*gophercloud.ServiceClient, error) {
	if cloud == nil {
		return neutron.NewNoAuthServiceClient(opts.neutronEndpoint, throttled(instrument(&http.Client{Timeout: opts.neutronTimeout}, reach), opts))
	}
	client, err := connect(ctx, cloud, opts, auth)
	if err != nil {
		return nil, err
	}
	// Connect's client already has the --neutron-timeout; the copies keep it.
	client.HTTPClient = *throttled(instrument(&client.HTTPClient, reach), opts)
	return client, nil
}

// connect authenticates to the cloud until it succeeds or ctx ends. Keystone
// unreachable, or refusing the credentials, is not fatal: a Secret may be
// fixed, a Keystone may come back. Meanwhile /readyz fails with the reason,
// and the attempts back off up to --max-retry-delay, so wrong credentials
// cost Keystone one request per cap, not a loop.
func connect(ctx context.Context, cloud *neutron.Cloud, opts options, auth *authState) (*gophercloud.ServiceClient, error) {
	logger := klog.FromContext(ctx)
	backoff := flowcontrol.NewBackOff(time.Second, opts.maxRetryDelay)
	for {
		client, err := cloud.Connect(ctx, opts.neutronTimeout)
		auth.set(err)
		if err == nil {
			return client, nil
		}
		neutronAuthFailures.Inc()
		backoff.Next("auth", backoff.Clock.Now())
		delay := backoff.Get("auth")
		logger.Error(err, "Cannot authenticate to the cloud; Networks wait until it succeeds", "cloud", opts.osCloud, "retryIn", delay)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// throttled puts c's requests behind the --neutron-qps limit and Neutron's
// own requests to slow down. The throttle is outside the instrumentation,
// so that every attempt, a refused one too, is counted.
func throttled(c *http.Client, opts options) *http.Client {
	t := neutron.NewThrottle(c.Transport, float32(opts.neutronQPS), opts.neutronBurst)
	t.OnThrottled = func(code int) { neutronThrottled.WithLabelValues(strconv.Itoa(code)).Inc() }
	out := *c
	out.Transport = t
	return &out
}
