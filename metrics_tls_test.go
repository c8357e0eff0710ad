package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	certutil "k8s.io/client-go/util/cert"
)

// TestMetricsTLS: with --tls-cert-file and --tls-private-key-file the
// secure /metrics serves that certificate, which a scraper that trusts its
// CA verifies; without them it serves a self-signed one, which no CA
// verifies. The files go together, and only with --metrics-secure.
func TestMetricsTLS(t *testing.T) {
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
		})
	}
}
