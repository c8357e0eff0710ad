// Package command runs both programs' cobra commands the way Kubernetes
// components run theirs (k8s.io/component-base/cli): flag names
// normalized, the klog flags registered, the logs flushed on exit. It adds
// what the programs need beyond that: their exit codes (plan's 1 for a
// refusal, 2 for a command line it cannot run) and a usage error for any
// word a command does not take (errors.go), help that lists a command's
// subcommands above its flags in named sections (help.go), what only a
// root command has (root.go); both programs' logging flags
// (logging.go); the version they were built from (version.go); and the
// namespace a program works in (namespace.go).
package command

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"
)

// Setup makes cmd a command of these programs: it takes no arguments
// (NoArgs), a flag it cannot parse is a usage error, and its help and
// usage print the flags of fss in their sections, with --help in the
// section "global", as kube-controller-manager's do. Errors and usage are
// written by Run alone. Call it once cmd's subcommands are added.
func Setup(cmd *cobra.Command, fss *cliflag.NamedFlagSets) {
	cmd.Args = NoArgs
	// Set before cli.RunNoErrOutput, which then leaves them as they are.
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{cmd: c, err: err} })
	cmd.SuggestionsMinimumDistance = 2 // "improt" suggests import
	fss.FlagSet("global").BoolP("help", "h", false, "help for "+cmd.Name())
	for _, name := range fss.Order {
		cmd.Flags().AddFlagSet(fss.FlagSets[name])
	}
	setUsageAndHelpFunc(cmd, *fss)
}

// initCompletionCmd adds cobra's completion command to cmd, as Execute
// would, with NoArgs as the Args of it and of its shells' commands: a
// stray word, or a shell it has no script for, is a usage error, as in
// every other command. Call it once
// cmd's output is set: the command keeps the writer it finds.
func initCompletionCmd(cmd *cobra.Command) {
	cmd.InitDefaultCompletionCmd()
	for _, c := range cmd.Commands() {
		if c.Name() == "completion" {
			// Runnable, so that its Args are checked: its help.
			c.Args, c.RunE = NoArgs, func(c *cobra.Command, _ []string) error { return c.Help() }
			for _, shell := range c.Commands() {
				shell.Args = NoArgs
			}
		}
	}
}

// Run executes cmd with component-base's boilerplate (cli.RunNoErrOutput,
// which cli.Run wraps) and returns the process's exit code. cli.Run would
// exit 1 on any error; these programs say more: 0 on success, the Code of
// an ExitError, UsageCode for a command line they cannot run (written with
// the usage), and 1 for any other failure, which is logged, as cli.Run logs
// it once the command runs. It adds cobra's completion command first
// (initCompletionCmd), which writes to cmd's output as set by then.
func Run(cmd *cobra.Command) int {
	initCompletionCmd(cmd)
	err := cli.RunNoErrOutput(cmd)
	code := ExitCode(err)
	var usage *usageError
	var exit *ExitError
	switch {
	case err == nil:
	case errors.As(err, &usage):
		// The usage, then the error, which a long usage would otherwise
		// scroll away (as cli.Run does for flag errors).
		_ = usage.cmd.Usage()
		fmt.Fprintf(usage.cmd.ErrOrStderr(), "\nError: %v\n", err)
	case errors.As(err, &exit):
		if exit.Err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), exit.Err)
		}
	default:
		klog.ErrorS(err, "Command failed")
		klog.Flush()
	}
	return code
}

// ExitCode is the exit code Run returns for err, what cmd.Execute
// returned: for tests that execute a command without a process.
func ExitCode(err error) int {
	var usage *usageError
	var exit *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		return UsageCode
	case errors.As(err, &exit):
		return exit.Code
	}
	return 1
}
