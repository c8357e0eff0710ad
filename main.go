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
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
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
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Only required if out-of-cluster.")
	fs.StringVar(&o.masterURL, "master", "", "The address of the Kubernetes API server. Overrides any value in kubeconfig. Only required if out-of-cluster.")
	fs.IntVar(&o.workers, "workers", 8, "Number of Networks synced in parallel. Neutron answers about 30% more creates per second with 8 requests in flight than with 1.")
	fs.DurationVar(&o.resyncPeriod, "resync-period", 5*time.Minute, "How often every Network is re-checked against the cached Neutron state even when nothing changed. Costs no API server writes and no Neutron requests when in sync.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 200, "Client-side rate limit of requests to the API server, per second.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 400, "Burst allowed above --kube-api-qps.")

	fs.StringVar(&o.namespace, "namespace", "", "Only manage the Networks of this namespace (default: all namespaces).")
	fs.StringVar(&o.neutronEndpoint, "neutron-endpoint", "", "URL of a neutron-server that runs with auth_strategy = noauth (the local stack's), e.g. http://127.0.0.1:9696/. When empty, the cloud is read from clouds.yaml and OS_* variables (see --os-cloud).")
	fs.StringVar(&o.osCloud, "os-cloud", os.Getenv("OS_CLOUD"), "Name of the cloud in clouds.yaml to use for Neutron (default $OS_CLOUD).")
	fs.StringVar(&o.clusterName, "cluster-name", "kubernetes", "Name of this Kubernetes cluster, recorded in the tags of every Neutron resource the controller makes. Clusters sharing a Neutron project must use different names.")
	fs.DurationVar(&o.neutronResyncPeriod, "neutron-resync-period", 5*time.Minute, "How often the controller lists its Neutron networks and subnets anew, which is how changes made outside it are noticed.")
	fs.DurationVar(&o.neutronTimeout, "neutron-timeout", 30*time.Second, "Timeout of one Neutron request.")
}

func (o *options) validate() error {
	if o.workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d", o.workers)
	}
	if o.resyncPeriod <= 0 || o.neutronResyncPeriod <= 0 {
		return fmt.Errorf("--resync-period and --neutron-resync-period must be positive")
	}
	if o.clusterName == "" {
		return fmt.Errorf("--cluster-name must not be empty")
	}
	return nil
}

func main() {
	klog.InitFlags(nil)
	var opts options
	opts.addFlags(flag.CommandLine)
	flag.Parse()
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
	neutronClient, err := newNeutronClient(ctx, opts)
	if err != nil {
		return err
	}

	informerFactory := informers.NewSharedInformerFactoryWithOptions(networkClient, opts.resyncPeriod,
		informers.WithNamespace(opts.namespace))
	controller, err := NewController(ctx, kubeClient, networkClient,
		informerFactory.Samplecrd().V1().Networks(),
		neutron.NewGophercloud(neutronClient, opts.clusterName),
		Options{
			NeutronResyncPeriod: opts.neutronResyncPeriod,
			Namespace:           opts.namespace,
			// A create and its tag request each take at most one timeout.
			UntaggedGracePeriod: 2 * opts.neutronTimeout,
		})
	if err != nil {
		return err
	}

	// Start runs each informer's ListAndWatch in its own goroutine; Run
	// waits for their caches before it starts workers.
	informerFactory.Start(ctx.Done())
	defer informerFactory.Shutdown()
	return controller.Run(ctx, opts.workers)
}

func newNeutronClient(ctx context.Context, opts options) (*gophercloud.ServiceClient, error) {
	if opts.neutronEndpoint != "" {
		return neutron.NewNoAuthServiceClient(opts.neutronEndpoint, &http.Client{Timeout: opts.neutronTimeout})
	}
	client, err := neutron.NewCloudServiceClient(ctx, opts.osCloud)
	if err != nil {
		return nil, fmt.Errorf("connecting to Neutron (set --neutron-endpoint for a noauth server, or --os-cloud): %w", err)
	}
	client.HTTPClient.Timeout = opts.neutronTimeout
	return client, nil
}
