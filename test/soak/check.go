package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// converge waits until every Network is Ready for its generation and no
// deleted one is left, and returns when that was first seen.
func (s *soak) converge(ctx context.Context, timeout time.Duration) (time.Time, error) {
	var waiting []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := s.supervise(); err != nil {
			return false, err
		}
		list, err := s.nc.SamplecrdV1().Networks("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil // the API server may be coming back
		}
		waiting = nil
		for _, n := range list.Items {
			c := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady)
			if n.DeletionTimestamp != nil || c == nil || c.Status != metav1.ConditionTrue || n.Status.ObservedGeneration != n.Generation {
				waiting = append(waiting, waitingFor(&n, c))
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("%d Networks not Ready for their generation (or not gone) %s after the workload: %s",
			len(waiting), timeout, strings.Join(waiting, "; "))
	}
	return time.Now(), nil
}

// waitingFor says what a Network that is not done waits for.
func waitingFor(n *samplecrdv1.Network, ready *metav1.Condition) string {
	state := "no Ready condition"
	if ready != nil {
		state = fmt.Sprintf("Ready=%s %s (%q) for generation %d", ready.Status, ready.Reason, ready.Message, n.Status.ObservedGeneration)
	}
	deleting := ""
	if n.DeletionTimestamp != nil {
		deleting = ", deleting"
	}
	return fmt.Sprintf("%s/%s generation %d%s: %s", n.Namespace, n.Name, n.Generation, deleting, state)
}

// checkAfterCollection runs check until it finds nothing, for at most the
// time garbage collection may take (the grace period, and the resync
// period for the list that sights it first), and returns what the last
// check found. The window adds a lease duration for a leader that fails
// over as the workload ends: its successor lists Neutron when it starts to
// lead, and collects from there. Each check runs under the run's context,
// not the poll's: one begun as the poll's deadline falls would fail on
// that deadline instead of saying what it found.
func (s *soak) checkAfterCollection(ctx context.Context) ([]string, error) {
	var violations []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, orphanGrace+neutronResync+leaseDuration+5*time.Second, true, func(context.Context) (bool, error) {
		var err error
		violations, err = s.check(ctx)
		return err == nil && len(violations) == 0, err
	})
	if err != nil && !wait.Interrupted(err) {
		return nil, err
	}
	return violations, nil
}

// check compares Neutron with the Networks, and returns what differs:
// a Network without its network, or whose subnet is not its spec; a
// network or subnet with the mark and no Network (a leak); a foreign
// resource that Neutron no longer answers for with the same bytes.
func (s *soak) check(ctx context.Context) ([]string, error) {
	list, err := s.nc.SamplecrdV1().Networks("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	mark, err := neutron.NewMark(cluster, s.stack.ControlPlane.ClusterUID)
	if err != nil {
		return nil, err
	}
	allNets, allSubnets, err := s.listNeutron(ctx)
	if err != nil {
		return nil, err
	}
	var violations []string
	ours := map[string]networks.Network{}
	for _, n := range allNets {
		if n.Description == mark.Description() {
			ours[n.ID] = n
		}
	}
	subnetsOf, markedSubnets := map[string][]subnets.Subnet{}, map[string]subnets.Subnet{}
	for _, sn := range allSubnets {
		subnetsOf[sn.NetworkID] = append(subnetsOf[sn.NetworkID], sn)
		if sn.Description == mark.Description() {
			markedSubnets[sn.ID] = sn
		}
	}
	for _, n := range list.Items {
		net, ok := ours[n.Status.NetworkID]
		if !ok {
			violations = append(violations, fmt.Sprintf("Network %s/%s: its Neutron network %q is missing", n.Namespace, n.Name, n.Status.NetworkID))
			continue
		}
		delete(ours, net.ID)
		sns := subnetsOf[net.ID]
		for _, sn := range sns {
			delete(markedSubnets, sn.ID)
		}
		if len(sns) != 1 || !matches(&n, sns[0]) {
			violations = append(violations, fmt.Sprintf("Network %s/%s (cidr %s gateway %s pool %q, status cidr %s): Neutron has subnets %v",
				n.Namespace, n.Name, n.Spec.CIDR, n.Spec.Gateway, n.Spec.SubnetPool, n.Status.CIDR, describe(sns)))
		}
	}
	violations = append(violations, s.checkReleased(list.Items, allNets, allSubnets)...)
	for id, n := range ours {
		violations = append(violations, fmt.Sprintf("leaked: network %s %q has no Network", id, n.Name))
	}
	for id, sn := range markedSubnets {
		violations = append(violations, fmt.Sprintf("leaked: subnet %s %q (%s) of network %s has no Network", id, sn.Name, sn.CIDR, sn.NetworkID))
	}
	for url, want := range s.foreign {
		if got, err := s.readRaw(ctx, url); err != nil || !bytes.Equal(got, want) {
			violations = append(violations, fmt.Sprintf("foreign %s was touched: Neutron answered %s (%v), was %s", url, got, err, want))
		}
	}
	sort.Strings(violations)
	return violations, nil
}

// matches reports whether sn is what Network n asks for: its range and
// gateway, or for a range from the pool, the range its status reports,
// inside the pool's 10.151.0.0/16.
func matches(n *samplecrdv1.Network, sn subnets.Subnet) bool {
	if n.Spec.SubnetPool != "" {
		return sn.CIDR == n.Status.CIDR && strings.HasPrefix(sn.CIDR, "10.151.")
	}
	return sn.CIDR == n.Spec.CIDR && sn.GatewayIP == n.Spec.Gateway
}

// checkReleased checks the adoptees that no Network holds any more: each
// must be in Neutron under exactly its own name and description again,
// not deleted and not left marked.
func (s *soak) checkReleased(live []samplecrdv1.Network, nets []networks.Network, subs []subnets.Subnet) []string {
	held := map[string]bool{}
	for _, n := range live {
		held[n.Status.NetworkID] = true
		if n.Spec.Adopt != nil {
			held[n.Spec.Adopt.NetworkID] = true
		}
	}
	byID := map[string][2]string{}
	for _, n := range nets {
		byID[n.ID] = [2]string{n.Name, n.Description}
	}
	for _, sn := range subs {
		byID[sn.ID] = [2]string{sn.Name, sn.Description}
	}
	var violations []string
	for _, a := range s.adoptees {
		if held[a.networkID] {
			continue
		}
		want := [2]string{a.name, a.description}
		for _, id := range []string{a.networkID, a.subnetID} {
			if id == "" {
				continue // its subnet was never made
			}
			if got, ok := byID[id]; !ok || got != want {
				violations = append(violations, fmt.Sprintf("released adoptee %s: Neutron has name and description %q (present: %t), want %q; writes to it: %s",
					id, got, ok, want, s.hist.writesTo(id)))
			}
		}
	}
	return violations
}

// listNeutron lists every network and subnet, through the noauth
// neutron-server: an operator's view of all projects.
func (s *soak) listNeutron(ctx context.Context) ([]networks.Network, []subnets.Subnet, error) {
	pages, err := networks.List(s.stack.Neutron.Client, networks.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, nil, err
	}
	nets, err := networks.ExtractNetworks(pages)
	if err != nil {
		return nil, nil, err
	}
	if pages, err = subnets.List(s.stack.Neutron.Client, subnets.ListOpts{}).AllPages(ctx); err != nil {
		return nil, nil, err
	}
	subs, err := subnets.ExtractSubnets(pages)
	return nets, subs, err
}

func describe(sns []subnets.Subnet) []string {
	var out []string
	for _, sn := range sns {
		out = append(out, sn.CIDR+" gw "+sn.GatewayIP)
	}
	return out
}
