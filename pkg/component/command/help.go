package command

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	cliflag "k8s.io/component-base/cli/flag"
)

// setUsageAndHelpFunc is cliflag.SetUsageAndHelpFunc, which prints a
// command's flags in their sections, with the subcommands listed too,
// which it leaves out. Lines wrap at the terminal's width, and not at all
// when the output is no terminal (docs/flags.md).
func setUsageAndHelpFunc(cmd *cobra.Command, fss cliflag.NamedFlagSets) {
	usage := func(w io.Writer) {
		cols := 0
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			cols, _, _ = term.GetSize(int(f.Fd()))
		}
		fmt.Fprintf(w, "Usage:\n  %s\n", cmd.UseLine())
		if cmd.HasAvailableSubCommands() {
			fmt.Fprintf(w, "  %s [command]\n\nAvailable Commands:\n", cmd.CommandPath())
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					fmt.Fprintf(w, "  %-*s %s\n", cmd.NamePadding(), c.Name(), c.Short)
				}
			}
		}
		cliflag.PrintSections(w, fss, cols)
		if cmd.HasAvailableSubCommands() {
			fmt.Fprintf(w, "\nUse \"%s [command] --help\" for more information about a command.\n", cmd.CommandPath())
		}
	}
	// Usage is written after a usage error only (help is on stdout).
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		usage(c.ErrOrStderr())
		return nil
	})
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprintf(c.OutOrStdout(), "%s\n\n", c.Long)
		usage(c.OutOrStdout())
	})
}
