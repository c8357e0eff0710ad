package command

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
)

// run runs cmd with args and returns its exit code and what it wrote.
func run(cmd *cobra.Command, args ...string) (code int, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	return Run(cmd), stdout, stderr
}

// TestRun: the exit code and what is written for each way a command
// ends: help, success, a usage error (the usage, then the error), an
// ExitError (its message alone) and a failure; and for the commands a
// root has (SetupRoot): help of a topic, --version, version and
// completion.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		runErr   error
		wantCode int
		// wantErr are in stderr in this order; wantOut in stdout.
		wantOut, wantErr []string
	}{
		{name: "help", args: []string{"--help"}, wantOut: []string{"The tool.", "Usage:", "Available Commands:", "sub", "Tool flags:", "--count", "Global flags:", "--help"}},
		{name: "success", args: []string{"--count=3"}},
		{name: "a flag it cannot parse", args: []string{"--count=many"}, wantCode: UsageCode, wantErr: []string{"Usage:", "--count", `Error: invalid argument "many"`}},
		{name: "a typo of a subcommand", args: []string{"sbu"}, wantCode: UsageCode, wantErr: []string{"Usage:", `Error: unknown command "sbu" for "tool"; did you mean sub?`}},
		{name: "a stray argument of a subcommand", args: []string{"sub", "x"}, wantCode: UsageCode, wantErr: []string{`Error: "tool sub" takes no arguments, got ["x"]`}},
		{name: "an ExitError", runErr: Exit(7, errors.New("tool: refused")), wantCode: 7, wantErr: []string{"tool: refused"}},
		{name: "an ExitError that says nothing", runErr: Exit(1, nil), wantCode: 1},
		{name: "a failure", runErr: errors.New("broken"), wantCode: 1},
		{name: "help of a subcommand", args: []string{"help", "sub"}, wantOut: []string{"Usage:", "tool sub"}},
		{name: "help of no command", args: []string{"help"}, wantOut: []string{"The tool.", "Available Commands:"}},
		{name: "help of a typo of a subcommand", args: []string{"help", "sbu"}, wantCode: UsageCode,
			wantErr: []string{"Usage:", `Error: unknown help topic "sbu" for "tool"; did you mean sub?`}},
		{name: "help of a stray word after a subcommand", args: []string{"help", "sub", "x"}, wantCode: UsageCode,
			wantErr: []string{`Error: unknown help topic "sub x" for "tool sub"`}},
		{name: "--version", args: []string{"--version"}, wantOut: []string{"tool ", " " + runtime.Version() + "\n"}},
		{name: "the version command's unknown output", args: []string{"version", "-o", "xml"}, wantCode: UsageCode,
			wantErr: []string{"tool version [-o json|yaml]", `Error: --output "xml": want json or yaml`}},
		{name: "completion's help", args: []string{"completion", "--help"}, wantOut: []string{"autocompletion script for tool", "bash", "zsh", "fish"}},
		{name: "completion of an unknown shell", args: []string{"completion", "tcsh"}, wantCode: UsageCode,
			wantErr: []string{`Error: unknown command "tcsh" for "tool completion"`}},
		{name: "completion's stray argument", args: []string{"completion", "bash", "x"}, wantCode: UsageCode,
			wantErr: []string{`Error: "tool completion bash" takes no arguments, got ["x"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fss := &cliflag.NamedFlagSets{}
			fss.FlagSet("tool").Int("count", 1, "How many.")
			cmd := &cobra.Command{Use: "tool", Long: "The tool.", RunE: func(*cobra.Command, []string) error { return tc.runErr }}
			sub := &cobra.Command{Use: "sub", Short: "A subcommand", RunE: func(*cobra.Command, []string) error { return nil }}
			Setup(sub, &cliflag.NamedFlagSets{})
			cmd.AddCommand(sub, NewVersionCommand())
			SetupRoot(cmd, fss)
			code, stdout, stderr := run(cmd, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			rest := stderr.String()
			for _, w := range tc.wantErr {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stderr lacks %q after what came before:\n%s", w, stderr.String())
				}
				rest = rest[i+len(w):]
			}
			if len(tc.wantErr) == 0 && stderr.Len() > 0 {
				t.Errorf("stderr is %q, want nothing", stderr.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
		})
	}
}

// TestCompletion: `completion SHELL` writes the shell's script, which
// names the program, and exits 0.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		shell string
		// want is in the script.
		want string
	}{
		{shell: "bash", want: "__start_tool"},
		{shell: "zsh", want: "#compdef tool"},
		{shell: "fish", want: "complete -c tool"},
		{shell: "powershell", want: "Register-ArgumentCompleter -CommandName 'tool'"},
	} {
		t.Run(tc.shell, func(t *testing.T) {
			cmd := &cobra.Command{Use: "tool", RunE: func(*cobra.Command, []string) error { return nil }}
			cmd.AddCommand(NewVersionCommand())
			SetupRoot(cmd, &cliflag.NamedFlagSets{})
			code, stdout, stderr := run(cmd, "completion", tc.shell)
			if code != 0 {
				t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stdout.String(), tc.want) {
				t.Errorf("the script lacks %q:\n%.500s", tc.want, stdout)
			}
		})
	}
}
