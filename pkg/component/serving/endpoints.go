package serving

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/klog/v2"
)

// Endpoints are a controller's probes and metrics, each on its address
// ("0" turns one off; equal addresses share a server).
type Endpoints struct {
	// Name names the muxes.
	Name string
	// ProbeAddress serves /healthz, of Health, and /readyz, of Ready.
	ProbeAddress  string
	Health, Ready []healthz.HealthChecker
	// MetricsAddress serves /metrics, and with Profiling Go's profiler.
	MetricsAddress string
	Profiling      bool
	// With Auth, /metrics is served over HTTPS with TLS to the callers
	// Auth lets through.
	Auth *DelegatedAuth
	TLS  *tls.Config
}

// Serve listens on e's addresses, and serves them until ctx ends.
func (e Endpoints) Serve(ctx context.Context) error {
	muxes := map[string]*mux.PathRecorderMux{}
	muxFor := func(addr string) *mux.PathRecorderMux {
		if muxes[addr] == nil {
			muxes[addr] = NewMux(e.Name)
		}
		return muxes[addr]
	}
	if e.ProbeAddress != "0" {
		InstallProbes(muxFor(e.ProbeAddress), e.Health, e.Ready)
	}
	if e.MetricsAddress != "0" {
		InstallMetrics(muxFor(e.MetricsAddress), e.Profiling, e.Auth)
	}
	logger := klog.FromContext(ctx)
	for addr, m := range muxes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
		if e.Auth != nil && addr == e.MetricsAddress {
			srv.TLSConfig = e.TLS
		}
		go func() {
			if err := Run(ctx, srv, ln); err != nil {
				logger.Error(err, "HTTP server failed", "address", addr)
			}
		}()
		logger.Info("Serving", "address", ln.Addr().String(), "tls", srv.TLSConfig != nil)
	}
	return nil
}
