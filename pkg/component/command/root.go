package command

import (
	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
)

// SetupRoot is Setup for a program's root command, with what only a root
// has: --version (Version), `help TOPIC`, which is a usage error for a
// topic that is no command (newHelpCommand), and cobra's `completion
// bash|zsh|fish|powershell`, whose commands, like every other, take no
// stray argument. Call it once cmd's subcommands are added.
func SetupRoot(cmd *cobra.Command, fss *cliflag.NamedFlagSets) {
	info := Version()
	cmd.Version = versionLine(info)
	cmd.SetVersionTemplate("{{.DisplayName}} {{.Version}}\n")
	// Without the shorthand -v cobra would add, which reads like klog's --v.
	fss.FlagSet("global").Bool("version", false, "Print the version this binary was built from and exit.")
	cmd.SetHelpCommand(newHelpCommand())
	Setup(cmd, fss)
}
