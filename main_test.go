package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/controller/options"
)

// TestTheCommandLine: --help, the controller's and each subcommand's,
// lists the subcommands and flags and exits 0; a word that is no
// subcommand, a typo of one among the controller's flags, or a stray
// argument beside a subcommand's flags exits with the usage and starts no
// controller. The first case shows the controller would be seen starting.
func TestTheCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		started  bool
		// wantOut and wantErr are in stdout and stderr.
		wantOut, wantErr []string
	}{
		{name: "the controller", args: []string{"--kubeconfig=/nonexistent", "--leader-elect-resource-namespace=ns"}, started: true},
		{name: "help lists the subcommands and the flags' sections", args: []string{"--help"},
			wantOut: []string{"Available Commands:", "import", "plan", "version", "Leader election flags:", "--leader-elect-lease-duration"}},
		{name: "plan's help", args: []string{"plan", "--help"}, wantOut: []string{"network-controller plan -f network.yaml", "--filename", "--adoption-namespaces"}},
		{name: "import's help", args: []string{"import", "-h"}, wantOut: []string{"network-controller import", "--name", "--os-cloud"}},
		{name: "help of a subcommand", args: []string{"help", "plan"}, wantOut: []string{"network-controller plan -f network.yaml"}},
		{name: "an unknown command", args: []string{"frobnicate"}, wantCode: command.UsageCode,
			wantErr: []string{`unknown command "frobnicate" for "network-controller"`, "Usage:"}},
		{name: "a typo of a subcommand starts no controller", args: []string{"improt", "--kubeconfig=/nonexistent", "--leader-elect-resource-namespace=ns"},
			wantCode: command.UsageCode, wantErr: []string{`unknown command "improt"`, "did you mean import?"}},
		{name: "a stray argument", args: []string{"plan", "-f", "x.yaml", "extra"}, wantCode: command.UsageCode,
			wantErr: []string{`"network-controller plan" takes no arguments, got ["extra"]`, "network-controller plan -f network.yaml"}},
		{name: "plan without a file", args: []string{"plan"}, wantCode: command.UsageCode, wantErr: []string{"-f (--filename) is required"}},
		{name: "an unknown flag", args: []string{"--bogus"}, wantCode: command.UsageCode, wantErr: []string{"unknown flag: --bogus", "Usage:"}},
		{name: "an invalid flag", args: []string{"--kubeconfig=/nonexistent", "--leader-elect-resource-namespace=ns", "--workers=0"},
			wantCode: command.UsageCode, wantErr: []string{"--workers must be at least 1"}},
		{name: "version", args: []string{"version"}, wantOut: []string{"network-controller "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := false
			cmd := newCommand(func(context.Context, *options.Options) error {
				started = true
				return nil
			})
			var stdout, stderr bytes.Buffer
			cmd.SetArgs(tc.args)
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			if code := command.Run(cmd); code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			if started != tc.started {
				t.Errorf("the controller started: %v, want %v", started, tc.started)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}
