package fake

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// TestAnUpdateIsMadeOnlyOntoTheRevisionItNames: as neutron-server's
// If-Match, an update that names the revision the resource is at is made
// and raises it; one that names a revision the resource has left is
// refused with the real client's 412 and changes nothing; one that names
// none is made whatever the revision.
func TestAnUpdateIsMadeOnlyOntoTheRevisionItNames(t *testing.T) {
	tests := []struct {
		name string
		// ifRevision maps the revision read to the one the update names
		// (nil: none).
		ifRevision func(read int) *int
		wantStale  bool
	}{
		{"the revision read: made, and raised", func(read int) *int { return &read }, false},
		{"a revision since left: refused, nothing changed", func(read int) *int { return ptr.To(read - 1) }, true},
		{"a revision not reached yet: refused", func(read int) *int { return ptr.To(read + 1) }, true},
		{"no revision: made unconditionally, as Neutron does", func(int) *int { return nil }, false},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := New()
			id := f.AddNetwork("net", "")
			sid := f.AddSubnet(id, "sub", "", "10.0.0.0/24", "10.0.0.1")
			// Changed once since it was made, so that the revision left
			// is one the resource really had.
			if _, err := f.UpdateSubnet(ctx, sid, neutron.SubnetUpdate{Name: ptr.To("sub")}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.UpdateNetwork(ctx, id, neutron.NetworkUpdate{Name: ptr.To("net")}); err != nil {
				t.Fatal(err)
			}
			net, sub := f.Networks()[0], f.Subnets()[0]

			gotSub, err := f.UpdateSubnet(ctx, sid, neutron.SubnetUpdate{Name: ptr.To("changed"), IfRevision: tc.ifRevision(sub.RevisionNumber)})
			check(t, "subnet", err, tc.wantStale, sub.RevisionNumber, gotSub.RevisionNumber, f.Subnets()[0].Name, f.Subnets()[0].RevisionNumber)
			// The subnet's change, made or not, is its network's:
			// read it again.
			if !tc.wantStale {
				if net.RevisionNumber+1 != f.Networks()[0].RevisionNumber {
					t.Errorf("the subnet's change raised its network's revision from %d to %d, want by one, as Neutron does",
						net.RevisionNumber, f.Networks()[0].RevisionNumber)
				}
				net = f.Networks()[0]
			} else if net.RevisionNumber != f.Networks()[0].RevisionNumber {
				t.Errorf("a refused subnet update raised its network's revision")
			}

			gotNet, err := f.UpdateNetwork(ctx, id, neutron.NetworkUpdate{Name: ptr.To("changed"), IfRevision: tc.ifRevision(net.RevisionNumber)})
			check(t, "network", err, tc.wantStale, net.RevisionNumber, gotNet.RevisionNumber, f.Networks()[0].Name, f.Networks()[0].RevisionNumber)
		})
	}
}

// check says whether an update of kind from revision read, answered with
// err and revision answered, left what a later read shows (name, stored).
func check(t *testing.T, kind string, err error, wantStale bool, read, answered int, name string, stored int) {
	t.Helper()
	if wantStale {
		if !neutron.IsStale(err) {
			t.Errorf("the %s update: error %v, want Neutron's 412 (neutron.IsStale)", kind, err)
		}
		if name == "changed" || stored != read {
			t.Errorf("the refused %s update changed it: name %q, revision %d (was %d)", kind, name, stored, read)
		}
		return
	}
	if err != nil {
		t.Fatalf("the %s update: %v", kind, err)
	}
	if name != "changed" || stored != read+1 || answered != stored {
		t.Errorf("the %s update: name %q, revision %d (answered %d), want %q at %d", kind, name, stored, answered, "changed", read+1)
	}
}
