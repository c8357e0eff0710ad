package serving

import (
	"errors"
	"net/http"
	"sync"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Readiness is what a leader-elected controller's /readyz reports: a
// replica that leads is ready once its informer cache has synced and
// Neutron answers; a standby replica is ready as it is (it is healthy and
// waiting to take over).
type Readiness struct {
	// Auth returns why the controller cannot authenticate to the cloud.
	Auth func() error

	mu      sync.Mutex
	standby bool
	term    *Term
}

// Term is what Readiness asks of a leader's term: whether its Network
// informer has synced, and why Neutron does not answer its own project.
type Term struct {
	Synced  cache.InformerSynced
	Neutron func() error
}

// Set says whether the replica stands by, or the term it works in (nil:
// it is starting).
func (r *Readiness) Set(standby bool, t *Term) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.standby, r.term = standby, t
}

// Checks are the checks of /readyz.
func (r *Readiness) Checks() []healthz.HealthChecker {
	// leaderCheck runs check on the working controller; a standby passes.
	leaderCheck := func(name string, check func(t *Term) error) healthz.HealthChecker {
		return healthz.NamedCheck(name, func(*http.Request) error {
			r.mu.Lock()
			standby, t := r.standby, r.term
			r.mu.Unlock()
			switch {
			case standby:
				return nil
			case t == nil:
				return errors.New("the controller is starting")
			}
			return check(t)
		})
	}
	return []healthz.HealthChecker{
		withheld(healthz.NamedCheck("cloud-auth", func(*http.Request) error { return r.Auth() })),
		leaderCheck("informer-sync", func(t *Term) error {
			if !t.Synced() {
				return errors.New("the Network informer's cache has not synced yet")
			}
			return nil
		}),
		withheld(leaderCheck("neutron", func(t *Term) error { return t.Neutron() })),
	}
}

// withheld is check without its reason: a failing check's error may carry
// the cloud's own answers (Keystone's error text, an endpoint), and anyone
// who reaches the probes' port, which the kubelet calls without
// credentials, may read /readyz/<check>. The reason goes to the log.
func withheld(check healthz.HealthChecker) healthz.HealthChecker {
	return healthz.NamedCheck(check.Name(), func(r *http.Request) error {
		err := check.Check(r)
		if err == nil {
			return nil
		}
		klog.FromContext(r.Context()).V(2).Info("Readiness check failing", "check", check.Name(), "err", err)
		return errors.New("failing; the reason is in the controller's log")
	})
}
