// Command versioned is a root command of pkg/component/command and its
// version command, which TestStampedVersion builds with -ldflags -X as
// `make build` builds the programs.
package main

import (
	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/samplecrd/network-controller/pkg/component/command"
)

func main() {
	cmd := &cobra.Command{Use: "versioned", RunE: func(*cobra.Command, []string) error { return nil }}
	cmd.AddCommand(command.NewVersionCommand())
	command.SetupRoot(cmd, &cliflag.NamedFlagSets{})
	command.Main(cmd)
}
