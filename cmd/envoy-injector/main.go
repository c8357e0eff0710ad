// Command envoy-injector is the mutating admission webhook that merges the
// Envoy sidecar of the ConfigMap envoy-initializer into every Pod created
// with the annotation initializer.kubernetes.io/envoy: "true" — the
// Initializer of the design documents, as Kubernetes does it today.
//
// It serves HTTPS on --bind-address: POST /mutate (AdmissionReview v1),
// GET /healthz and /readyz (ready once the ConfigMap informer has synced),
// and GET /metrics.
// It is a cobra command (pkg/component/command), whose subcommand
// `envoy-injector inject -f FILE` does the same injection offline, on
// manifests (inject.go); `envoy-injector check -f POD.yaml` says what it
// would decide for each Pod, and why (check.go).
package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	_ "k8s.io/component-base/logs/json/register"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"

	"github.com/spf13/cobra"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/component/serving"
	"github.com/samplecrd/network-controller/pkg/injector"
)

// options are the webhook's command line.
type options struct {
	kubeconfig, masterURL string
	bindAddress           string
	certFile, keyFile     string
	configMapNamespace    string
	configMapName         string
	maxConcurrent         int
	memoryBudget          string
	metricsSecure         bool
	logs                  *command.LogOptions
}

// flags binds the webhook's flags, in the sections of its --help.
func (o *options) flags() *cliflag.NamedFlagSets {
	fss := &cliflag.NamedFlagSets{}
	fs := fss.FlagSet("kubernetes")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Only required if out-of-cluster.")
	fs.StringVar(&o.masterURL, "master", "", "The address of the Kubernetes API server. Overrides any value in kubeconfig.")
	fs.StringVar(&o.configMapNamespace, "configmap-namespace", "", "Namespace of the template ConfigMap; empty means the Pod's namespace, or out of cluster the kubeconfig context's (else \"default\").")
	fs.StringVar(&o.configMapName, "configmap-name", "envoy-initializer", "Name of the template ConfigMap; its key \"config\" holds containers: and volumes:.")
	fs = fss.FlagSet("serving")
	fs.StringVar(&o.bindAddress, "bind-address", ":8443", "Address of the HTTPS server (/mutate, /healthz, /readyz, /metrics).")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "Serving certificate (PEM), reloaded when it changes.")
	fs.StringVar(&o.keyFile, "tls-private-key-file", "", "Serving certificate's private key (PEM), reloaded when it changes.")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", false, "Serve /metrics only to callers the API server authenticates (TokenReview) and authorizes to get it (SubjectAccessReview); needs the ClusterRole system:auth-delegator. The Deployment turns it on.")
	fs.IntVar(&o.maxConcurrent, "max-concurrent-reviews", 64, "Most admission reviews answered at once; one more waits up to a second for a slot, then gets 503 (counted as envoy_injector_admissions_total{result=\"overloaded\"}).")
	fs.StringVar(&o.memoryBudget, "memory-budget", defaultMemoryBudget, "Most memory (a quantity) all admission requests together hold at once: their connections, their bodies as they arrive and what answering them costs; a request that finds it spent waits up to a second, then gets 503 (counted as overloaded). At least 109Mi: what the largest review (3 MiB) costs, 100Mi, beside the 8Mi set aside for requests whose clients have not yet sent their bodies. The container's memory limit must be this plus about 96Mi for the program itself, and GOMEMLIMIT 48Mi below the limit (the chart computes both).")
	o.logs = command.AddLogFlags(fss.FlagSet("logging"))
	return fss
}

// validate completes o (the ConfigMap's namespace), says what of it
// cannot work, and applies the logging flags.
func (o *options) validate() error {
	if o.configMapNamespace == "" {
		ns, err := command.Namespace(o.kubeconfig)
		if err != nil {
			return err
		}
		o.configMapNamespace = ns
	}
	if o.maxConcurrent < 1 {
		return errors.New("--max-concurrent-reviews must be at least 1")
	}
	if _, err := o.budget(); err != nil {
		return err
	}
	if o.certFile == "" || o.keyFile == "" {
		return errors.New("--tls-cert-file and --tls-private-key-file are required: the API server calls webhooks over HTTPS only")
	}
	return o.logs.Apply()
}

func main() { command.Main(newCommand(run)) }

// newCommand is `envoy-injector`: with no subcommand, the webhook, served
// with run once its flags are valid; `inject`, `check` and `version`
// beside it.
func newCommand(run func(context.Context, options) error) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "envoy-injector",
		Short: "Merge the Envoy sidecar into the Pods that ask for it",
		Long:  "The envoy-injector is the mutating admission webhook that merges the Envoy sidecar of the ConfigMap envoy-initializer into every Pod created with the annotation initializer.kubernetes.io/envoy: \"true\" (docs/sidecar-injection.md).",
		RunE:  command.Serve("envoy-injector", func(ctx context.Context) error { return run(ctx, o) }, o.validate),
	}
	cmd.AddCommand(newInjectCommand(), newCheckCommand(), command.NewVersionCommand())
	command.SetupRoot(cmd, o.flags())
	return cmd
}

// defaultMemoryBudget leaves room for the largest review (100 MiB,
// injector.ReviewCost), the places of the requests that wait for their
// clients (8 MiB) and, beside them, the small reviews the API server
// sends for common Pods; with the program's own 96 MiB, the chart's
// memory limit is 224Mi.
const defaultMemoryBudget = "128Mi"

// budget is --memory-budget in bytes: at least what one review of
// injector.MaxRequestBytes holds while every place of the requests that
// wait for their clients is held (serving.Limits.Least), or the largest
// could never be answered.
func (o *options) budget() (int64, error) {
	q, err := resource.ParseQuantity(o.memoryBudget)
	if err != nil {
		return 0, fmt.Errorf("--memory-budget: %w", err)
	}
	if least := o.limits(0).Least(); q.Value() < least {
		return 0, fmt.Errorf("--memory-budget=%s is below %d bytes, what answering the largest review (%d bytes) holds beside the requests waiting for their clients", o.memoryBudget, least, injector.MaxRequestBytes)
	}
	return q.Value(), nil
}

// limits are what the webhook holds admission reviews to, within budget
// bytes: the flags', and the places of the waiting both webhooks share.
func (o *options) limits(budget int64) serving.Limits {
	return serving.Limits{
		Slots: o.maxConcurrent, MaxBody: injector.MaxRequestBytes, Budget: budget, Cost: injector.ReviewCost,
		PerRequest: serving.RequestOverhead,
		Waiting:    serving.WaitingRequests, PerSource: serving.WaitingPerSource,
		Wait: time.Second,
	}
}

func run(ctx context.Context, o options) error {
	logger := klog.FromContext(ctx)
	cfg, err := clientcmd.BuildConfigFromFlags(o.masterURL, o.kubeconfig)
	if err != nil {
		return fmt.Errorf("building the API server client configuration: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	// One ConfigMap is watched, not every ConfigMap of the namespace.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(o.configMapNamespace),
		informers.WithTweakListOptions(func(opts *metav1.ListOptions) {
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.configMapName).String()
		}))
	configMaps := factory.Core().V1().ConfigMaps()
	source := &injector.ConfigMapSource{Lister: configMaps.Lister(), Namespace: o.configMapNamespace, Name: o.configMapName}
	synced := configMaps.Informer().HasSynced
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	m := serving.NewMux("envoy-injector")
	metrics.RegisterInjector(injector.ResultInjected+"/"+injector.ReasonInjected,
		injector.ResultUnchanged+"/"+injector.ReasonAlreadyInjected, injector.ResultUnchanged+"/"+injector.ReasonHasSidecar,
		injector.ResultSkipped+"/"+injector.ReasonNotRequested, injector.ResultSkipped+"/"+injector.ReasonHostNetwork,
		injector.ResultDenied+"/"+injector.ReasonNoTemplate, injector.ResultDenied+"/"+injector.ReasonTemplateFailed,
		injector.ResultDenied+"/"+injector.ReasonOverrideRefused, injector.ResultDenied+"/"+injector.ReasonClash,
		injector.ResultDenied+"/"+injector.ReasonMergeFailed,
		injector.ResultOverloaded+"/"+injector.ReasonOverloaded)
	// The webhook writes nothing of its own: what it decides reaches the
	// Pod through its answer alone (pkg/injector's Webhook).
	webhook := &injector.Webhook{Template: func() (*injector.Template, error) {
		if !synced() {
			return nil, errors.New("the template ConfigMap has not been read yet")
		}
		return source.Template()
	}, Observe: metrics.ObserveAdmission}
	budget, err := o.budget()
	if err != nil {
		return err
	}
	metrics.MemoryBudget.Set(float64(budget))
	limits := o.limits(budget)
	limits.OnRefuse = func() { metrics.ObserveAdmission(injector.ResultOverloaded, injector.ReasonOverloaded, 0) }
	limits.Held = func(n int64) { metrics.HeldBytes.Set(float64(n)) }
	m.Handle("/mutate", serving.LimitConcurrency(webhook, limits))
	var auth *serving.DelegatedAuth
	if o.metricsSecure {
		if auth, err = serving.NewDelegatedAuth(client); err != nil {
			return err
		}
	}
	serving.InstallMetrics(m, false, auth)
	serving.InstallProbes(m, []healthz.HealthChecker{healthz.PingHealthz}, []healthz.HealthChecker{
		healthz.NamedCheck("configmap-informer", func(*http.Request) error {
			if !synced() {
				return errors.New("the ConfigMap informer has not synced")
			}
			return nil
		})})

	// The certificate is followed as its Secret changes; the expiry of
	// the one served is what EnvoyInjectorCertificateExpiring reads.
	tlsConfig, err := serving.FileTLS(ctx, o.certFile, o.keyFile, func(cert *x509.Certificate) {
		metrics.ServingCertificateExpiration.Set(float64(cert.NotAfter.Unix()))
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.bindAddress)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.bindAddress, err)
	}
	srv := serving.NewWebhookServer(ctx, m, tlsConfig)
	logger.Info("Serving", "address", ln.Addr().String(), "configMap", o.configMapNamespace+"/"+o.configMapName)
	return serving.Run(ctx, srv, ln)
}
