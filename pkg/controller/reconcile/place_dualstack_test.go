package reconcile

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// The place tests of main (place_record_attack_test.go, place_swap_test.go)
// speak of a Network of one subnet; these are the same guarantees for a
// v2 Network of two, whose ladder makes and whose delete takes a subnet
// per spec.subnets entry.

// TestAPlaceNotListedIsNotRecordedForTwoSubnets is
// TestAPlaceNotListedIsNotRecorded for a dual-stack Network: while the
// credentials reach region 2 for a moment, nothing is recorded and
// nothing made; once region 1 is back and listed, both subnets are made
// there, on one network, and status.place names region 1.
func TestAPlaceNotListedIsNotRecordedForTwoSubnets(t *testing.T) {
	network := withSubnets(newNetwork(v4CIDR, v4GW), samplecrdv2.SubnetSpec{CIDR: v6CIDR})
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		n.SetRegion("region-1")
	})
	f.list()

	f.neutron.SetRegion("region-2")
	out := f.sync("net")
	if !neutron.IsCredentialsError(out.Err) {
		t.Errorf("the pass during the swap: %+v, want a CredentialsError", out)
	}
	if n, s := f.neutron.Networks(), f.neutron.Subnets(); len(n) != 0 || len(s) != 0 {
		t.Fatalf("region 2 holds networks %+v and subnets %+v", n, s)
	}
	if p := f.stored("net").Status.Place; p != nil {
		t.Fatalf("status.place = %+v during the swap, want none: region 2 was never listed", p)
	}
	f.neutron.SetRegion("region-1")
	f.list()

	out = f.sync("net")
	stored := f.stored("net")
	if out.Err != nil || !meta.IsStatusConditionTrue(stored.Status.Conditions, samplecrdv1.ConditionReady) {
		t.Errorf("once the file is back and region 1 listed, the pass = %+v, status %+v: want Ready", out, stored.Status)
	}
	if p := stored.Status.Place; p == nil || p.Region != "region-1" {
		t.Errorf("status.place = %+v, want region 1, the only place the inventory was listed in", p)
	}
	wantRanges(v4CIDR, v6CIDR)(t, f)
}

// TestADeleteOfTwoSubnetsGoesOnlyToTheRecordedPlace is
// TestADeleteGoesOnlyToTheRecordedPlace for a dual-stack Network: the
// credentials move to region 2, and region 2 is listed, between the
// delete's own check and the door's. Region 2's 404 must not count as
// done: the finalizer stays, and region 1 keeps the network and both
// subnets.
func TestADeleteOfTwoSubnetsGoesOnlyToTheRecordedPlace(t *testing.T) {
	network := deleting(inPlace("project-a", "region-1")(
		withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet), samplecrdv2.SubnetSpec{CIDR: v6CIDR})))
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		n.SetRegion("region-1")
		withV6Subnet(n)
	})
	swapped := swapAtTheDoor(f)

	out := f.sync("net")
	if out.Finalized || !hasFinalizer(f.network("net")) {
		t.Errorf("outcome %+v: the finalizer went while the network is in region 1", out)
	}
	f.neutron.SetRegion("region-1")
	if n := f.neutron.Networks(); !*swapped || len(n) != 1 {
		t.Errorf("region 1 holds %+v (swapped: %t), want the Network's network", n, *swapped)
	}
	if got, want := ourRanges(f), []string{v4CIDR, v6CIDR}; !slices.Equal(got, want) {
		t.Errorf("region 1 holds our subnets %q, want %q", got, want)
	}
}
