package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestLeaderElectionFlags: the --leader-elect* flags keep their names and
// defaults, and what client-go would refuse (or panic on) is a clear
// start-up error instead.
func TestLeaderElectionFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults are valid"},
		{name: "disabled: nothing else is checked", args: []string{"--leader-elect=false", "--leader-elect-lease-duration=1s"}},
		{name: "lease shorter than the renew deadline", args: []string{"--leader-elect-lease-duration=5s"}, wantErr: "leaseDuration"},
		{name: "retry period too long to renew in time", args: []string{"--leader-elect-retry-period=9s"}, wantErr: "renewDeadline"},
		{name: "zero retry period", args: []string{"--leader-elect-retry-period=0s"}, wantErr: "retryPeriod"},
		{name: "only Leases", args: []string{"--leader-elect-resource-lock=endpoints"}, wantErr: "resourceLock"},
		{name: "no name", args: []string{"--leader-elect-resource-name="}, wantErr: "resourceName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o options
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.addFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			o.leaderElection.ResourceNamespace = "default" // as main resolves it
			err := o.validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("validate() = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("validate() = %v, want an error about %s", err, tc.wantErr)
			}
			if len(tc.args) == 0 && (o.leaderElection.LeaseDuration.Duration != 15*time.Second || !o.leaderElection.LeaderElect) {
				t.Errorf("defaults changed: %+v", o.leaderElection)
			}
		})
	}
}
