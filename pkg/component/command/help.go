package command

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	cliflag "k8s.io/component-base/cli/flag"
)

// setUsageAndHelpFunc is cliflag.SetUsageAndHelpFunc, which prints a
// command's flags in their sections, with the subcommands listed too,
// which it leaves out. Lines wrap at the terminal's width, and not at all
// when the output is no terminal (docs/flags.md). A command that inherits
// these functions without Setup (cobra's completion commands, help)
// prints its own flags in one section.
func setUsageAndHelpFunc(cmd *cobra.Command, fss cliflag.NamedFlagSets) {
	usage := func(c *cobra.Command, w io.Writer) {
		cols := 0
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			cols, _, _ = term.GetSize(int(f.Fd()))
		}
		fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
		if c.HasAvailableSubCommands() {
			fmt.Fprintf(w, "  %s [command]\n\nAvailable Commands:\n", c.CommandPath())
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					fmt.Fprintf(w, "  %-*s %s\n", c.NamePadding(), sub.Name(), sub.Short)
				}
			}
		}
		switch {
		case c == cmd:
			cliflag.PrintSections(w, fss, cols)
		case c.HasAvailableLocalFlags():
			fmt.Fprintf(w, "\nFlags:\n%s", c.LocalFlags().FlagUsagesWrapped(cols))
		}
		if c.HasAvailableSubCommands() {
			fmt.Fprintf(w, "\nUse \"%s [command] --help\" for more information about a command.\n", c.CommandPath())
		}
	}
	// Usage is written after a usage error only (help is on stdout).
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		usage(c, c.ErrOrStderr())
		return nil
	})
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprintf(c.OutOrStdout(), "%s\n\n", strings.TrimSpace(c.Long))
		usage(c, c.OutOrStdout())
	})
}

// newHelpCommand is `<program> help [command]`, cobra's help command but
// for a topic that is no command: cobra's prints the root's help and exits
// 0, so that `help improt` looks like an answer; this one is a usage error
// that names the topic, with cobra's suggestion.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Prints the help of a command: help [path to command].",
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			target, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var completions []cobra.Completion
			for _, sub := range target.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					completions = append(completions, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return completions, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return UsageErrorf(c.Root(), "unknown help topic %q: %w", strings.Join(args, " "), err)
			}
			if len(rest) > 0 {
				return UsageErrorf(target, "unknown help topic %q for %q%s", strings.Join(args, " "), target.CommandPath(), didYouMean(target, rest[0]))
			}
			target.InitDefaultHelpFlag()
			target.InitDefaultVersionFlag()
			return target.Help()
		},
	}
}
