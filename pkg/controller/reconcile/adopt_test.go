package reconcile

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAdoptionRecordsThenMarks: one pass records the network's and
// subnet's own names in status, and only once the API server has stored
// them marks the subnet, then the network, and is Ready. Nothing is
// created.
func TestAdoptionRecordsThenMarks(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
	})
	if out := f.sync("net"); out.Requeue != Forget || out.Err != nil {
		t.Fatalf("the pass: requeue %v (%v), want Forget", out.Requeue, out.Err)
	}
	if got := f.neutron.Requests(); !slices.Equal(got, []string{
		neutronfake.GetNetwork, neutronfake.PortsOf, neutronfake.SubnetsOf, // read; then the names recorded
		neutronfake.UpdateSubnet,
		neutronfake.GetNetwork, neutronfake.UpdateNetwork, // read again: the subnet's mark raised the network's revision
	}) {
		t.Errorf("Neutron requests = %q", got)
	}
	recordedBeforeAnyWrite(t, f)
	if got := f.takeEvents(); !slices.Equal(got, []string{"Normal Adopted"}) {
		t.Errorf("events = %q", got)
	}
	net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
	for _, got := range [][2]string{{net.Name, net.Description}, {sub.Name, sub.Description}} {
		if o, ok := ours.OwnerOf(got[0], got[1]); !ok || o.UID != testUID {
			t.Errorf("%q / %q is not marked as this Network's", got[0], got[1])
		}
	}
	st := f.network("net").Status
	want := &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
		SubnetID: seededSubnet, SubnetName: "handmade"}
	if st.NetworkID != seededNet || st.SubnetID != seededSubnet || !reflect.DeepEqual(st.Adopted, want) {
		t.Errorf("status = %+v", st)
	}
	if cond := meta.FindStatusCondition(st.Conditions, samplecrdv1.ConditionReady); cond == nil || cond.Reason != samplecrdv1.ReasonProvisioned {
		t.Errorf("Ready = %+v", cond)
	}
}

// TestAHalfDoneAdoptionKeepsItsRecord: the names are recorded, the subnet
// marked, the network's mark fails (a 500); the status written for that
// failure keeps the record of the names, and the next pass finishes the
// adoption.
func TestAHalfDoneAdoptionKeepsItsRecord(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade-subnet", "by hand", "192.168.0.0/16", "192.168.0.1")
	})
	f.neutron.FailOn(neutronfake.UpdateNetwork, neutron.ErrorForResponse("updating network", 500, "", "boom"))
	if out := f.sync("net"); out.Err == nil {
		t.Fatal("the pass whose network update failed succeeded")
	}
	want := &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
		SubnetID: seededSubnet, SubnetName: "handmade-subnet", SubnetDescription: "by hand"}
	st := f.network("net").Status
	if st.Adopted == nil || *st.Adopted != *want {
		t.Fatalf("status.adopted after the failure = %+v, want %+v", st.Adopted, want)
	}

	// A 500 opened the breaker; the list after the grace closes it.
	f.neutron.FailOn(neutronfake.UpdateNetwork, nil)
	f.listAfterTheGrace()
	if out := f.sync("net"); out.Err != nil {
		t.Fatalf("the second pass: %v", out.Err)
	}
	n := f.network("net")
	if cond := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v after the second pass", cond)
	}
	if n.Status.Adopted == nil || *n.Status.Adopted != *want {
		t.Errorf("status.adopted = %+v, want the record kept", n.Status.Adopted)
	}
}

// TestAReleaseWaitsForWhatALostMarkDid: the adoption marks the subnet in
// Neutron, but the answer is lost, so the inventory does not know it is
// marked; then the Network is deleted (adopted: deletionPolicy Orphan). A
// release from that inventory would find nothing to put back, finalize,
// and leave the user's subnet marked as the Network's, which the garbage
// collector deletes as an orphan. The delete waits instead for a list
// begun after the lost answer, then gives the subnet back its own names.
func TestAReleaseWaitsForWhatALostMarkDid(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade-subnet", "by hand", "192.168.0.0/16", "192.168.0.1")
	})
	f.neutron.CompleteLate(neutronfake.UpdateSubnet)
	if out := f.sync("net"); out.Err == nil {
		t.Fatal("the pass whose mark's answer was lost succeeded")
	}
	if _, ok := ours.OwnerOf(f.neutron.Subnets()[0].Name, f.neutron.Subnets()[0].Description); !ok {
		t.Fatal("the lost mark did not reach the fake's subnet")
	}
	f.update(deleting(f.network("net")))
	if out := f.sync("net"); out.Finalized || !errors.Is(out.Err, inventory.ErrListPending) {
		t.Fatalf("a delete before a list showed the lost mark: finalized %t, %v; want ErrListPending", out.Finalized, out.Err)
	}
	f.listAfterTheGrace()
	if out := f.sync("net"); !out.Finalized || out.Err != nil {
		t.Fatalf("the delete after the list: finalized %t, %v", out.Finalized, out.Err)
	}
	net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
	if got := [4]string{net.Name, net.Description, sub.Name, sub.Description}; got != [4]string{"handmade", "made by a person", "handmade-subnet", "by hand"} {
		t.Errorf("Neutron holds the network as %q / %q and the subnet as %q / %q, want them as they were made", got[0], got[1], got[2], got[3])
	}
}

// TestAnAdoptionWhoseRecordIsNotCachedYetWaits: the subnet already carries
// this Network's mark (an earlier attempt marked it) but the cache has not
// yet brought the record of its names back. Nothing is recorded from the
// marked subnet, whose names are ours now, not its own: the pass waits,
// Provisioning, and writes nothing to Neutron.
func TestAnAdoptionWhoseRecordIsNotCachedYetWaits(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, ours.ResourceName(owner), ours.Description(), "192.168.0.0/16", "192.168.0.1")
	})
	if out := f.sync("net"); !errors.Is(out.Err, errAdoptionRecordPending) || out.Requeue != AddRateLimited {
		t.Fatalf("pass returned %v (requeue %v), want errAdoptionRecordPending with backoff", out.Err, out.Requeue)
	}
	for _, r := range f.neutron.Requests() {
		if r == neutronfake.UpdateNetwork || r == neutronfake.UpdateSubnet {
			t.Errorf("Neutron request %s while the record is pending", r)
		}
	}
	cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
	if cond == nil || cond.Reason != samplecrdv1.ReasonProvisioning || f.network("net").Status.Adopted != nil {
		t.Errorf("Ready = %+v, adopted = %+v; want Provisioning and no record taken from a marked subnet", cond, f.network("net").Status.Adopted)
	}
}

// TestAdoption is the table of passes of adoption: what is taken, what is refused, and release.
func TestAdoption(t *testing.T) {
	runPasses(t, []passCase{
		{
			name:    "adopt: one pass records a hand-made network's own names, then marks it and its subnet (TestAdoptionRecordsThenMarks tells more)",
			network: adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork("handmade", "made by a person")
				f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
			},
			wantNeutron: adoptedRequests,
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Adopted"},
			check: func(t *testing.T, f *fixture) {
				want := &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
					SubnetID: seededSubnet, SubnetName: "handmade"}
				if got := f.network("net").Status.Adopted; !reflect.DeepEqual(got, want) {
					t.Errorf("status.adopted = %+v, want %+v", got, want)
				}
				recordedBeforeAnyWrite(t, f)
			},
		},
		{
			name: "adopt: a network of another project, which an admin credential could read by ID, does not exist, and is not touched",
			network: func() *samplecrdv1.Network {
				// The place recorded by an earlier pass.
				return inPlace("project-a", "")(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet))
			}(),
			seed: func(f *neutronfake.Neutron) {
				f.SetProject("project-a")
				f.In("project-b", func() {
					id := f.AddNetwork("theirs", "made by another team")
					f.AddSubnet(id, "theirs", "", "192.168.0.0/16", "192.168.0.1")
				})
			},
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
			check: func(t *testing.T, f *fixture) {
				if msg := f.network("net").Status.Conditions[0].Message; !strings.Contains(msg, "does not exist") || strings.Contains(msg, "theirs") {
					t.Errorf("message %q: want does not exist, and nothing of the other project", msg)
				}
				if st := f.network("net").Status; st.Adopted != nil || st.ProjectID != "project-a" {
					t.Errorf("status records the other project's network: %+v", st)
				}
				f.neutron.In("project-b", func() {
					if n := f.neutron.Networks()[0]; n.Name != "theirs" || n.Description != "made by another team" {
						t.Errorf("the network was changed: %+v", n)
					}
				})
			},
		},
		{
			name: "adopt: released on delete by default, with the names it had before",
			network: func() *samplecrdv1.Network {
				n := deleting(provisioned(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), seededNet, seededSubnet))
				n.Status.Adopted = &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
					SubnetID: seededSubnet, SubnetName: "handmade-subnet", SubnetDescription: "the subnet"}
				return n
			}(),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.GetNetwork, neutronfake.UpdateNetwork},
			wantEvents:  []string{"Normal Orphaned"},
			check: func(t *testing.T, f *fixture) {
				net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
				if net.Name != "handmade" || net.Description != "made by a person" || sub.Name != "handmade-subnet" || sub.Description != "the subnet" {
					t.Errorf("released as %q/%q and %q/%q, want the names they had before adoption", net.Name, net.Description, sub.Name, sub.Description)
				}
			},
		},
		{
			name: "adopt: a partial adoption (subnet marked, the network's mark failed) deleted with Orphan releases the subnet too",
			network: func() *samplecrdv1.Network {
				n := deleting(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet))
				n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
				n.Spec.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan
				n.Status.Adopted = &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", SubnetID: seededSubnet, SubnetName: "handmade-subnet"}
				return n
			}(),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork("handmade", "")
				f.AddSubnet(id, ours.ResourceName(owner), ours.Description(), "192.168.0.0/16", "192.168.0.1")
			},
			wantNeutron: []string{neutronfake.UpdateSubnet},
			check: func(t *testing.T, f *fixture) {
				if subs := f.neutron.Subnets(); len(subs) != 1 || subs[0].Name != "handmade-subnet" || neutron.IsMark(subs[0].Description) {
					t.Errorf("subnets = %+v, want the adopted one back under its own name, unmarked", subs)
				}
			},
		},
		{
			name:    "adopt: a subnet that differs from the spec is AdoptionMismatch with the difference, and nothing is changed",
			network: adopting(newNetwork("192.168.0.0/16", "192.168.0.254"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork("handmade", "")
				f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
			},
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.GetNetwork, neutronfake.PortsOf, neutronfake.SubnetsOf},
			wantReady:   "False/AdoptionMismatch",
			// Fields, never Neutron's values: the network is not the
			// author's to read before it is adopted.
			wantEvents: []string{"Warning AdoptionMismatch"},
			check: func(t *testing.T, f *fixture) {
				if n := f.neutron.Networks()[0]; n.Name != "handmade" || n.Description != "" {
					t.Errorf("the network was changed: %+v", n)
				}
			},
		},
		{
			name:        "adopt: another cluster's network is AdoptionRefused, and nothing is changed",
			network:     adopting(newNetwork("172.16.0.0/24", "172.16.0.1"), seededNet),
			seed:        func(f *neutronfake.Neutron) { f.SeedOwned(otherCluster, owner, "172.16.0.0/24", "172.16.0.1") },
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:    "adopt: a network of another Network of this cluster is AdoptionRefused without naming that Network",
			network: adopting(newNetwork("172.16.0.0/24", "172.16.0.1"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				f.SeedOwned(ours, neutron.Owner{Namespace: "team-b", Name: "secret-project", UID: otherUID}, "172.16.0.0/24", "172.16.0.1")
			},
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:        "adopt: our mark on a name that names no Network is AdoptionRefused, and says so",
			network:     adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet),
			seed:        func(f *neutronfake.Neutron) { f.AddNetwork("default/net/not-a-uid", ours.Description()) },
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:        "adopt: a network that does not exist is AdoptionRefused; nothing is created in its place",
			network:     adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), "net-404"),
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
	})
}

// namesForAdoption is a TenantPolicy that names networks, by ID, for
// namespace's adoption.
type namesForAdoption map[string][]string

func (n namesForAdoption) NamesForAdoption(namespace, id string) (bool, error) {
	return slices.Contains(n[namespace], id), nil
}

// naming sets the Reconciler's adoption grants to the IDs named for the
// fixture's namespace.
func naming(ids ...string) func(*Options) {
	return func(o *Options) { o.Adoption = namesForAdoption{"default": ids} }
}

// handmade seeds a network of description with a subnet of the spec's
// 192.168.0.0/16, and returns the network's ID.
func handmade(f *neutronfake.Neutron, name, description string) string {
	id := f.AddNetwork(name, description)
	f.AddSubnet(id, name, description, "192.168.0.0/16", "192.168.0.1")
	return id
}

// teamB is a Network of another namespace, whose deletion released what
// it had.
var teamB = neutron.Owner{Namespace: "team-b", Name: "old", UID: otherUID}

// refusedUntouched checks that the adoption wrote nothing to Neutron, and
// that its message says why without naming what the network holds.
func refusedUntouched(why string) func(t *testing.T, f *fixture) {
	return func(t *testing.T, f *fixture) {
		t.Helper()
		msg := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady).Message
		if !strings.Contains(msg, why) {
			t.Errorf("message %q does not say %q", msg, why)
		}
		for _, r := range f.neutron.Requests() {
			if r == neutronfake.UpdateNetwork || r == neutronfake.UpdateSubnet {
				t.Errorf("Neutron request %s on a refused adoption", r)
			}
		}
		if f.network("net").Status.Adopted != nil {
			t.Errorf("status.adopted = %+v on a refused adoption", f.network("net").Status.Adopted)
		}
	}
}

// recorded checks that an adoption recorded the names, and before it
// marked anything.
func recorded(t *testing.T, f *fixture) {
	t.Helper()
	if a := f.network("net").Status.Adopted; a == nil || a.NetworkID != seededNet {
		t.Errorf("status.adopted = %+v, want the record of %s", a, seededNet)
	}
	recordedBeforeAnyWrite(t, f)
}

// adoptedRequests are what the one pass of an adoption asks of Neutron:
// the reads of its checks, then (the names recorded) the marks, the
// network read again between them.
var adoptedRequests = []string{neutronfake.GetNetwork, neutronfake.PortsOf, neutronfake.SubnetsOf,
	neutronfake.UpdateSubnet, neutronfake.GetNetwork, neutronfake.UpdateNetwork}

// TestAdoptionTakesOnlyWhatIsGranted is what adoption never takes, however
// the namespace is granted adoption: a network every project uses (shared,
// or external), one with another project's ports, and one that another
// namespace released, unless a TenantPolicy names it by ID.
func TestAdoptionTakesOnlyWhatIsGranted(t *testing.T) {
	refused := func(name string, seed func(*neutronfake.Neutron), options func(*Options), want []string, why string) passCase {
		return passCase{name: name, network: adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), seed: seed, options: options,
			wantErr: "retry-after", wantNeutron: want, wantReady: "False/AdoptionRefused", wantEvents: []string{"Warning AdoptionRefused"},
			check: refusedUntouched(why)}
	}
	taken := func(name string, seed func(*neutronfake.Neutron), options func(*Options)) passCase {
		return passCase{name: name, network: adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), seed: seed, options: options,
			wantNeutron: adoptedRequests, wantReady: "True/Provisioned", wantEvents: []string{"Normal Adopted"}, check: recorded}
	}
	released := func(m neutron.Mark, o neutron.Owner) func(*neutronfake.Neutron) {
		return func(f *neutronfake.Neutron) { handmade(f, m.ResourceName(o), m.Released(o)) }
	}
	runPasses(t, []passCase{
		refused("a shared network is refused, even when a policy names it",
			func(f *neutronfake.Neutron) { f.ShareNetwork(handmade(f, "platform", "")) }, naming(seededNet),
			[]string{neutronfake.GetNetwork}, "shared"),
		refused("an external network (router:external) is refused, even when a policy names it",
			func(f *neutronfake.Neutron) { f.MakeExternal(handmade(f, "public", "")) }, naming(seededNet),
			[]string{neutronfake.GetNetwork}, "external"),
		refused("a network with a port of another project is refused",
			func(f *neutronfake.Neutron) {
				id := handmade(f, "handmade", "")
				f.PutPort(neutron.Port{NetworkID: id, DeviceOwner: "compute:nova", ProjectID: "project-b"})
			}, naming(seededNet),
			[]string{neutronfake.GetNetwork, neutronfake.PortsOf}, "another project"),
		func() passCase {
			c := taken("a network with ports of its own project only is taken",
				func(f *neutronfake.Neutron) {
					f.SetProject("project-a")
					id := handmade(f, "handmade", "")
					f.PutPort(neutron.Port{NetworkID: id, DeviceOwner: "compute:nova", ProjectID: "project-a"})
					f.PutPort(neutron.Port{NetworkID: id, DeviceOwner: "network:router_gateway"}) // Neutron's own: no project
				}, nil)
			c.network = inPlace("project-a", "")(c.network) // recorded by an earlier pass
			return c
		}(),
		refused("a network another namespace released is refused when no policy names it",
			released(ours, teamB), nil, []string{neutronfake.GetNetwork}, "released"),
		refused("a network another namespace released is refused when the policy names another",
			released(ours, teamB), naming("net-404"), []string{neutronfake.GetNetwork}, "released"),
		refused("a network another cluster released is refused when no policy names it",
			released(otherCluster, owner), nil, []string{neutronfake.GetNetwork}, "released"),
		taken("a network another namespace released is taken when a policy names its ID", released(ours, teamB), naming(seededNet)),
		taken("a network the namespace itself released is taken, as before", released(ours, neutron.Owner{Namespace: "default", Name: "old", UID: otherUID}), nil),
		taken("a hand-made network is taken, as before", func(f *neutronfake.Neutron) { handmade(f, "handmade", "by hand") }, nil),
	})
}

// TestAdoptionMismatchNamesFieldsOnlyOfWhatTheNamespaceMaySee: a mismatch
// names the differing fields only of a network a policy named by ID or
// the namespace itself released; of any other it says only that it
// differs, and where the matching spec comes from, so that nobody learns a
// network's settings a field at a time by naming its ID.
func TestAdoptionMismatchNamesFieldsOnlyOfWhatTheNamespaceMaySee(t *testing.T) {
	for _, tc := range []struct {
		name        string
		description string
		options     func(*Options)
		wantFields  bool
	}{
		{name: "a hand-made network the policy does not name", description: "by hand"},
		{name: "a hand-made network the policy names by ID", description: "by hand", options: naming(seededNet), wantFields: true},
		{name: "a network the namespace itself released", description: ours.Released(neutron.Owner{Namespace: "default", Name: "old", UID: otherUID}), wantFields: true},
		{name: "a network another namespace released, named by the policy", description: ours.Released(teamB), options: naming(seededNet), wantFields: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := defaultOptions()
			if tc.options != nil {
				tc.options(&opts)
			}
			// The spec's gateway and DNS servers differ from Neutron's.
			n := withSpec(adopting(newNetwork("192.168.0.0/16", "192.168.0.254"), seededNet), func(s *samplecrdv1.NetworkSpec) {
				s.DNSNameservers = []string{"192.168.0.53"}
			})
			f := newFixtureWith(t, opts, nil, []*samplecrdv1.Network{n}, func(f *neutronfake.Neutron) { handmade(f, "handmade", tc.description) })
			if out := f.sync("net"); out.Requeue != AddAfter {
				t.Fatalf("requeue = %v (%v), want AddAfter", out.Requeue, out.Err)
			}
			cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
			if cond == nil || cond.Reason != samplecrdv1.ReasonAdoptionMismatch {
				t.Fatalf("Ready = %+v, want AdoptionMismatch", cond)
			}
			named := strings.Contains(cond.Message, "gateway") || strings.Contains(cond.Message, "dnsNameservers")
			if named != tc.wantFields {
				t.Errorf("message %q names fields: %v, want %v", cond.Message, named, tc.wantFields)
			}
			if !tc.wantFields && !strings.Contains(cond.Message, "network-controller import") {
				t.Errorf("message %q does not point to network-controller import", cond.Message)
			}
			for _, v := range []string{"192.168.0.1", "192.168.0.53"} {
				if strings.Contains(cond.Message, v) {
					t.Errorf("message %q has a value, %s", cond.Message, v)
				}
			}
		})
	}
}

// TestAdoptionWithoutTheSubnetSaysNoMoreOfAnUnnamedNetwork: a spec whose
// cidr the network has no subnet of is told so only of a network a
// policy names; of another the message is the same as for any
// difference, so that naming one range after another does not find the
// network's.
func TestAdoptionWithoutTheSubnetSaysNoMoreOfAnUnnamedNetwork(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options func(*Options)
		want    string
	}{
		{name: "unnamed", want: "differs from the spec"},
		{name: "named by the policy", options: naming(seededNet), want: "has no subnet of 10.0.0.0/24"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := defaultOptions()
			if tc.options != nil {
				tc.options(&opts)
			}
			f := newFixtureWith(t, opts, nil, []*samplecrdv1.Network{adopting(newNetwork("10.0.0.0/24", "10.0.0.1"), seededNet)},
				func(f *neutronfake.Neutron) { handmade(f, "handmade", "by hand") })
			f.sync("net")
			cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
			if cond == nil || cond.Reason != samplecrdv1.ReasonAdoptionMismatch || !strings.Contains(cond.Message, tc.want) {
				t.Errorf("Ready = %+v, want AdoptionMismatch saying %q", cond, tc.want)
			}
		})
	}
}
