// Command network-controller keeps OpenStack Neutron equal to the Network
// objects (samplecrd.k8s.io/v1) of a Kubernetes cluster: for each Network it
// creates (or adopts) a Neutron network and subnet, keeps their options
// equal to the spec, attaches the subnet to the router the spec names, and
// deletes (or releases) them when the Network goes, reporting in status and
// Events. Each Network lives in the controller's OpenStack project or in
// one its namespace names, as the administrator's TenantPolicies allow.
//
// It runs out of cluster with --kubeconfig, or in cluster with the Pod's
// ServiceAccount; with leader election, one replica works and the others
// stand by. `main` runs the command (pkg/controller/options, cobra, as
// Kubernetes components do), whose `run` builds the clients and starts the
// informers and the controller of controller.go once it leads.
package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	// Root CAs compiled in, used only where the system has none: the image
	// is FROM scratch, and Keystone is reached over HTTPS.
	_ "golang.org/x/crypto/x509roots/fallback"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/component/events"
	"github.com/samplecrd/network-controller/pkg/component/leader"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/component/serving"
	"github.com/samplecrd/network-controller/pkg/component/tracing"
	"github.com/samplecrd/network-controller/pkg/controller/capacity"
	"github.com/samplecrd/network-controller/pkg/controller/cloud"
	"github.com/samplecrd/network-controller/pkg/controller/configmap"
	"github.com/samplecrd/network-controller/pkg/controller/conversion"
	"github.com/samplecrd/network-controller/pkg/controller/importer"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/options"
	"github.com/samplecrd/network-controller/pkg/controller/plan"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
	informersv2 "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v2"
)

// main runs the command until SIGTERM (the kubelet stopping the Pod) or
// SIGINT: the informers stop, the workers finish their current item, and
// Run returns.
func main() { command.Main(newCommand(run)) }

// newCommand is `network-controller`: the controller, run by run, and the
// subcommands import, plan (on the controller's own sync), conversion-webhook
// (the webhook alone) and version.
func newCommand(run func(context.Context, *options.Options) error) *cobra.Command {
	return options.NewCommand(run, importer.NewCommand(), plan.NewCommand(planSync), conversion.NewCommand(), command.NewVersionCommand())
}

// run is the controller: the clients, the endpoints, and once this
// process leads (or at once without leader election) the informers and the
// controller of controller.go, until ctx ends.
func run(ctx context.Context, opts *options.Options) error {
	metrics.RegisterController()
	cfg, err := clientcmd.BuildConfigFromFlags(opts.Master, opts.Kubeconfig)
	if err != nil {
		return fmt.Errorf("building the API server client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(opts.KubeAPIQPS), opts.KubeAPIBurst
	cfg.UserAgent = controllerAgentName

	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the kubernetes clientset: %w", err)
	}
	mark, err := cloud.ClusterMark(ctx, kubeClient, opts.ClusterName)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Ownership mark", "description", mark.Description(), "clusterUID", mark.ClusterUID())
	reach := &neutron.Reachability{}
	// The cloud is read before anything is served: a clouds.yaml that
	// cannot be read is a configuration error, reported at once. Whether
	// its credentials work is found out, and reported on the Networks,
	// once the controller runs.
	tp, stopTracing, err := tracing.Start(ctx, opts.TracingConfigFile, controllerAgentName)
	if err != nil {
		return err
	}
	defer stopTracing()
	neutronClient, ownCloud, authErr, err := opts.Cloud.Connect(reach, tp)
	if err != nil {
		return err
	}

	// /healthz fails when the leader could not renew its lease in time
	// (the process is stuck: restart it); /readyz as readiness says.
	watchdog := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	ready := &serving.Readiness{Auth: authErr}
	endpoints, err := opts.Endpoints(ctx, controllerAgentName, kubeClient, []healthz.HealthChecker{healthz.PingHealthz, watchdog}, ready.Checks())
	if err != nil {
		return err
	}
	if err := endpoints.Serve(ctx); err != nil {
		return err
	}
	// Every replica serves the CRD's conversion webhook from its start,
	// leader or not: no client reads a Network in v1 without it (ch. 14).
	if _, err := opts.Conversion.Serve(ctx, cfg); err != nil {
		return err
	}

	// Every write asks the fence first: a leader frozen past its lease
	// must not act on its stale cache when it resumes (pkg/component/leader). The
	// inventory asks it before each write to Neutron; the clients the work
	// writes to the API server with carry it in their transport; only the
	// Lease's own client goes without. Without leader election the fence
	// is nil, and refuses nothing. A sync's requests are spans of it.
	var fence *leader.Fence
	if opts.LeaderElection.LeaderElect {
		fence = &leader.Fence{}
	}
	traced := rest.CopyConfig(cfg)
	traced.Wrap(func(rt http.RoundTripper) http.RoundTripper { return tracing.Transport(tp, rt) })
	workKube, workNetworks, err := leader.FencedClients(traced, fence.Check, metrics.WritesFenced.WithLabelValues(metrics.FencedAPIServer).Inc)
	if err != nil {
		return err
	}
	work := func(ctx context.Context) error {
		kubeClient, networkClient := workKube, workNetworks
		informerFactory := informers.NewSharedInformerFactoryWithOptions(networkClient, opts.ResyncPeriod,
			informers.WithNamespace(opts.Namespace))
		networks := informerFactory.Samplecrd().V2().Networks()
		// The ConfigMaps Networks publish into are watched where Networks
		// are, and only those with the controller's mark: a tenant's
		// ConfigMaps are not even sent (pkg/controller/configmap).
		ownedFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, opts.ResyncPeriod,
			kubeinformers.WithNamespace(opts.Namespace), kubeinformers.WithTweakListOptions(configmap.SelectMarked))
		// TenantPolicies are cluster-scoped, and namespaces' labels select
		// them: both are watched cluster-wide, whatever --namespace says.
		clusterFactory := informers.NewSharedInformerFactory(networkClient, opts.ResyncPeriod)
		kubeFactory := kubeinformers.NewSharedInformerFactory(kubeClient, opts.ResyncPeriod)
		// The garbage collector is a controller of its own, with Events
		// of its own, as kube-controller-manager's controllers each have.
		gcEvents := events.NewBroadcaster(ctx, kubeClient, opts.EventLimit, metrics.EventsDropped.Inc)
		defer gcEvents.Shutdown()
		set, err := tenancy.Build(tenancy.Parts{
			Networks: networks, TenantPolicies: clusterFactory.Samplecrd().V1().TenantPolicies(), Namespaces: kubeFactory.Core().V1().Namespaces(),
			Secrets: kubeClient.CoreV1(), NetworkClient: networkClient, Mark: mark,
			Own: neutronClient, OwnCloud: ownCloud, Reach: reach, Connect: opts.Cloud.TenantSession(tp), Fence: fence.Check,
			// Copies for deletions, in the controller's own namespace.
			Keeper:   tenancy.SecretKeeper{Secrets: kubeClient.CoreV1(), Namespace: opts.LeaderElection.ResourceNamespace},
			Recorder: gcEvents.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "network-controller-garbage-collector"}),
		}, opts.TenancyConfig())
		if err != nil {
			return err
		}
		if err := startPolicyStatus(ctx, opts, clusterFactory, kubeFactory, networks, networkClient); err != nil {
			return err
		}
		controller, err := NewController(ctx, kubeClient, networkClient, networks, ownedFactory.Core().V1().ConfigMaps(), projectsOf{set},
			Options{MaxRetryDelay: opts.MaxRetryDelay, EventLimit: opts.EventLimit, Tracer: tp.Tracer(controllerAgentName)})
		if err != nil {
			return err
		}
		ready.Set(false, &serving.Term{Synced: controller.networksSynced, Neutron: func() error { return set.Own().Inventory.Health().Err() }})
		// Start runs each informer's ListAndWatch in its own goroutine; Run
		// waits for their caches before it starts workers.
		for _, f := range []interface {
			Start(<-chan struct{})
			Shutdown()
		}{informerFactory, ownedFactory, clusterFactory, kubeFactory} {
			f.Start(ctx.Done())
			defer f.Shutdown()
		}
		return controller.Run(ctx, opts.Workers)
	}
	if !opts.LeaderElection.LeaderElect {
		return work(ctx)
	}
	return leader.Run(ctx, kubeClient, opts.LeaderElection, watchdog, fence, work, func() { ready.Set(true, nil) })
}

// startPolicyStatus starts the controller of each TenantPolicy's status,
// how full its namespaces are (pkg/controller/capacity), where every
// namespace is served: one namespace's controller sees one namespace.
func startPolicyStatus(ctx context.Context, opts *options.Options, cluster informers.SharedInformerFactory,
	kube kubeinformers.SharedInformerFactory, networks informersv2.NetworkInformer, client clientset.Interface) error {
	if opts.Namespace != "" {
		return nil
	}
	w, err := capacity.New(cluster.Samplecrd().V1().TenantPolicies(), kube.Core().V1().Namespaces(), networks, client, opts.TenancyConfig().Defaults)
	if err != nil {
		return err
	}
	go w.Run(ctx)
	return nil
}

// projectsOf is a tenancy.Set as the controller asks for it: For's
// reconciler as the controller's Reconciler.
type projectsOf struct{ *tenancy.Set }

func (p projectsOf) For(ctx context.Context, network *samplecrdv2.Network) (Reconciler, error) {
	return p.Set.For(ctx, network)
}

// planSync is the controller's syncHandler as `plan` runs it (pkg/controller/plan): a
// Controller over the plan's Cluster and projects, Events unrecorded.
func planSync(ctx context.Context, cluster *plan.Cluster, projects *tenancy.Set) (plan.SyncFunc, error) {
	c, err := NewController(ctx, cluster.Kube, cluster.Networks, cluster.NetworkInformer, cluster.ConfigMapInformer, projectsOf{projects}, Options{})
	if err != nil {
		return nil, err
	}
	c.recorder, c.configMaps.Recorder = cluster.Events, cluster.Events
	return func(ctx context.Context, key cache.ObjectName) (bool, error) {
		res := c.syncHandler(ctx, key)
		return res.requeue == reconcile.AddRateLimited, res.err
	}, nil
}
