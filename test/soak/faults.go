package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/samplecrd/network-controller/test/framework"
)

// faultKinds are the faults the soak injects, one at a time.
var faultKinds = []string{
	"controller-kill", "controller-stop", "controller-freeze", "leader-partition",
	"neutron-restart", "neutron-chaos", "keystone-restart", "token-revoke",
	"apiserver-restart", "etcd-restart", "mariadb-restart", "ovn-nb-restart",
	"ovn-northd-restart",
}

// drawFault draws the next fault from the seed's fault stream and
// returns what injects it and waits for its recovery to begin. It runs
// beside the workload, which goes on meanwhile: a replica frozen while
// Networks change resumes with work queued on a stale view.
func (s *soak) drawFault() func(context.Context) error {
	kind := faultKinds[s.faultRNG.IntN(len(faultKinds))]
	s.faults[kind]++
	down := time.Duration(2+s.faultRNG.IntN(5)) * time.Second
	pick := s.faultRNG.IntN(len(s.controllers))
	return func(ctx context.Context) error { return s.inject(ctx, kind, down, pick) }
}

// inject injects the fault kind: down is how long a daemon stays
// stopped, pick the replica it falls on when it falls on one.
func (s *soak) inject(ctx context.Context, kind string, down time.Duration, pick int) error {
	switch kind {
	case "controller-kill", "controller-stop":
		c := s.controllers[pick]
		if kind == "controller-kill" {
			c.Kill()
		} else {
			_ = c.Stop(10 * time.Second)
		}
		return c.Start()
	case "controller-freeze":
		return s.freezeLeader(ctx, pick, leaseDuration+down)
	case "leader-partition":
		return s.partitionLeader(ctx, pick, leaseDuration+down)
	case "neutron-chaos":
		return s.chaos(ctx, 5*down)
	case "neutron-restart":
		p := s.stack.Neutron.KeystoneServer
		return outage(ctx, p, down, p.Start)
	case "keystone-restart":
		p := s.stack.Keystone.Server
		return outage(ctx, p, down, p.Start)
	case "token-revoke":
		return s.revokeToken(ctx, pick, down)
	case "apiserver-restart":
		cp := s.stack.ControlPlane
		return outage(ctx, cp.APIServer, down, func() error { return cp.StartAPIServer(ctx) })
	case "etcd-restart":
		p := s.stack.ControlPlane.Etcd
		return outage(ctx, p, down, p.Start)
	case "mariadb-restart":
		p := s.stack.Neutron.MariaDB
		return outage(ctx, p, down, p.Start)
	case "ovn-nb-restart":
		p := s.stack.Neutron.NB
		return outage(ctx, p, down, p.Start)
	case "ovn-northd-restart":
		p := s.stack.Neutron.Northd
		return outage(ctx, p, down, p.Start)
	}
	return nil
}

// freezeLeader freezes the replica that leads (SIGSTOP; replica pick if
// the Lease names none) for d, longer than the lease, so that the other
// takes over, and thaws it: it resumes with a stale cache and its retries
// due, and must write nothing (pkg/component/leader's fence).
func (s *soak) freezeLeader(ctx context.Context, pick int, d time.Duration) error {
	c := s.controllers[s.leaderOr(pick)]
	if err := c.Freeze(); err != nil {
		return err
	}
	defer func() { _ = c.Thaw() }()
	return pause(ctx, d)
}

// partitionLeader cuts the replica that leads (replica pick if the Lease
// names none) off from the API server for d, longer than the lease, while
// the other still reaches it and takes over; Neutron stays in reach of
// both. The cut-off replica cannot renew, so from its renew deadline on
// the fence must keep its writes from Neutron, though its queue and its
// stale cache say there is work to do.
func (s *soak) partitionLeader(ctx context.Context, pick int, d time.Duration) error {
	api := s.apiProxies[s.leaderOr(pick)]
	api.Partition()
	defer api.Heal()
	return pause(ctx, d)
}

// tokenCacheTime is how long neutron-server trusts a token it validated
// (the stack's token_cache_time): a revocation bites within it.
const tokenCacheTime = 10 * time.Second

// revokeToken revokes in Keystone the token that the replica that leads
// (replica pick if the Lease names none) sends Neutron, as an operator's
// "openstack token revoke" does. neutron-server refuses it (401) once its
// cached validation expires, and the replica must authenticate anew
// without a restart: the fault waits for a request with another token,
// for at most the cache time, a Neutron resync period (the list that
// comes whatever the workload does) and d. A revoked token still the
// replica's latest after that is a violation.
func (s *soak) revokeToken(ctx context.Context, pick int, d time.Duration) error {
	pick = s.leaderOr(pick)
	proxy := s.proxies[pick]
	token := proxy.latestToken()
	if token == "" {
		return pause(ctx, d) // it has sent nothing yet
	}
	admin, err := s.stack.Keystone.AdminClient(ctx)
	if err != nil {
		return fmt.Errorf("revoking a token: %w", err)
	}
	if err := tokens.Revoke(ctx, admin, token).Err; err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return pause(ctx, d) // it had expired, or been replaced already
		}
		return fmt.Errorf("revoking replica %d's token: %w", pick, err)
	}
	bound := tokenCacheTime + neutronResync + d
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		return proxy.latestToken() != token, nil
	})
	switch {
	case wait.Interrupted(err) && ctx.Err() == nil && s.leader() == pick:
		// Still leading, so still listing Neutron: it was refused.
		s.hist.recordViolation(fmt.Sprintf("replica %d still sends the token revoked %s ago", pick, bound))
	case err != nil:
		return err
	}
	return nil
}

// chaos turns every replica's proxy to Neutron faulty for d: refused,
// lost and slow answers at the rates of chaos.go.
func (s *soak) chaos(ctx context.Context, d time.Duration) error {
	for _, p := range s.proxies {
		p.setChaos(true)
	}
	defer func() {
		for _, p := range s.proxies {
			p.setChaos(false)
		}
	}()
	return pause(ctx, d)
}

// outage stops daemon p, waits down, and starts it again with start.
func outage(ctx context.Context, p *framework.Process, down time.Duration, start func() error) error {
	_ = p.Stop(10 * time.Second)
	if err := pause(ctx, down); err != nil {
		return err
	}
	return start()
}
