package command

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageCode is the exit code of a command line the program cannot run: an
// unknown command or flag, a stray argument, a missing or invalid flag.
const UsageCode = 2

// ExitError ends a command with Code, after writing Err, when there is
// one, to standard error as it is: for what a command reports itself
// (plan's refusals, a check's denial) rather than fails with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit is an ExitError of code, which writes err (nil: nothing).
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// usageError is a command line that cmd cannot run: the error is
// written with cmd's usage, and the exit code is UsageCode.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// UsageErrorf is a usage error of cmd: Run writes it with cmd's usage and
// exits with UsageCode.
func UsageErrorf(cmd *cobra.Command, format string, a ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, a...)}
}

// NoArgs is the Args of every command of both programs: they take flags
// only. A word on the command line is a typo of a subcommand, or an
// argument that would otherwise be ignored; either is a usage error, so
// that `network-controller improt` does not start a controller. Cobra's
// suggestions name the subcommand meant.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasAvailableSubCommands() {
		return UsageErrorf(cmd, "unknown command %q for %q%s", args[0], cmd.CommandPath(), didYouMean(cmd, args[0]))
	}
	return UsageErrorf(cmd, "%q takes no arguments, got %q", cmd.CommandPath(), args)
}

// didYouMean is cobra's suggestions of cmd's subcommands for word, as
// "; did you mean import?", or "" when it has none.
func didYouMean(cmd *cobra.Command, word string) string {
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		return "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return ""
}
