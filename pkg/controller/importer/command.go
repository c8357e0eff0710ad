package importer

import (
	"fmt"

	"github.com/spf13/cobra"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/controller/cloud"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// NewCommand is `network-controller import`: it prints a Network manifest
// that adopts each network of the cloud's project that a Network can
// manage, and on stderr why it skips each other. It only reads Neutron. It
// exits 2 when it cannot reach the cloud, 1 when a list fails.
func NewCommand() *cobra.Command {
	opts := cloud.NewOptions()
	var names []string
	fss := &cliflag.NamedFlagSets{}
	fss.FlagSet("import").StringArrayVar(&names, "name", nil, "Import only the networks whose Neutron name matches this pattern (path.Match: *, ?, [...]); repeat for several. Default: every network.")
	opts.AddFlags(fss.FlagSet("cloud"))
	cmd := &cobra.Command{
		Use:   "import [flags] > networks.yaml",
		Short: "Print a Network that adopts each network of the cloud's project",
		Long:  "Prints a Network that adopts each network of the cloud's project a Network can manage; apply it with kubectl in a namespace a TenantPolicy grants adoption (docs/import.md). Only reads Neutron.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return command.UsageErrorf(cmd, "%w", err)
			}
			// Neutron's answers are written as one line (reconcile.Printable).
			client, _, _, err := opts.Connect(&neutron.Reachability{}, tracenoop.NewTracerProvider())
			if err != nil {
				return command.Exit(2, fmt.Errorf("network-controller import: %s", reconcile.Printable(err.Error())))
			}
			candidates, err := Candidates(cmd.Context(), client, names)
			if err == nil {
				err = Write(cmd.OutOrStdout(), cmd.ErrOrStderr(), candidates)
			}
			if err != nil {
				return command.Exit(1, fmt.Errorf("network-controller import: %s", reconcile.Printable(err.Error())))
			}
			return nil
		},
	}
	command.Setup(cmd, fss)
	return cmd
}
