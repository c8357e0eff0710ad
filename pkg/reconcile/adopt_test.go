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
	"github.com/samplecrd/network-controller/pkg/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/neutron/fake"
)

// TestAdoptionRecordsThenMarks: the first pass records the network's and
// subnet's own names and ends; the second, which finds the record in the
// Network's status, marks the subnet, then the network, and is Ready.
// Nothing is created.
func TestAdoptionRecordsThenMarks(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
	})
	if out := f.sync("net"); out.Requeue != AddRateLimited {
		t.Fatalf("the first pass: requeue %v (%v), want AddRateLimited", out.Requeue, out.Err)
	}
	if out := f.sync("net"); out.Requeue != Forget {
		t.Fatalf("the second pass: requeue %v (%v), want Forget", out.Requeue, out.Err)
	}
	if got := f.neutron.Requests(); !slices.Equal(got, []string{
		neutronfake.GetNetwork, neutronfake.SubnetsOf, // the first pass: read, record
		neutronfake.GetNetwork, neutronfake.SubnetsOf, neutronfake.UpdateSubnet, neutronfake.UpdateNetwork,
	}) {
		t.Errorf("Neutron requests = %q", got)
	}
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

// TestAHalfDoneAdoptionKeepsItsRecord: the subnet is marked, the network's
// mark fails (a 500); the status written for that failure keeps the record
// of the names, and the next pass finishes the adoption.
func TestAHalfDoneAdoptionKeepsItsRecord(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade-subnet", "by hand", "192.168.0.0/16", "192.168.0.1")
	})
	f.sync("net") // records
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

	// A 500 opened the breaker; a list closes it.
	f.neutron.FailOn(neutronfake.UpdateNetwork, nil)
	f.list()
	if out := f.sync("net"); out.Err != nil {
		t.Fatalf("the third pass: %v", out.Err)
	}
	n := f.network("net")
	if cond := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v after the third pass", cond)
	}
	if n.Status.Adopted == nil || *n.Status.Adopted != *want {
		t.Errorf("status.adopted = %+v, want the record kept", n.Status.Adopted)
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
			name:    "adopt: the first pass records a hand-made network's own names and marks nothing (TestAdoptionRecordsThenMarks goes on)",
			network: adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork("handmade", "made by a person")
				f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
			},
			wantErr:     "soon",
			wantNeutron: []string{neutronfake.GetNetwork, neutronfake.SubnetsOf},
			wantReady:   "False/Provisioning",
			check: func(t *testing.T, f *fixture) {
				want := &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
					SubnetID: seededSubnet, SubnetName: "handmade"}
				if got := f.network("net").Status.Adopted; !reflect.DeepEqual(got, want) {
					t.Errorf("status.adopted = %+v, want %+v", got, want)
				}
			},
		},
		{
			name: "adopt: a network of another project, which an admin credential could read by ID, does not exist, and is not touched",
			network: func() *samplecrdv1.Network {
				// The place recorded by the pass before.
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
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
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
			wantNeutron: []string{neutronfake.GetNetwork, neutronfake.SubnetsOf},
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
			seed:        func(f *neutronfake.Neutron) { seedOwned(f, otherCluster, owner, "172.16.0.0/24", "172.16.0.1") },
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:    "adopt: a network of another Network of this cluster is AdoptionRefused without naming that Network",
			network: adopting(newNetwork("172.16.0.0/24", "172.16.0.1"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				seedOwned(f, ours, neutron.Owner{Namespace: "team-b", Name: "secret-project", UID: otherUID}, "172.16.0.0/24", "172.16.0.1")
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
