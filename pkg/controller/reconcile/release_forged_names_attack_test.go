package reconcile

import (
	"encoding/json"
	"testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAReleaseNeverWritesAnOwnershipMarkFromTheRecord: status.adopted is
// the names a release gives back, and a tenant can write part of it. A
// v1 update of the main resource keeps status as stored in v1's fields,
// but metadata.annotations are the writer's, and the annotation
// samplecrd.k8s.io/v2-subnets carries status.adopted.subnets after the
// first: converted to v2, it is status. Namespace B's Network, which
// adopted a dual-stack network, plants as the "own names" of its second
// subnet the mark of namespace A's Network; deleting it (Orphan, as an
// adoption is) would write that mark onto the subnet, handing it to A's
// Network (which a Delete of A's then deletes or releases) or to any UID
// B names. A release never writes a mark: a resource that carried one was
// never adopted (adoption refuses every mark), so a record that names one
// is forged, and the resource gets the release mark instead.
func TestAReleaseNeverWritesAnOwnershipMarkFromTheRecord(t *testing.T) {
	victim := neutron.Owner{Namespace: "team-a", Name: "prod", UID: otherUID}
	forged := samplecrdv2.AdoptedSubnet{ID: "subnet-3", Name: ours.ResourceName(victim), Description: ours.Description()}
	rest, err := json.Marshal(map[string]any{
		"subnets":        []samplecrdv2.SubnetSpec{{CIDR: "fd00:10::/64"}},
		"adoptedSubnets": []samplecrdv2.AdoptedSubnet{forged},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := deleting(provisioned(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), seededNet, seededSubnet))
	n.Spec.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan
	n.Annotations = map[string]string{samplecrdv1.SubnetsAnnotation: string(rest)}
	n.Status.Adopted = &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "by hand",
		SubnetID: seededSubnet, SubnetName: "handmade-4", SubnetDescription: "v4"}
	f := newFixture(t, n, func(f *neutronfake.Neutron) {
		id, _ := f.SeedOwned(ours, owner, "192.168.0.0/16", "192.168.0.1")
		f.AddSubnet(id, ours.ResourceName(owner), ours.Description(), "fd00:10::/64", "fd00:10::1")
	})
	if got := f.stored("net").Status.Adopted; got == nil || len(got.Subnets) != 2 || got.Subnets[1] != forged {
		t.Fatalf("the premise: the annotation did not reach status.adopted: %+v", got)
	}
	if out := f.sync("net"); !out.Finalized || out.Err != nil {
		t.Fatalf("the release: finalized %t, %v", out.Finalized, out.Err)
	}
	for _, s := range f.neutron.Subnets() {
		if o, ok := ours.OwnerOf(s.Name, s.Description); ok {
			t.Errorf("released subnet %s (%s) is %q / %q: it carries the mark of %s", s.ID, s.CIDR, s.Name, s.Description, o.Key())
		}
		if neutron.IsMark(s.Description) {
			t.Errorf("released subnet %s (%s) carries a mark: %q", s.ID, s.CIDR, s.Description)
		}
	}
	for _, net := range f.neutron.Networks() {
		if neutron.IsMark(net.Description) {
			t.Errorf("released network %s carries a mark: %q", net.ID, net.Description)
		}
	}
}
