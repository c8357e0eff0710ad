package main

import (
	"context"
	"time"

	"github.com/samplecrd/network-controller/test/framework"
)

// faultKinds are the faults the soak injects, one at a time.
var faultKinds = []string{
	"controller-kill", "controller-stop", "controller-freeze",
	"neutron-restart", "neutron-chaos", "keystone-restart",
	"apiserver-restart", "etcd-restart", "mariadb-restart", "ovn-nb-restart",
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
	case "neutron-chaos":
		return s.chaos(ctx, 5*down)
	case "neutron-restart":
		p := s.stack.Neutron.KeystoneServer
		return outage(ctx, p, down, p.Start)
	case "keystone-restart":
		p := s.stack.Keystone.Server
		return outage(ctx, p, down, p.Start)
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
	}
	return nil
}

// freezeLeader freezes the replica that leads (SIGSTOP; replica pick if
// the Lease names none) for d, longer than the lease, so that the other
// takes over, and thaws it: it resumes with a stale cache and its retries
// due, and must write nothing (pkg/leader's fence).
func (s *soak) freezeLeader(ctx context.Context, pick int, d time.Duration) error {
	i := s.leader()
	if i < 0 || i >= len(s.controllers) {
		i = pick
	}
	c := s.controllers[i]
	if err := c.Freeze(); err != nil {
		return err
	}
	defer func() { _ = c.Thaw() }()
	return pause(ctx, d)
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
