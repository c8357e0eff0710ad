package reconcile

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAPlaceNotListedIsNotRecorded: attack on ec37777 and recordPlace.
// The inventory is listed in region 1. The controller's clouds.yaml is
// swapped to region 2 for a moment (a wrong Secret applied, then put
// back) and a new Network's first pass comes in that moment: recordPlace
// stores region 2, the place the credentials reach, though nothing was
// ever listed there, and the door then refuses the create (the store is
// region 1's). The file is put back and region 1 listed again; but
// status.place never changes, so the Network is CredentialsUnavailable
// for good, and so is its deletion (samePlace compares region 2 with
// region 1), though nothing of it exists anywhere: a moment's credentials
// wedge every Network created in that moment.
//
// The fix should guarantee: a place is recorded only once the inventory
// has been listed in it (the place every request of the pass then goes
// to, through the door); until then the pass fails with a
// CredentialsError, records nothing, and asks for a list.
//
// For a dual-stack Network the same holds of both subnets: once region 1
// is listed, both are made there, on one network.
func TestAPlaceNotListedIsNotRecorded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network *samplecrdv1.Network
		ranges  []string
	}{
		{"one subnet", newNetwork("192.168.0.0/16", "192.168.0.1"), []string{"192.168.0.0/16"}},
		{"two subnets", withSubnets(newNetwork(v4CIDR, v4GW), samplecrdv2.SubnetSpec{CIDR: v6CIDR}), []string{v4CIDR, v6CIDR}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.network, func(n *neutronfake.Neutron) {
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
			wantRanges(tc.ranges...)(t, f)
		})
	}
}
