package options

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/component-base/metrics/testutil"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
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
			if len(tc.args) == 0 && (o.LeaderElection.LeaseDuration.Duration != 15*time.Second || !o.LeaderElection.LeaderElect) {
				t.Errorf("defaults changed: %+v", o.LeaderElection)
			}
		})
	}
}

// validated parses args as the controller's flags and validates them, as
// the command does.
func validated(t *testing.T, args []string) (*Options, error) {
	t.Helper()
	o := New()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, f := range o.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.LeaderElection.ResourceNamespace = "default" // as Complete resolves it
	return o, o.Validate()
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
			if !o.MetricsSecure {
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg, err := o.MetricsTLS(ctx, "network-controller")
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

// TestConversionWebhookFlags: the conversion webhook is off unless
// --conversion-bind-address is set, and set it needs its certificate and
// key (the API server calls it over HTTPS only), which it serves.
func TestConversionWebhookFlags(t *testing.T) {
	const host = "127.0.0.1"
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
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
		name    string
		args    []string
		wantErr string
	}{
		{name: "off by default", args: nil},
		{name: "on, with its certificate", args: []string{"--conversion-bind-address=127.0.0.1:0",
			"--conversion-tls-cert-file=" + certFile, "--conversion-tls-key-file=" + keyFile}},
		{name: "on without a certificate", args: []string{"--conversion-bind-address=127.0.0.1:9443"},
			wantErr: "needs --conversion-tls-cert-file and --conversion-tls-key-file"},
		{name: "on without the key", args: []string{"--conversion-bind-address=127.0.0.1:9443", "--conversion-tls-cert-file=" + certFile},
			wantErr: "needs --conversion-tls-cert-file and --conversion-tls-key-file"},
		{name: "a certificate with the webhook off", args: []string{"--conversion-tls-cert-file=" + certFile, "--conversion-tls-key-file=" + keyFile},
			wantErr: "--conversion-bind-address turns on"},
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
			if o.Conversion.BindAddress == "" {
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addr, err := o.Conversion.Serve(ctx, &rest.Config{Host: "https://127.0.0.1:1"})
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca, ServerName: host}}}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr.String()+"/", nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("a client that trusts the files' CA: %v", err)
			}
			resp.Body.Close()
		})
	}
}
