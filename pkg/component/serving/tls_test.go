package serving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	certutil "k8s.io/client-go/util/cert"
)

const testHost = "metrics.example.svc"

// pair is a serving certificate for testHost and the CA that signed it,
// written to dir as tls.crt and tls.key.
type pair struct {
	ca     *x509.CertPool
	serial *big.Int
}

// writePair writes a new pair over dir's files, as a rotated Secret does.
func writePair(t *testing.T, dir string) pair {
	t.Helper()
	// certPEM holds the leaf, then the CA that signed it.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(testHost, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	leafBlock, rest := pem.Decode(certPEM)
	caBlock, _ := pem.Decode(rest)
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return pair{ca: pool, serial: leaf.SerialNumber}
}

// verifies says whether a client that trusts ca and expects testHost
// completes a request to srv.
func verifies(ctx context.Context, srv *httptest.Server, ca *x509.CertPool) error {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca, ServerName: testHost}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// TestFileTLS: the certificate of the files is served, verifiably by a
// client that trusts its CA and by no other; rewritten in place, the new
// one is served without a restart; onLoad hears of each.
func TestFileTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	first := writePair(t, dir)

	var mu sync.Mutex
	var loaded []*big.Int
	cfg, err := FileTLS(ctx, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), func(c *x509.Certificate) {
		mu.Lock()
		defer mu.Unlock()
		loaded = append(loaded, c.SerialNumber)
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()

	if err := verifies(ctx, srv, first.ca); err != nil {
		t.Errorf("a client that trusts the files' CA refused the server: %v", err)
	}
	if err := verifies(ctx, srv, writePair(t, t.TempDir()).ca); err == nil {
		t.Error("a client that trusts another CA accepted the server")
	}
	second := writePair(t, dir)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return verifies(ctx, srv, second.ca) == nil, nil
	}); err != nil {
		t.Fatalf("the rewritten certificate was not served: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(loaded) < 2 || loaded[0].Cmp(first.serial) != 0 || loaded[len(loaded)-1].Cmp(second.serial) != 0 {
		t.Errorf("onLoad heard of %v, want %v first and %v last", loaded, first.serial, second.serial)
	}
}

// TestFileTLSRefusesMissingFiles: a certificate that cannot be read is an
// error at start, not a server without one.
func TestFileTLSRefusesMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := FileTLS(context.Background(), filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), nil); err == nil {
		t.Error("FileTLS accepted files that do not exist")
	}
}
