package reconcile

import (
	"testing"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// TestAReleaseOfAHalfAdoptedSubnetWritesOnlyWhatIsStillItsOwn: the
// attacker's mark sits on the user's subnet on the victim's network (a
// half-done adoption, halfDoneOnTheVictimsNetwork), listed. Before the
// next list, a person takes the subnet out of management and a third
// Network adopts it (its mark, on a revision it read). The attacker then
// deletes its Network. DeleteOwned no longer deletes the subnet (eb65745),
// but it releases it: ReleaseSubnet writes the names status.adopted
// records onto the subnet unconditionally (no fresh read of its mark, no
// If-Match), on the strength of a list that is now stale. The third
// Network's mark is overwritten: a tenant relabels a subnet that is no
// longer its own, and the third Network loses it from its inventory.
// DeleteNetwork reads Neutron before it sends exactly because "a person
// may have ... marked it for another Network since" the list; the release
// of a subnet on a network not its owner's, the one write DeleteOwned
// makes to something on another's network, does not.
//
// The fix should guarantee: a release writes onto the revision whose mark
// it read as the owner's (If-Match), or reads the subnet first and leaves
// it (and asks for a list) when the mark is not the owner's.
func TestAReleaseOfAHalfAdoptedSubnetWritesOnlyWhatIsStillItsOwn(t *testing.T) {
	f := halfDoneOnTheVictimsNetwork(t)
	s, ok := usersSubnet(f)
	if !ok {
		t.Fatal("no user's subnet")
	}
	third := neutron.Owner{Namespace: "third", Name: "net", UID: "0c0c0c0c-0000-4000-8000-00000000000c"}
	name, desc := ours.ResourceName(third), ours.Description()
	if _, err := f.neutron.UpdateSubnet(f.ctx, s.ID, neutron.SubnetUpdate{Name: &name, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	f.update(deleting(f.network("net")))
	f.sync("net")
	s, ok = usersSubnet(f)
	if !ok {
		t.Fatal("the attacker's delete deleted the subnet the third Network holds")
	}
	if o, marked := ours.OwnerOf(s.Name, s.Description); !marked || o.UID != third.UID {
		t.Errorf("the subnet the third Network adopted after the attacker's list is %q %q after the attacker's delete: the release overwrote another Network's mark", s.Name, s.Description)
	}
}
