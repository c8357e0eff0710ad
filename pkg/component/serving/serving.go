// Package serving is what both programs serve besides their work: the
// probes (/healthz, /readyz), the metrics (/metrics) and, when asked, Go's
// profiler, on the muxes and with the libraries Kubernetes components use,
// and an HTTP server's life from listen to graceful shutdown.
package serving

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/component-base/metrics/legacyregistry"
)

// shutdownGrace is how long requests under way may finish after ctx ends.
const shutdownGrace = 5 * time.Second

// NewMux returns the mux a program's endpoints are installed on:
// apiserver's PathRecorderMux, as kube-controller-manager's.
func NewMux(name string) *mux.PathRecorderMux { return mux.NewPathRecorderMux(name) }

// InstallProbes installs /healthz, made of health, and /readyz, made of
// ready; each check is also served alone (/readyz/<name>).
func InstallProbes(m *mux.PathRecorderMux, health, ready []healthz.HealthChecker) {
	healthz.InstallHandler(m, health...)
	healthz.InstallReadyzHandler(m, ready...)
}

// InstallMetrics installs /metrics, component-base's registry, and with
// profiling Go's profiler at /debug/pprof/, the routes kube-apiserver's
// --profiling serves (/debug/pprof/heap?gc=1 measures the live heap).
// With auth, only callers the API server authorizes are served (see
// DelegatedAuth). The profiler is wired here from net/http/pprof rather
// than with apiserver's routes.Profiling: that package brings the API
// server's OpenAPI and endpoint handlers with it, 27 MB of binary for five
// routes.
func InstallMetrics(m *mux.PathRecorderMux, profiling bool, auth *DelegatedAuth) {
	protect := func(h http.Handler) http.Handler { return h }
	if auth != nil {
		protect = auth.Protect
	}
	m.Handle("/metrics", protect(legacyregistry.Handler()))
	if profiling {
		m.HandlePrefix("/debug/pprof/", protect(http.HandlerFunc(pprof.Index)))
		m.Handle("/debug/pprof/cmdline", protect(http.HandlerFunc(pprof.Cmdline)))
		m.Handle("/debug/pprof/profile", protect(http.HandlerFunc(pprof.Profile)))
		m.Handle("/debug/pprof/symbol", protect(http.HandlerFunc(pprof.Symbol)))
		m.Handle("/debug/pprof/trace", protect(http.HandlerFunc(pprof.Trace)))
	}
}

// Run serves srv on ln, with TLS when srv.TLSConfig is set, until ctx
// ends; then it shuts srv down, letting requests under way finish for a
// few seconds, and returns nil.
func Run(ctx context.Context, srv *http.Server, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	var err error
	if srv.TLSConfig != nil {
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
