package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// readiness is what /readyz reports: a replica that leads is ready once its
// informer cache has synced and Neutron answers; a standby replica is ready
// as it is (it is healthy and waiting to take over).
type readiness struct {
	// reach is whether the latest Neutron request was answered.
	reach *reachability
	// auth returns why the controller cannot authenticate to the cloud.
	auth func() error

	mu         sync.Mutex
	standby    bool
	controller *Controller
}

func (r *readiness) set(standby bool, c *Controller) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.standby, r.controller = standby, c
}

func (r *readiness) checks() []healthz.HealthChecker {
	// leaderCheck runs check on the working controller; a standby passes.
	leaderCheck := func(name string, check func(c *Controller) error) healthz.HealthChecker {
		return healthz.NamedCheck(name, func(*http.Request) error {
			r.mu.Lock()
			standby, c := r.standby, r.controller
			r.mu.Unlock()
			switch {
			case standby:
				return nil
			case c == nil:
				return errors.New("the controller is starting")
			}
			return check(c)
		})
	}
	return []healthz.HealthChecker{
		healthz.NamedCheck("cloud-auth", func(*http.Request) error { return r.auth() }),
		leaderCheck("informer-sync", func(c *Controller) error {
			if !c.networksSynced() {
				return errors.New("the Network informer's cache has not synced yet")
			}
			return nil
		}),
		leaderCheck("neutron", func(c *Controller) error {
			if err := c.inventory.Status().Healthy(); err != nil {
				return err
			}
			return r.reach.Err()
		}),
	}
}

// serve serves /healthz and /readyz on probeAddr and /metrics on
// metricsAddr (the same server when they are equal; "0" turns one off)
// until ctx ends.
func serve(ctx context.Context, probeAddr, metricsAddr string, profiling bool, health, ready []healthz.HealthChecker) error {
	muxes := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if muxes[addr] == nil {
			muxes[addr] = http.NewServeMux()
		}
		return muxes[addr]
	}
	if probeAddr != "0" {
		m := mux(probeAddr)
		healthz.InstallHandler(m, health...)
		healthz.InstallReadyzHandler(m, ready...)
	}
	if metricsAddr != "0" {
		m := mux(metricsAddr)
		m.Handle("/metrics", legacyregistry.Handler())
		if profiling {
			// Go's profiler, as Kubernetes components offer it with
			// --profiling; /debug/pprof/heap?gc=1 measures the live heap.
			m.HandleFunc("/debug/pprof/", pprof.Index)
			m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			m.HandleFunc("/debug/pprof/profile", pprof.Profile)
			m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			m.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
	}
	logger := klog.FromContext(ctx)
	for addr, m := range muxes {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", addr, err)
		}
		srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			<-ctx.Done()
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdownCtx)
		}()
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error(err, "HTTP server failed", "address", addr)
			}
		}()
		logger.Info("Serving", "address", ln.Addr().String())
	}
	return nil
}
