package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/testutil"

	"github.com/samplecrd/network-controller/pkg/command"
	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/leader"
	"github.com/samplecrd/network-controller/pkg/metrics"
	"github.com/samplecrd/network-controller/pkg/options"
)

// TestTheWorksClientsWriteNothingWhileFenced: the clients the work
// writes with (fencedClients) send reads, and no write of either API
// while the fence refuses; each refusal is counted.
func TestTheWorksClientsWriteNothingWhileFenced(t *testing.T) {
	metrics.RegisterController()
	var arrived []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived = append(arrived, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NetworkList","apiVersion":"samplecrd.k8s.io/v1","items":[]}`))
	}))
	defer server.Close()
	kube, networks, err := fencedClients(&rest.Config{Host: server.URL}, func() error { return errors.New("the Lease was last renewed 12s ago") })
	if err != nil {
		t.Fatal(err)
	}
	refusals := func() float64 {
		v, err := testutil.GetCounterMetricValue(metrics.WritesFenced.WithLabelValues(metrics.FencedAPIServer))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := refusals()
	ctx := context.Background()
	if _, err := networks.SamplecrdV1().Networks("ns").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("a list through the fenced client: %v", err)
	}
	writes := map[string]error{}
	_, writes["status"] = networks.SamplecrdV1().Networks("ns").ApplyStatus(ctx, applyv1.Network("net", "ns"), metav1.ApplyOptions{FieldManager: "t"})
	_, writes["configmap"] = kube.CoreV1().ConfigMaps("ns").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, writes["event"] = kube.CoreV1().Events("ns").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}, metav1.CreateOptions{})
	writes["delete"] = kube.CoreV1().ConfigMaps("ns").Delete(ctx, "x", metav1.DeleteOptions{})
	for what, err := range writes {
		if !errors.Is(err, leader.ErrFenced) {
			t.Errorf("the %s write: %v, want ErrFenced", what, err)
		}
	}
	if len(arrived) != 1 || !strings.HasPrefix(arrived[0], "GET ") {
		t.Errorf("the API server saw %q, want the list alone", arrived)
	}
	if got := refusals() - before; got != 4 {
		t.Errorf("%v refusals counted, want 4", got)
	}
}

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
