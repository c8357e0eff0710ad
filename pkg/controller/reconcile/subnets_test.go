package reconcile

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// withSubnets is n with spec.subnets set to its own first subnet and then
// extra, in its v2 form, read back through v1 as a v1 client (and this
// pass) reads it: the extra subnets in samplecrdv1.SubnetsAnnotation. An
// empty extra removes every subnet but the first.
func withSubnets(n *samplecrdv1.Network, extra ...samplecrdv2.SubnetSpec) *samplecrdv1.Network {
	var hub samplecrdv2.Network
	if err := samplecrdv1.Convert_v1_Network_To_v2_Network(n, &hub, nil); err != nil {
		panic(err)
	}
	hub.Spec.Subnets = append(hub.Spec.Subnets[:1], extra...)
	var out samplecrdv1.Network
	if err := samplecrdv1.Convert_v2_Network_To_v1_Network(&hub, &out, nil); err != nil {
		panic(err)
	}
	return &out
}

// The ranges of the dual-stack rows.
const (
	v4CIDR = "192.168.0.0/16"
	v4GW   = "192.168.0.1"
	v6CIDR = "fd00:10::/64"
)

// withV6Subnet seeds, besides the in-sync network and IPv4 subnet, an
// IPv6 subnet of ours on it, as a pass made it when spec.subnets named it.
func withV6Subnet(f *neutronfake.Neutron) {
	inSync(v4CIDR, v4GW)(f)
	f.AddSubnet(seededNet, ours.ResourceName(owner), ours.Description(), v6CIDR, "fd00:10::1")
}

// ourRanges are the ranges of the subnets of ours in Neutron, sorted.
func ourRanges(f *fixture) []string {
	var out []string
	for _, s := range f.neutron.Subnets() {
		if s.Description == ours.Description() {
			out = append(out, s.CIDR)
		}
	}
	slices.Sort(out)
	return out
}

// wantRanges checks that Neutron holds exactly the subnets of ours of
// ranges, all on one network of ours.
func wantRanges(ranges ...string) func(*testing.T, *fixture) {
	return func(t *testing.T, f *fixture) {
		t.Helper()
		slices.Sort(ranges)
		if got := ourRanges(f); !slices.Equal(got, ranges) {
			t.Errorf("our subnets = %q, want %q", got, ranges)
		}
		nets := map[string]bool{}
		for _, s := range f.neutron.Subnets() {
			if s.Description == ours.Description() {
				nets[s.NetworkID] = true
			}
		}
		if len(nets) != 1 {
			t.Errorf("our subnets are on %d networks, want one", len(nets))
		}
	}
}

// TestEverySubnetOfSpecSubnets: one Neutron network holds a subnet per
// spec.subnets entry; an entry added creates only its subnet, one removed
// is deleted, unless ports use it.
func TestEverySubnetOfSpecSubnets(t *testing.T) {
	v6 := samplecrdv2.SubnetSpec{CIDR: v6CIDR}
	runPasses(t, []passCase{
		{
			name:        "a dual-stack Network makes one network and two subnets",
			network:     withSubnets(newNetwork(v4CIDR, v4GW), v6),
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check:       wantRanges(v4CIDR, v6CIDR),
		},
		{
			name:        "an IPv6 subnet added to a Ready one-subnet Network creates only that subnet",
			network:     withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet), v6),
			seed:        inSync(v4CIDR, v4GW),
			wantNeutron: []string{neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check:       wantRanges(v4CIDR, v6CIDR),
		},
		{
			name:        "a dual-stack Network in sync asks nothing",
			network:     withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet), v6),
			seed:        withV6Subnet,
			wantNeutron: nil,
			wantReady:   "True/Provisioned",
			check:       wantRanges(v4CIDR, v6CIDR),
		},
		{
			name:        "a subnet removed from spec.subnets is deleted, after a look at its ports",
			network:     withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet)),
			seed:        withV6Subnet,
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.DeleteSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Deleted"},
			check:       wantRanges(v4CIDR),
		},
		{
			name:    "a port on the subnet that stays does not block the removal of the other",
			network: withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet)),
			seed: func(f *neutronfake.Neutron) {
				withV6Subnet(f)
				f.AddPortWithAddresses(seededNet, "vm-port", "compute:nova", "192.168.0.10")
			},
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.DeleteSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Deleted"},
			check:       wantRanges(v4CIDR),
		},
		{
			// The door's If-Match (inventory's writeOwned): the list that
			// holds the subnet as ours is older than a person's rename.
			name:      "a removed subnet a person took out of management since the list is not deleted",
			network:   withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet)),
			seed:      withV6Subnet,
			afterList: renameSubnet(v6CIDR, "kept-by-hand", "not the controller's any more"),
			wantErr:   "backoff",
			// The delete onto the listed revision is refused (412); the
			// read after it finds the mark gone, and nothing more is sent.
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.DeleteSubnet, neutronfake.SubnetsOf},
			wantReady:   "False/" + samplecrdv1.ReasonProvisioning,
			wantEvents:  []string{"Warning " + samplecrdv1.ReasonProvisioning},
			check: func(t *testing.T, f *fixture) {
				wantRanges(v4CIDR)(t, f)
				if !slices.ContainsFunc(f.neutron.Subnets(), func(s neutron.Subnet) bool { return s.CIDR == v6CIDR && s.Name == "kept-by-hand" }) {
					t.Errorf("the subnet a person took out of management is gone or changed: %+v", f.neutron.Subnets())
				}
			},
		},
		{
			name:    "a subnet removed with a VM's port on it is blocked with a reason, and nothing is deleted",
			network: withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet)),
			seed: func(f *neutronfake.Neutron) {
				withV6Subnet(f)
				f.AddPort(seededNet, "dhcp-port", "network:dhcp") // Neutron's own: goes with the subnet
				f.AddPortWithAddresses(seededNet, "vm-port", "compute:nova", "fd00:10::5")
			},
			wantErr: "backoff",
			// Every port of the network, then our router interfaces.
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.PortsOf},
			wantReady:   "False/" + samplecrdv1.ReasonSubnetRemovalBlocked,
			wantEvents:  []string{"Warning " + samplecrdv1.ReasonSubnetRemovalBlocked},
			check: func(t *testing.T, f *fixture) {
				wantRanges(v4CIDR, v6CIDR)(t, f)
				cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
				if !strings.Contains(cond.Message, "vm-port (compute:nova)") || strings.Contains(cond.Message, "dhcp-port") {
					t.Errorf("message %q does not name the VM's port alone", cond.Message)
				}
			},
		},
	})
}

// renameSubnet gives the subnet of cidr a person's name and description,
// as one who takes it out of the controller's management does; the
// requests the pass makes are counted from then on.
func renameSubnet(cidr, name, description string) func(*neutronfake.Neutron) {
	return func(f *neutronfake.Neutron) {
		for _, s := range f.Subnets() {
			if s.CIDR == cidr {
				if _, err := f.UpdateSubnet(context.Background(), s.ID, neutron.SubnetUpdate{Name: &name, Description: &description}); err != nil {
					panic(err)
				}
			}
		}
		f.ClearRequests() // the person's, not the pass's
	}
}

// TestTwoSubnetsOfAFamilyAreRefusedBeforeNeutron: a spec that bypassed the
// schema's one-per-family rule (an older CRD, a write to etcd; the v1
// conversion refuses one since TestV1ToV2RefusesWhatV2sSchemaRefuses)
// asks Neutron nothing.
func TestTwoSubnetsOfAFamilyAreRefusedBeforeNeutron(t *testing.T) {
	f := newFixture(t, newNetwork(v4CIDR, v4GW), nil)
	n := f.stored("net")
	n.Spec.Subnets = append(n.Spec.Subnets, samplecrdv2.SubnetSpec{CIDR: "10.1.0.0/24"})
	f.updateV2(n)
	if out := f.sync("net"); out.Requeue != ForgetUntilSpecChanges {
		t.Fatalf("requeue = %v (%v), want ForgetUntilSpecChanges", out.Requeue, out.Err)
	}
	if got := f.neutron.Requests(); len(got) != 0 {
		t.Errorf("Neutron requests = %q, want none", got)
	}
	cond := meta.FindStatusCondition(f.stored("net").Status.Conditions, samplecrdv1.ConditionReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != samplecrdv1.ReasonInvalidSpec {
		t.Errorf("Ready = %+v, want False/%s", cond, samplecrdv1.ReasonInvalidSpec)
	}
	if got := f.takeEvents(); !slices.Equal(got, []string{"Warning " + samplecrdv1.ReasonInvalidSpec}) {
		t.Errorf("events = %q", got)
	}
}

// handmadeDualStack seeds an unmarked network (seededNet) with an IPv4
// subnet and, with v6Gateway, an IPv6 one, as a person made them.
func handmadeDualStack(v6Gateway string) func(*neutronfake.Neutron) {
	return func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade-v4", "", v4CIDR, v4GW)
		if v6Gateway != "" {
			f.AddSubnet(id, "handmade-v6", "", v6CIDR, v6Gateway)
		}
	}
}

// TestAdoptionComparesEverySubnet: spec.adopt compares every subnet of the
// network with spec.subnets, both ways, and marks nothing unless all
// match. A network of two subnets that match is adopted whole: status.adopted
// records both subnets' own names before either is marked.
func TestAdoptionComparesEverySubnet(t *testing.T) {
	v6 := samplecrdv2.SubnetSpec{CIDR: v6CIDR}
	read := []string{neutronfake.GetNetwork, neutronfake.PortsOf, neutronfake.SubnetsOf}
	nothingMarked := func(t *testing.T, f *fixture) {
		t.Helper()
		for _, s := range f.neutron.Subnets() {
			if s.Description != "" {
				t.Errorf("subnet %s was marked: %q", s.ID, s.Description)
			}
		}
	}
	runPasses(t, []passCase{
		{
			name:    "two subnets that match: both recorded, then both marked",
			network: withSubnets(adopting(newNetwork(v4CIDR, v4GW), seededNet), v6),
			seed:    handmadeDualStack("fd00:10::1"),
			wantNeutron: append(slices.Clone(read), neutronfake.UpdateSubnet, neutronfake.UpdateSubnet,
				neutronfake.GetNetwork, neutronfake.UpdateNetwork),
			wantReady:  "True/" + samplecrdv1.ReasonProvisioned,
			wantEvents: []string{"Normal Adopted", "Normal Adopted"},
			check: func(t *testing.T, f *fixture) {
				t.Helper()
				recordedBeforeAnyWrite(t, f)
				for _, s := range f.neutron.Subnets() {
					if o, ok := ours.OwnerOf(s.Name, s.Description); !ok || o.UID != testUID {
						t.Errorf("subnet %s (%s) is not marked as this Network's", s.ID, s.CIDR)
					}
				}
				a := f.stored("net").Status.Adopted
				var names []string
				if a != nil {
					for _, s := range a.Subnets {
						names = append(names, s.Name)
					}
				}
				if slices.Sort(names); !slices.Equal(names, []string{"handmade-v4", "handmade-v6"}) {
					t.Errorf("status.adopted.subnets names %q, want both subnets' own names", names)
				}
			},
		},
		{
			name:        "spec.subnets names a range the network lacks",
			network:     withSubnets(adopting(newNetwork(v4CIDR, v4GW), seededNet), v6),
			seed:        handmadeDualStack(""),
			wantErr:     "retry-after",
			wantNeutron: read,
			wantReady:   "False/" + samplecrdv1.ReasonAdoptionMismatch,
			wantEvents:  []string{"Warning " + samplecrdv1.ReasonAdoptionMismatch},
			check:       nothingMarked,
		},
		{
			name:        "the network has a subnet spec.subnets does not name",
			network:     adopting(newNetwork(v4CIDR, v4GW), seededNet),
			seed:        handmadeDualStack("fd00:10::1"),
			wantErr:     "retry-after",
			wantNeutron: read,
			wantReady:   "False/" + samplecrdv1.ReasonAdoptionMismatch,
			wantEvents:  []string{"Warning " + samplecrdv1.ReasonAdoptionMismatch},
			check:       nothingMarked,
		},
		{
			name:        "the second subnet differs from its entry",
			network:     withSubnets(adopting(newNetwork(v4CIDR, v4GW), seededNet), v6),
			seed:        handmadeDualStack("fd00:10::fe"),
			wantErr:     "retry-after",
			wantNeutron: read,
			wantReady:   "False/" + samplecrdv1.ReasonAdoptionMismatch,
			wantEvents:  []string{"Warning " + samplecrdv1.ReasonAdoptionMismatch},
			check:       nothingMarked,
		},
	})
}

// TestARouterGetsAnInterfaceOnEverySubnet: spec.router attaches each
// subnet of a dual-stack Network, one interface of ours per subnet on its
// gateway, and the Outcome reports each in its subnet's entry.
func TestARouterGetsAnInterfaceOnEverySubnet(t *testing.T) {
	network := withSubnets(withRouter(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet), "edge"), samplecrdv2.SubnetSpec{CIDR: v6CIDR})
	f := newFixture(t, network, routed)
	out := f.sync("net")
	if out.Err != nil {
		t.Fatalf("the pass: %v", out.Err)
	}
	if got, want := f.neutron.Requests(), []string{neutronfake.CreateSubnet, neutronfake.PortsOf, neutronfake.FindRouter,
		neutronfake.CreatePort, neutronfake.AddRouterInterface, neutronfake.CreatePort, neutronfake.AddRouterInterface}; !slices.Equal(got, want) {
		t.Errorf("Neutron requests = %q, want %q", got, want)
	}
	if got := f.takeEvents(); !slices.Equal(got, []string{"Normal Created", "Normal Attached", "Normal Attached"}) {
		t.Errorf("events = %q", got)
	}
	if ids := portsOn(f, edgeRouter); len(ids) != 2 {
		t.Errorf("ports on the router = %q, want one per subnet", ids)
	}
	wantAddress := map[string]string{v4CIDR: v4GW, v6CIDR: "fd00:10::1"}
	if len(out.Observed.Subnets) != 2 {
		t.Fatalf("observed subnets = %+v", out.Observed.Subnets)
	}
	for _, s := range out.Observed.Subnets {
		if s.RouterInterface == nil || s.RouterInterface.Address != wantAddress[s.CIDR] || s.RouterInterface.PortID == "" {
			t.Errorf("subnet %s: router interface %+v, want one on %s", s.CIDR, s.RouterInterface, wantAddress[s.CIDR])
		}
	}
	if r := f.network("net").Status.Router; r == nil || r.InterfaceAddress != v4GW {
		t.Errorf("v1's status.router = %+v, want the first subnet's interface", r)
	}
}
