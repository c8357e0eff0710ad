package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/component-base/metrics/testutil"

	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/leader"
	"github.com/samplecrd/network-controller/pkg/metrics"

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
			o, err := validated(t, tc.args)
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

// validated parses args as the controller's flags and validates them, as
// main does.
func validated(t *testing.T, args []string) (options, error) {
	t.Helper()
	var o options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.leaderElection.ResourceNamespace = "default" // as main resolves it
	return o, o.validate()
}

// TestMetricsTLS: with --tls-cert-file and --tls-private-key-file the
// secure /metrics serves that certificate, which a scraper that trusts its
// CA verifies; without them it serves a self-signed one, which no CA
// verifies. The files go together, and only with --metrics-secure. The
// expiry of the files' certificate is exported, for the alert that asks
// for its renewal.
func TestMetricsTLS(t *testing.T) {
	metrics.RegisterController()
	const host = "network-controller.network-controller-system.svc"
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	// certPEM holds the leaf, then the CA that signed it.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ca := x509.NewCertPool()
	ca.AppendCertsFromPEM(certPEM)

	for _, tc := range []struct {
		name       string
		args       []string
		wantErr    string
		verifiable bool // a client that trusts the files' CA verifies the server
	}{
		{name: "plain HTTP", args: nil},
		{name: "self-signed", args: []string{"--metrics-secure", "--metrics-bind-address=:8443"}},
		{name: "the files' certificate", args: []string{"--metrics-secure", "--metrics-bind-address=:8443",
			"--tls-cert-file=" + certFile, "--tls-private-key-file=" + keyFile}, verifiable: true},
		{name: "a certificate without its key", args: []string{"--metrics-secure", "--metrics-bind-address=:8443",
			"--tls-cert-file=" + certFile}, wantErr: "give both or neither"},
		{name: "a key without its certificate", args: []string{"--metrics-secure", "--metrics-bind-address=:8443",
			"--tls-private-key-file=" + keyFile}, wantErr: "give both or neither"},
		{name: "a certificate for plain HTTP", args: []string{"--tls-cert-file=" + certFile, "--tls-private-key-file=" + keyFile},
			wantErr: "--metrics-secure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := validated(t, tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("validate() = %v", err)
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("validate() = %v, want an error about %s", err, tc.wantErr)
				}
				return
			}
			if !o.metricsSecure {
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg, err := o.metricsTLS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			srv.TLS = cfg
			srv.StartTLS()
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca, ServerName: host}}}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if verified := err == nil; verified != tc.verifiable {
				t.Errorf("a scraper that trusts the files' CA verified the server: %v, want %v (%v)", verified, tc.verifiable, err)
			}
			if tc.verifiable {
				leaf, _ := pem.Decode(certPEM)
				cert, err := x509.ParseCertificate(leaf.Bytes)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := testutil.GetGaugeMetricValue(metrics.MetricsCertificateExpiration); err != nil || got != float64(cert.NotAfter.Unix()) {
					t.Errorf("network_controller_serving_certificate_expiration_timestamp_seconds = %v (%v), want the certificate's expiry %v", got, err, cert.NotAfter.Unix())
				}
			}
		})
	}
}
