package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/command"
	cloudflags "github.com/samplecrd/network-controller/pkg/controller/cloud"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/options"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

// flags are plan's command line: the controller's cloud, grant and
// cluster-name flags, and the manifests to plan; and the controller's
// sync, which main.go hands NewCommand.
type flags struct {
	newSyncer               NewSyncer
	kubeconfig, clusterName string
	cloud                   cloudflags.Options
	grants                  tenancy.Defaults
	files                   []string
	namespace, output       string
}

// NewCommand is `network-controller plan`: for each Network of the
// manifests, the requests a sync would send to Neutron and the condition
// the controller would then report, as the controller's own sync
// (newSyncer's) finds them. It writes nothing. It exits 1 when a Network
// would be refused, 2 when it cannot plan.
func NewCommand(newSyncer NewSyncer) *cobra.Command {
	f := flags{cloud: cloudflags.NewOptions(), newSyncer: newSyncer}
	fss := &cliflag.NamedFlagSets{}
	fs := fss.FlagSet("plan")
	fs.StringArrayVarP(&f.files, "filename", "f", nil, "A file of Network manifests, as kubectl apply -f takes it, or - for standard input; repeat for several. Other kinds are skipped.")
	fs.StringVarP(&f.namespace, "namespace", "n", metav1.NamespaceDefault, "The namespace of the Networks whose manifest names none.")
	fs.StringVarP(&f.output, "output", "o", "text", "text, or json for a pipeline.")
	fs = fss.FlagSet("controller")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Only required if out-of-cluster.")
	options.AddClusterNameFlag(fs, &f.clusterName)
	options.AddGrantFlags(fs, &f.grants)
	f.cloud.AddFlags(fss.FlagSet("cloud"))
	cmd := &cobra.Command{
		Use:   "plan -f network.yaml",
		Short: "Print the Neutron requests the controller would send for each Network",
		Long:  "Prints the Neutron requests the controller would send to make Neutron match each Network, and the condition it would report, without writing anything; exits 1 when one would be refused, 2 when it cannot plan (docs/plan.md).",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(f.files) == 0 {
				return command.UsageErrorf(cmd, "-f (--filename) is required")
			}
			if f.output != "text" && f.output != "json" {
				return command.UsageErrorf(cmd, "--output must be text or json, got %q", f.output)
			}
			if err := f.cloud.Validate(); err != nil {
				return command.UsageErrorf(cmd, "%w", err)
			}
			results, err := f.run(cmd.Context(), cmd.InOrStdin(), cmd.ErrOrStderr())
			if err == nil {
				write := WriteText
				if f.output == "json" {
					write = WriteJSON
				}
				err = write(cmd.OutOrStdout(), results)
			}
			if err != nil {
				// Neutron's or a manifest's words: one line.
				return command.Exit(2, fmt.Errorf("network-controller plan: %s", reconcile.Printable(err.Error())))
			}
			for _, r := range results {
				if r.Refused {
					return command.Exit(1, nil)
				}
			}
			return nil
		},
	}
	command.Setup(cmd, fss)
	return cmd
}

// run plans the Networks of f's files through the controller's own sync,
// policy, projects, door and reconciler (a Planner), on the live cluster
// and cloud: its API server clients send only reads and dry runs
// (ReadOnly), each project's Neutron client is a DryRun, and the
// controller writes to the Planner's Cluster. It says on stderr which
// objects of the files it skips.
func (f flags) run(ctx context.Context, stdin io.Reader, stderr io.Writer) ([]Result, error) {
	networks, err := readManifests(f.files, f.namespace, stdin, stderr)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("building the API server client configuration: %w", err)
	}
	cfg.Wrap(ReadOnly)
	cfg.UserAgent = "network-controller-plan"
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	networkClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// Whatever runs on ctx (the informers, the plan's controller) ends
	// with the plan.
	ctx, done := context.WithCancel(ctx)
	defer done()
	mark, err := cloudflags.ClusterMark(ctx, kubeClient, f.clusterName)
	if err != nil {
		return nil, err
	}
	noTraces := tracenoop.NewTracerProvider()
	neutronClient, ownCloud, _, err := f.cloud.Connect(&neutron.Reachability{}, noTraces)
	if err != nil {
		return nil, err
	}
	clusterFactory := informers.NewSharedInformerFactory(networkClient, 0)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	// The controller's own projects, and its own sync over them.
	planner, err := NewPlanner(ctx, f.newSyncer, tenancy.Parts{
		Networks: clusterFactory.Samplecrd().V2().Networks(), TenantPolicies: clusterFactory.Samplecrd().V1().TenantPolicies(),
		Namespaces: kubeFactory.Core().V1().Namespaces(), Secrets: kubeClient.CoreV1(), NetworkClient: networkClient, Mark: mark,
		Own: neutronClient, OwnCloud: ownCloud, Reach: &neutron.Reachability{}, Connect: f.cloud.TenantSession(noTraces)},
		// A plan holds every credential its files name: it lets none go.
		tenancy.Config{Defaults: f.grants, NeutronTimeout: f.cloud.Timeout, MaxCredentials: 256, MaxCredentialsPerNamespace: 256,
			CloudReload: f.cloud.Reload, MaxRetryDelay: f.cloud.MaxRetryDelay})
	if err != nil {
		return nil, err
	}
	// The informers stop when the plan is done: Shutdown waits for them.
	defer clusterFactory.Shutdown()
	defer kubeFactory.Shutdown()
	defer done() // before Shutdown waits for the informers to stop
	clusterFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	if err := planner.Start(ctx); err != nil {
		return nil, err
	}
	var results []Result
	for _, n := range networks {
		stored, exists, err := Admit(ctx, networkClient, n)
		if errors.Is(err, ErrAPIServerRefused) {
			results = append(results, Result{Network: n.Namespace + "/" + n.Name, Exists: exists, Requests: []Request{}, Refused: true,
				Condition: &metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(metav1.StatusReasonInvalid), Message: err.Error()}})
			continue
		}
		if err != nil {
			return nil, err
		}
		results = append(results, planner.Plan(ctx, stored, exists))
	}
	return results, nil
}

// readManifests reads the Networks of files ("-": stdin), each
// in namespace unless it names its own; it says on stderr which other
// objects it skips.
func readManifests(files []string, namespace string, stdin io.Reader, stderr io.Writer) ([]*samplecrdv2.Network, error) {
	var out []*samplecrdv2.Network
	for _, name := range files {
		in := io.NopCloser(stdin)
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return nil, err
			}
			in = f
		}
		networks, others, err := ReadNetworks(in)
		in.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, o := range others {
			fmt.Fprintf(stderr, "%s: skipped %s: plan reads Networks only\n", name, o)
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
