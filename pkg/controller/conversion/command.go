package conversion

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/component/serving"
)

// NewCommand is `network-controller conversion-webhook`: the Network
// CRD's conversion webhook alone, as every replica of the controller
// serves it, for a cluster whose controller runs elsewhere (out of
// cluster, with --kubeconfig) or not at all: v1 clients keep working while
// the controller is stopped. It needs no cloud and no lease, and reads the
// API server only to check v1 writes (get networks, get the CRD).
func NewCommand() *cobra.Command {
	opts := Options{BindAddress: ":9443"}
	var kubeconfig string
	probes := ":8081"
	fss := &cliflag.NamedFlagSets{}
	opts.AddFlags(fss.FlagSet("conversion webhook"), "Required.")
	fs := fss.FlagSet("kubernetes")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig, read to check a v1 write against the stored Network and the CRD. Empty: the Pod's ServiceAccount (in cluster).")
	fss.FlagSet("serving").StringVar(&probes, "health-probe-bind-address", probes, "Address of /healthz and /readyz; \"0\" turns them off.")
	logs := command.AddLogFlags(fss.FlagSet("logging"))
	validate := func() error {
		if opts.BindAddress == "" {
			return fmt.Errorf("--conversion-bind-address is required: this command serves the webhook alone")
		}
		return opts.Validate()
	}
	cmd := &cobra.Command{
		Use:   "conversion-webhook",
		Short: "Serve the Network CRD's conversion webhook alone",
		Long:  "Serves the Network CRD's conversion webhook (POST /convert) alone, without the controller: in cluster for a controller that runs out of cluster with --kubeconfig, so that every v1 client of the cluster reaches it, with the controller running or not (docs/operations.md). The chart runs it with webhookOnly=true.",
		Args:  command.NoArgs,
		RunE: command.Serve("conversion-webhook", func(ctx context.Context) error {
			return serveAlone(ctx, &opts, kubeconfig, probes)
		}, validate, logs.Apply),
	}
	command.Setup(cmd, fss)
	return cmd
}

// serveAlone serves the webhook and its probes until ctx ends.
func serveAlone(ctx context.Context, opts *Options, kubeconfig, probes string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("the API server's client configuration: %w", err)
	}
	cfg.UserAgent = "network-controller-conversion-webhook"
	endpoints := serving.Endpoints{Name: "conversion-webhook", ProbeAddress: probes, MetricsAddress: "0",
		Health: []healthz.HealthChecker{healthz.PingHealthz}, Ready: []healthz.HealthChecker{healthz.PingHealthz}}
	if err := endpoints.Serve(ctx); err != nil {
		return err
	}
	if _, err := opts.Serve(ctx, cfg); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}
