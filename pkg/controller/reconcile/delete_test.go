package reconcile

import (
	"errors"
	"testing"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
)

// TestDelete is the table of passes of deletion and release (deletionPolicy).
func TestDelete(t *testing.T) {
	runPasses(t, []passCase{
		{
			name:        "a deleted Network's subnet and network are deleted, then its finalizer released",
			network:     deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks())+len(f.neutron.Subnets()) != 0 {
					t.Errorf("left in Neutron: %v %v", f.neutron.Networks(), f.neutron.Subnets())
				}
			},
		},
		{
			name: "deletionPolicy Orphan: the network and subnet stay in Neutron without the mark, then the finalizer goes",
			network: withSpec(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
				func(s *samplecrdv1.NetworkSpec) { s.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan }),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
			wantEvents:  []string{"Normal Orphaned"},
			check: func(t *testing.T, f *fixture) {
				nets, subs := f.neutron.Networks(), f.neutron.Subnets()
				if len(nets) != 1 || len(subs) != 1 {
					t.Fatalf("Neutron holds %v and %v, want the network and its subnet", nets, subs)
				}
				for _, got := range [][2]string{{nets[0].Name, nets[0].Description}, {subs[0].Name, subs[0].Description}} {
					if _, ok := ours.OwnerOf(got[0], got[1]); ok {
						t.Errorf("%q / %q still carries the mark", got[0], got[1])
					}
					if want := "released by network-controller (cluster=test-cluster) when Network default/net was deleted"; got[1] != want {
						t.Errorf("description %q, want %q", got[1], want)
					}
				}
			},
		},
		{
			name:        "a deletion while Neutron is down keeps the finalizer and says why",
			network:     deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			failOn:      map[string]error{neutronfake.DeleteSubnet: errUnavailable},
			wantErr:     "backoff",
			wantNeutron: []string{neutronfake.DeleteSubnet},
			wantReady:   "False/Deleting",
			wantEvents:  []string{"Warning DeletionFailed"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released before Neutron confirmed the deletion")
				}
			},
		},
		{
			name:    "a delete blocked by a VM's port: DeletionBlocked naming the port, finalizer held, backoff",
			network: deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				f.AddPort(seededNet, "port-dhcp", "network:dhcp")
				f.AddPort(seededNet, "port-vm", "compute:nova")
			},
			wantErr: "backoff",
			// Its own router interfaces first (none), then what blocks.
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.PortsOf, neutronfake.PortsOf},
			wantReady:   "False/DeletionBlocked",
			wantEvents:  []string{"Warning DeletionBlocked"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released while Neutron refused the delete")
				}
			},
		},
		{
			name:    "a deleted Network's look-alikes survive its deletion",
			network: deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				seedForeign(f)
			},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check:       untouched,
		},
	})
}

// TestAFencedReplicaSaysNothing: while this replica cannot prove it still
// leads, no pass (a sync that would update, a delete, a release) writes to
// Neutron, and none returns a condition, so the controller writes no
// status over the new leader's. (The soak found the delete pass reading
// the condition it did not get.)
func TestAFencedReplicaSaysNothing(t *testing.T) {
	inNeutron := provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
	for name, network := range map[string]*samplecrdv1.Network{
		"a sync that would move the gateway": withSpec(inNeutron.DeepCopy(), func(s *samplecrdv1.NetworkSpec) { s.Gateway = "192.168.0.2" }),
		"a delete":                           deleting(inNeutron.DeepCopy()),
		"a release (deletionPolicy Orphan)": withSpec(deleting(inNeutron.DeepCopy()),
			func(s *samplecrdv1.NetworkSpec) { s.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan }),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, network, inSync("192.168.0.0/16", "192.168.0.1"))
			f.fenced = errors.New("the Lease was last renewed 12s ago")
			out := f.sync(network.Name)
			if !errors.Is(out.Err, inventory.ErrFenced) || out.Requeue != AddRateLimited {
				t.Errorf("outcome %+v, want ErrFenced retried with backoff", out)
			}
			if out.Condition != nil || out.Warning != "" {
				t.Errorf("a fenced pass says %+v (Warning %q), want nothing", out.Condition, out.Warning)
			}
			if got := f.neutron.Requests(); len(got) != 0 {
				t.Errorf("Neutron requests %q while fenced", got)
			}
		})
	}
}
