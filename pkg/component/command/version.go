package command

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
)

// NewVersionCommand is `<program> version`: the module version and the
// commit the binary was built from, as the Go toolchain recorded them.
func NewVersionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version this binary was built from",
		Long:  "Prints the module version and the commit (vcs.revision, with +dirty for uncommitted changes) this binary was built from, and the Go it was built with.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), cmd.Root().Name(), version())
			return err
		},
	}
	Setup(cmd, &cliflag.NamedFlagSets{})
	return cmd
}

// version is what the build info says of the binary: e.g.
// "(devel) 93cb3f2e8b1a+dirty go1.27.3".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v, revision, dirty := info.Main.Version, "unknown", ""
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			revision = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	return fmt.Sprintf("%s %s%s %s", v, revision, dirty, info.GoVersion)
}
