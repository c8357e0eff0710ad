package reconcile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
)

// TestDelete is the table of passes of deletion and release (deletionPolicy).
func TestDelete(t *testing.T) {
	runPasses(t, []passCase{
		{
			name:        "a deleted Network's network is deleted, its subnet with it, then its finalizer released",
			network:     deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.DeleteNetwork},
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
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.GetNetwork, neutronfake.UpdateNetwork},
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
			failOn:      map[string]error{neutronfake.DeleteNetwork: errUnavailable},
			wantErr:     "backoff",
			wantNeutron: []string{neutronfake.DeleteNetwork},
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
			wantNeutron: []string{neutronfake.DeleteNetwork, neutronfake.PortsOf, neutronfake.PortsOf},
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
			wantNeutron: []string{neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check:       untouched,
		},
	})
}

// TestADeleteIsOneDeletePerNetwork: Neutron deletes a network's subnets
// (and its DHCP ports) with it, so a Network's delete is one DELETE for
// its network, after a read of it and of its subnets (door.go: that they
// are all the Network's, and the network's revision), and the inventory
// forgets the subnets with it. Only what
// Neutron requires comes first: our router interface when the network is
// refused as in use, and the release of a subnet of ours on a network that
// is not ours, which only an unfinished adoption leaves and which is a
// user's, never deleted.
func TestADeleteIsOneDeletePerNetwork(t *testing.T) {
	deletingNet := func() *samplecrdv1.Network {
		return deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))
	}
	const theirNet, ourSubnetOnTheirs, theirSubnet = "net-3", "subnet-4", "subnet-5"
	runPasses(t, []passCase{
		{
			name:        "a network and its subnet: one delete of the network",
			network:     deletingNet(),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check:       func(t *testing.T, f *fixture) { neutronHolds(t, f, nil, nil); forgotten(t, f) },
		},
		{
			name:    "Neutron's own ports (DHCP, OVN metadata) do not block: they go with the network, in the one request",
			network: deletingNet(),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				f.AddPort(seededNet, "port-dhcp", "network:dhcp")
				f.AddPort(seededNet, "port-metadata", "network:distributed")
			},
			wantNeutron: []string{neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check: func(t *testing.T, f *fixture) {
				neutronHolds(t, f, nil, nil)
				if ports := f.neutron.Ports(seededNet); len(ports) != 0 {
					t.Errorf("ports left on the deleted network: %+v", ports)
				}
				forgotten(t, f)
			},
		},
		{
			name:    "a router interface of ours that nothing recorded: the network is refused, the interface detached, the network deleted",
			network: deletingNet(),
			seed:    func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort(edgeRouter)) },
			wantNeutron: []string{neutronfake.DeleteNetwork, neutronfake.PortsOf, neutronfake.RemoveRouterInterface,
				neutronfake.DeleteNetwork},
			wantEvents: []string{"Normal Deleted"},
			check:      func(t *testing.T, f *fixture) { neutronHolds(t, f, nil, nil); forgotten(t, f) },
		},
		{
			name:    "a subnet of ours on a network that is not ours (an adoption that never finished) is given back, not deleted; that network and its other subnet stay",
			network: deletingNet(),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				theirs := f.AddNetwork("their-net", "")
				f.AddSubnet(theirs, ours.ResourceName(owner), ours.Description(), "10.9.0.0/24", "10.9.0.1")
				f.AddSubnet(theirs, "their-subnet", "", "10.9.1.0/24", "10.9.1.1")
			},
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check: func(t *testing.T, f *fixture) {
				neutronHolds(t, f, []string{theirNet}, []string{ourSubnetOnTheirs, theirSubnet})
				for _, s := range f.neutron.Subnets() {
					if _, ok := ours.OwnerOf(s.Name, s.Description); ok {
						t.Errorf("subnet %s still carries the mark", s.ID)
					}
				}
				forgotten(t, f)
			},
		},
	})
}

// neutronHolds fails t unless Neutron holds exactly the networks and
// subnets named.
func neutronHolds(t *testing.T, f *fixture, networks, subnets []string) {
	t.Helper()
	var nets, subs []string
	for _, n := range f.neutron.Networks() {
		nets = append(nets, n.ID)
	}
	for _, s := range f.neutron.Subnets() {
		subs = append(subs, s.ID)
	}
	if !slices.Equal(nets, networks) || !slices.Equal(subs, subnets) {
		t.Errorf("Neutron holds networks %q and subnets %q, want %q and %q", nets, subs, networks, subnets)
	}
}

// forgotten fails t unless the inventory holds nothing of the Network:
// what it deleted, the network's subnets too, is not there for the next
// pass or the garbage collector to act on.
func forgotten(t *testing.T, f *fixture) {
	t.Helper()
	if held := f.inv.Get(testUID); !held.Empty() {
		t.Errorf("the inventory still holds %+v", held)
	}
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

// TestALookAlikeOfNeutronsOwnPortIsNamedAsBlocking: Neutron deletes with a
// network only the ports whose device_owner is exactly one of its own;
// any other, "network:dhcp-cache" say, which a project member may set on a
// port of their own, makes it refuse (409 NetworkInUse), and the Network
// names that port as it names a VM's.
func TestALookAlikeOfNeutronsOwnPortIsNamedAsBlocking(t *testing.T) {
	network := deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		inSync("192.168.0.0/16", "192.168.0.1")(n)
		n.AddPort(seededNet, "port-look-alike", "network:dhcp-cache")
	})
	if out := f.sync("net"); out.Finalized {
		t.Fatal("finalized while a port blocks the delete")
	}
	cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
	if cond == nil || cond.Reason != samplecrdv1.ReasonDeletionBlocked {
		t.Fatalf("Ready = %+v, want DeletionBlocked", cond)
	}
	if !strings.Contains(cond.Message, "port-look-alike") {
		t.Errorf("DeletionBlocked does not name the port that blocks: %q", cond.Message)
	}
}

// tenantB is a Network of another namespace, whose marked subnet a
// Network's delete must not take.
var tenantB = neutron.Owner{Namespace: "tenant-b", Name: "b", UID: types.UID("b0b0b0b0-0000-4000-8000-0000000000b0")}

// strangerSubnets are subnets that sit on a Network's network and are not
// its own: each seed puts one there, after the Network's own network and
// subnet (seededNet, seededSubnet), as "subnet-3".
var strangerSubnets = []struct {
	name string
	seed func(f *neutronfake.Neutron)
}{
	{"a person's subnet, added by hand", func(f *neutronfake.Neutron) {
		f.AddSubnet(seededNet, "lab-subnet", "made by hand", "10.7.0.0/24", "10.7.0.1")
	}},
	{"another cluster's subnet", func(f *neutronfake.Neutron) {
		f.AddSubnet(seededNet, otherCluster.ResourceName(owner), otherCluster.Description(), "10.7.0.0/24", "10.7.0.1")
	}},
	// A crash inside a lost adoption race leaves one: B marks its subnet
	// on network N, A's adoption marks N first, and B's pass dies before
	// it puts its subnet back (adopt.go).
	{"namespace B's marked subnet", func(f *neutronfake.Neutron) {
		f.AddSubnet(seededNet, ours.ResourceName(tenantB), ours.Description(), "10.7.0.0/24", "10.7.0.1")
	}},
}

const strangerSubnet = "subnet-3"

// TestADeleteTakesNoSubnetThatIsNotItsOwn: Neutron deletes every subnet on
// a network with it, whoever made it, so a network is deleted only while
// every subnet on it is its owner's. Otherwise nothing is sent: a
// Network's delete says DeletionBlocked, naming the subnet, and keeps its
// finalizer; the garbage collector's delete of an orphan is refused the
// same way (both go through DeleteOwned and the inventory's door); and the
// inventory still holds B's subnet for B.
func TestADeleteTakesNoSubnetThatIsNotItsOwn(t *testing.T) {
	for _, tc := range strangerSubnets {
		seed := func(n *neutronfake.Neutron) { inSync("192.168.0.0/16", "192.168.0.1")(n); tc.seed(n) }
		t.Run("a Network's delete, with "+tc.name, func(t *testing.T) {
			f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)), seed)
			if out := f.sync("net"); out.Finalized || out.Requeue != AddRateLimited {
				t.Errorf("outcome %+v, want held and retried with backoff", out)
			}
			neutronHolds(t, f, []string{seededNet}, []string{seededSubnet, strangerSubnet})
			if got := f.neutron.Requests(); !slices.Equal(got, []string{neutronfake.GetNetwork, neutronfake.SubnetsOf}) {
				t.Errorf("Neutron requests %q, want the network and its subnets read, and nothing written", got)
			}
			cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
			if cond == nil || cond.Reason != samplecrdv1.ReasonDeletionBlocked || !strings.Contains(cond.Message, strangerSubnet) {
				t.Errorf("Ready = %+v, want DeletionBlocked naming %s", cond, strangerSubnet)
			}
			if !hasFinalizer(f.network("net")) {
				t.Error("the finalizer is gone")
			}
		})
		t.Run("the collector's delete of an orphan, with "+tc.name, func(t *testing.T) {
			f := newFixture(t, nil, seed) // no Network of testUID: an orphan
			var strangers *inventory.SubnetsNotOursError
			if err := DeleteOwned(f.ctx, f.inv, f.inv.Get(testUID), nil); !errors.As(err, &strangers) || !slices.Equal(strangers.SubnetIDs, []string{strangerSubnet}) {
				t.Errorf("DeleteOwned = %v, want refused for %s", err, strangerSubnet)
			}
			neutronHolds(t, f, []string{seededNet}, []string{seededSubnet, strangerSubnet})
		})
	}
	t.Run("the inventory keeps B's subnet, which is still in Neutron", func(t *testing.T) {
		f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			func(n *neutronfake.Neutron) { inSync("192.168.0.0/16", "192.168.0.1")(n); strangerSubnets[2].seed(n) })
		f.sync("net")
		if held := f.inv.Get(tenantB.UID).Subnets; len(held) != 1 || held[0].ID != strangerSubnet {
			t.Errorf("the inventory holds %+v for B, want %s", held, strangerSubnet)
		}
	})
}

// TestASubnetMadeDuringTheDeleteIsNotTaken: a subnet made on the network
// after its revision was seen (by the latest list, or by the read a write
// since the list calls for) raises that revision, and the DELETE, sent
// If-Match on it, is refused (412) instead of taking the subnet. The door
// then reads the network and its subnets, finds the stranger, and sends
// nothing more; so does the next pass. Without the If-Match (a DELETE
// sent blind onto the list's view), both cases take the stranger's
// subnet.
func TestASubnetMadeDuringTheDeleteIsNotTaken(t *testing.T) {
	for _, tc := range []struct {
		name string
		// race wraps Neutron so that the stranger's subnet is made at
		// the moment the case names.
		race func(f *fixture) neutron.Interface
		// sinceTheList is a write of the controller's since the latest
		// list: the store's revision of the network is then no proof.
		sinceTheList bool
		want         []string
	}{
		{
			name: "after the list, just before the DELETE onto the revision it read",
			race: func(f *fixture) neutron.Interface {
				return &changedBeforeDelete{Interface: f.neutron, change: func() { strangerSubnets[0].seed(f.neutron) }}
			},
			want: []string{neutronfake.DeleteNetwork, neutronfake.GetNetwork, neutronfake.SubnetsOf},
		},
		{
			name: "after the read that a write since the list calls for",
			race: func(f *fixture) neutron.Interface {
				return &changedAfterRead{Interface: f.neutron, times: 1, change: func() { strangerSubnets[0].seed(f.neutron) }}
			},
			sinceTheList: true,
			want: []string{neutronfake.GetNetwork, neutronfake.SubnetsOf, neutronfake.DeleteNetwork,
				neutronfake.GetNetwork, neutronfake.SubnetsOf},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
				inSync("192.168.0.0/16", "192.168.0.1"))
			f.connect(tc.race(f), defaultOptions(), nil)
			if tc.sinceTheList {
				if _, err := f.inv.UpdateSubnet(f.ctx, owner, seededSubnet, neutron.SubnetUpdate{DNSNameservers: &[]string{"192.168.0.53"}}); err != nil {
					t.Fatal(err)
				}
			}
			f.neutron.ClearRequests()

			var strangers *inventory.SubnetsNotOursError
			if out := f.sync("net"); out.Finalized || !errors.As(out.Err, &strangers) {
				t.Fatalf("outcome %+v, want held for the subnet made after the revision was seen", out)
			}
			if got := f.neutron.Requests(); !slices.Equal(got, tc.want) {
				t.Errorf("Neutron requests %q, want %q: the refused delete, then the reads that find the stranger", got, tc.want)
			}
			if out := f.sync("net"); out.Finalized {
				t.Fatal("the second pass finalized")
			}
			neutronHolds(t, f, []string{seededNet}, []string{seededSubnet, strangerSubnet})
			cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
			if cond == nil || cond.Reason != samplecrdv1.ReasonDeletionBlocked || !strings.Contains(cond.Message, strangerSubnet) {
				t.Errorf("Ready = %+v, want DeletionBlocked naming %s", cond, strangerSubnet)
			}
		})
	}
}

// changedBeforeDelete is Neutron where someone makes change once, just
// before the first network DELETE arrives.
type changedBeforeDelete struct {
	neutron.Interface
	change func()
	done   bool
}

func (c *changedBeforeDelete) DeleteNetwork(ctx context.Context, id string, ifRevision int) error {
	if !c.done {
		c.done = true
		c.change()
	}
	return c.Interface.DeleteNetwork(ctx, id, ifRevision)
}
