package command

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
)

// TestRun: the exit code and what is written for each way a command
// ends: help, success, a usage error (the usage, then the error), an
// ExitError (its message alone) and a failure.
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			fss := &cliflag.NamedFlagSets{}
			fss.FlagSet("tool").Int("count", 1, "How many.")
			cmd := &cobra.Command{Use: "tool", Long: "The tool.", RunE: func(*cobra.Command, []string) error { return tc.runErr }}
			sub := &cobra.Command{Use: "sub", Short: "A subcommand", RunE: func(*cobra.Command, []string) error { return nil }}
			Setup(sub, &cliflag.NamedFlagSets{})
			cmd.AddCommand(sub)
			Setup(cmd, fss)
			var stdout, stderr bytes.Buffer
			cmd.SetArgs(tc.args)
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			if code := Run(cmd); code != tc.wantCode {
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
