package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/samplecrd/network-controller/pkg/component/command"
)

// execute runs the command line args as main does, without a process and
// with a webhook that fails at once when started (see started), and
// returns the exit code and what was written.
func execute(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := newCommand(func(context.Context, options) error { return errStarted })
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(""))
	return command.Run(cmd), out.String(), errOut.String()
}

// errStarted is what the webhook of execute fails with.
var errStarted = errors.New("the webhook started")

// TestTheCommandLine: --help lists the subcommands and exits 0; a word
// that is no subcommand, or one beside a subcommand's flags, exits with
// the usage and starts nothing.
func TestTheCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		// wantOut and wantErr are in stdout and stderr.
		wantOut, wantErr []string
	}{
		{name: "help lists the subcommands", args: []string{"--help"},
			wantOut: []string{"Available Commands:", "inject", "check", "version", "Serving flags:", "--bind-address"}},
		{name: "inject's help", args: []string{"inject", "--help"}, wantOut: []string{"envoy-injector inject -f FILE", "--template"}},
		{name: "check's help", args: []string{"check", "-h"}, wantOut: []string{"envoy-injector check -f POD.yaml"}},
		{name: "an unknown command", args: []string{"frobnicate"}, wantCode: command.UsageCode,
			wantErr: []string{`unknown command "frobnicate"`, "Usage:"}},
		{name: "a typo of a subcommand", args: []string{"injetc", "--kubeconfig=/nonexistent"}, wantCode: command.UsageCode,
			wantErr: []string{`unknown command "injetc"`, "did you mean inject?"}},
		{name: "a stray argument", args: []string{"check", "-f", "pod.yaml", "extra"}, wantCode: command.UsageCode,
			wantErr: []string{`takes no arguments, got ["extra"]`, "envoy-injector check -f POD.yaml"}},
		{name: "inject without a file", args: []string{"inject"}, wantCode: command.UsageCode, wantErr: []string{"-f (--filename) is required"}},
		{name: "an unknown flag", args: []string{"--bogus"}, wantCode: command.UsageCode, wantErr: []string{"unknown flag: --bogus", "Usage:"}},
		{name: "--version", args: []string{"--version"}, wantOut: []string{"envoy-injector "}},
		{name: "version in YAML", args: []string{"version", "-o", "yaml"}, wantOut: []string{"gitVersion:", "gitCommit:", "goVersion:"}},
		{name: "help of a typo of a subcommand", args: []string{"help", "injetc"}, wantCode: command.UsageCode,
			wantErr: []string{`unknown help topic "injetc" for "envoy-injector"; did you mean inject?`}},
		{name: "bash completion", args: []string{"completion", "bash"}, wantOut: []string{"__start_envoy-injector"}},
		{name: "zsh completion", args: []string{"completion", "zsh"}, wantOut: []string{"#compdef envoy-injector"}},
		{name: "fish completion", args: []string{"completion", "fish"}, wantOut: []string{"complete -c envoy-injector"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := execute(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}
