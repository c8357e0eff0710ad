package conversion_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samplecrd/network-controller/pkg/component/serving"
	"github.com/samplecrd/network-controller/pkg/controller/conversion"
)

// idleClients is how many connections hold a request that never sends
// its body: more than the 2,262 that once spent the webhook's budget.
const idleClients = 3000

// TestIdleClientsDoNotDenyConversion: idleClients TLS connections each
// send the headers of a POST /convert that announces a body, and never
// send it, from the API server's own address or spread over 100 others,
// and are held open. Then a ConversionReview of a v1 Network, sent whole
// from the API server's address, is answered 200 with its Success; 30 s,
// the API server's timeout of a conversion call, bounds the wait (it is
// not a speed asserted). The connections are TLS, as the webhook is only
// served: a TLS connection holds more than a plain one, its records'
// buffers, and its handshake is what an attacker pays for each.
func TestIdleClientsDoNotDenyConversion(t *testing.T) {
	raiseOpenFiles(t, 2*idleClients+512)
	serverTLS, clientTLS := loopbackTLS(t)
	for _, tc := range []struct {
		name string
		// source is the address the i-th idle client connects from.
		source func(i int) net.IP
	}{
		{"from the API server's address", func(int) net.IP { return net.IPv4(127, 0, 0, 1) }},
		{"from 100 other addresses", func(i int) net.IP { return net.IPv4(127, 0, 1, byte(1+i%100)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, arrived := serveConversion(t, serverTLS)
			hold(t, addr, clientTLS, tc.source)
			waitUntil(t, 5*time.Minute, fmt.Sprintf("the webhook to read the headers of the %d idle clients", idleClients), func() bool {
				return arrived.Load() >= idleClients
			})

			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+conversion.Path,
				bytes.NewReader(reviewBody(t, "samplecrd.k8s.io/v2", raw(t, v1Network("a")))))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			transport := &http.Transport{TLSClientConfig: clientTLS}
			defer transport.CloseIdleConnections()
			resp, err := (&http.Client{Transport: transport}).Do(req)
			if err != nil {
				t.Fatalf("a review behind %d idle clients: %v", idleClients, err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("a review behind %d idle clients: %d %q %v; want 200", idleClients, resp.StatusCode, body, err)
			}
			review := &apiextensionsv1.ConversionReview{}
			if err := json.Unmarshal(body, review); err != nil || review.Response == nil || review.Response.Result.Status != metav1.StatusSuccess {
				t.Fatalf("a review behind %d idle clients was answered %.300s (%v); want a Success", idleClients, body, err)
			}
		})
	}
}

// serveConversion serves the webhook's handler, behind its limits, on a
// loopback port with the webhooks' server until the test ends. It
// returns the address and the count of requests that reached it.
func serveConversion(t *testing.T, tlsConfig *tls.Config) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var arrived atomic.Int64
	webhook := conversion.Handler(newStore(t))
	srv := serving.NewWebhookServer(ctx, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		webhook.ServeHTTP(w, r)
	}), tlsConfig)
	done := make(chan error, 1)
	go func() { done <- serving.Run(ctx, srv, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the webhook's server: %v", err)
		}
	})
	return ln.Addr().String(), &arrived
}

// hold opens idleClients TLS connections to addr, the i-th from
// source(i), and sends on each the headers of a review that announces 4
// KiB and sends none of them. They are closed when the test ends.
func hold(t *testing.T, addr string, tlsConfig *tls.Config, source func(i int) net.IP) {
	t.Helper()
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
		next  atomic.Int64
		errs  = make(chan error, 1)
	)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	headers := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n", conversion.Path, addr)
	// A few dialers at once: the handshakes are what takes the time,
	// and two cores are all there may be.
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < idleClients; i = int(next.Add(1)) - 1 {
				dialer := &tls.Dialer{NetDialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: source(i)}}, Config: tlsConfig}
				c, err := dialer.DialContext(t.Context(), "tcp", addr)
				if err == nil {
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
					_, err = c.Write([]byte(headers))
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("idle client %d: %w", i, err):
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// raiseOpenFiles raises the soft limit of open files to need (the idle
// clients' connections and the server's ends of them), or skips the test
// when the hard limit is below it.
func raiseOpenFiles(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("reading the limit of open files: %v", err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		t.Skipf("%d open files are needed; the hard limit is %d (raise it with ulimit -Hn)", need, lim.Max)
	}
	was := lim.Cur
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("raising the limit of open files to %d: %v", need, err)
	}
	t.Cleanup(func() {
		lim.Cur = was
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	})
}

// loopbackTLS is a self-signed ECDSA certificate for 127.0.0.1: the
// server's configuration, and a client's that trusts it.
func loopbackTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	pair := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// waitUntil polls cond until it holds, or fails the test after within.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
