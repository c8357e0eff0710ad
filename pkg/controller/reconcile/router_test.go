package reconcile

import (
	"context"
	"strings"
	"testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// Fixed router IDs: routed seeds them after inSync's network and subnet.
const (
	edgeRouter  = "router-3"
	otherRouter = "router-4"
)

// routed seeds the Network's network and subnet in sync, and the routers
// "edge" and "other" of the project, which someone else made.
func routed(f *neutronfake.Neutron) {
	inSync("192.168.0.0/16", "192.168.0.1")(f)
	f.AddRouter("edge")
	f.AddRouter("other")
}

// withRouter makes n name router.
func withRouter(n *samplecrdv1.Network, name string) *samplecrdv1.Network {
	n.Spec.Router = &samplecrdv1.RouterReference{Name: name}
	return n
}

// attachedTo records in n's status that its port portID is on routerID.
func attachedTo(n *samplecrdv1.Network, routerID, portID string) *samplecrdv1.Network {
	n.Status.Router = &samplecrdv1.RouterStatus{ID: routerID, InterfacePortID: portID, InterfaceAddress: "192.168.0.1"}
	return n
}

// ourPort is a router interface port the controller made for owner on the
// gateway, on routerID ("" for none).
func ourPort(routerID string) neutron.Port {
	return neutron.Port{NetworkID: seededNet, Name: ours.ResourceName(owner), Description: ours.Description(),
		DeviceOwner: neutron.RouterInterfaceOwner, DeviceID: routerID, Addresses: []string{"192.168.0.1"}}
}

// foreignPort is an interface another tool attached to routerID on the
// Network's subnet, by subnet: Neutron made the port, with no mark.
func foreignPort(routerID, address string) neutron.Port {
	return neutron.Port{NetworkID: seededNet, DeviceOwner: neutron.RouterInterfaceOwner, DeviceID: routerID, Addresses: []string{address}}
}

// portsOn are the IDs of the ports on the Network's network that are on
// routerID.
func portsOn(f *fixture, routerID string) []string {
	var ids []string
	for _, p := range f.neutron.Ports(seededNet) {
		if p.DeviceID == routerID {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// TestRouter is the table of passes of spec.router: the controller
// attaches and detaches only router interfaces it made, and never the
// router or another's interface.
func TestRouter(t *testing.T) {
	provisionedNet := func() *samplecrdv1.Network {
		return provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
	}
	runPasses(t, []passCase{
		{
			name:    "a router named by spec.router gets an interface of ours on the gateway, made then attached by port",
			network: withRouter(provisionedNet(), "edge"),
			seed:    routed,
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter,
				neutronfake.CreatePort, neutronfake.AddRouterInterface},
			wantReady:  "True/Provisioned",
			wantEvents: []string{"Normal Attached"},
			check: func(t *testing.T, f *fixture) {
				ports := f.neutron.Ports(seededNet)
				if len(ports) != 1 {
					t.Fatalf("ports = %+v, want one interface", ports)
				}
				p := ports[0]
				if o, ok := ours.OwnerOf(p.Name, p.Description); !ok || o.UID != testUID {
					t.Errorf("the interface %q / %q is not recognisable as this Network's", p.Name, p.Description)
				}
				if p.DeviceID != edgeRouter || p.Addresses[0] != "192.168.0.1" {
					t.Errorf("interface on %s at %v, want on %s at the gateway", p.DeviceID, p.Addresses, edgeRouter)
				}
				want := samplecrdv1.RouterStatus{ID: edgeRouter, InterfacePortID: p.ID, InterfaceAddress: "192.168.0.1"}
				if got := f.network("net").Status.Router; got == nil || *got != want {
					t.Errorf("status.router = %+v, want %+v", got, want)
				}
			},
		},
		{
			name:        "an interface already on the router costs two reads and no write",
			network:     attachedTo(withRouter(provisionedNet(), "edge"), edgeRouter, "port-5"),
			seed:        func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort(edgeRouter)) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter},
			wantReady:   "True/Provisioned",
		},
		{
			name:    "a router another Network made for itself is refused by ID, whoever granted it: nothing is attached",
			network: withRouter(provisionedNet(), "router-6"),
			seed: func(f *neutronfake.Neutron) {
				routed(f) // router-3 and router-4; the victim's router is router-6
				victim := neutron.Owner{Namespace: "team-a", Name: "victim", UID: otherUID}
				f.AddExternalNetwork("public")
				if _, err := f.CreateRouter(context.Background(), ours.ResourceName(victim), ours.Description(), "external-5"); err != nil {
					panic(err)
				}
			},
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter},
			wantReady:   "False/NotAllowed",
			wantEvents:  []string{"Warning NotAllowed"},
			check: func(t *testing.T, f *fixture) {
				if ports := f.neutron.Ports(seededNet); len(ports) != 0 {
					t.Errorf("ports made on the subnet: %+v", ports)
				}
				if msg := f.network("net").Status.Conditions[0].Message; strings.Contains(msg, "victim") || strings.Contains(msg, "team-a") {
					t.Errorf("the refusal names the router's owner: %q", msg)
				}
			},
		},
		{
			name:    "a router another cluster's controller made is refused too",
			network: withRouter(provisionedNet(), "router-6"),
			seed: func(f *neutronfake.Neutron) {
				routed(f)
				f.AddExternalNetwork("public")
				if _, err := f.CreateRouter(context.Background(), otherCluster.ResourceName(owner), otherCluster.Description(), "external-5"); err != nil {
					panic(err)
				}
			},
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter},
			wantReady:   "False/NotAllowed",
			wantEvents:  []string{"Warning NotAllowed"},
		},
		{
			name:        "a Network that never had a router reads nothing for it",
			network:     provisionedNet(),
			seed:        routed,
			wantNeutron: nil,
			wantReady:   "True/Provisioned",
		},
		{
			name:        "a router no one has made: RouterNotFound, the network and subnet kept, retried with backoff",
			network:     withRouter(provisionedNet(), "nowhere"),
			seed:        routed,
			wantErr:     "backoff",
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter},
			wantReady:   "False/RouterNotFound",
			wantEvents:  []string{"Warning RouterNotFound"},
			check: func(t *testing.T, f *fixture) {
				if st := f.network("net").Status; st.NetworkID != seededNet || st.SubnetID != seededSubnet {
					t.Errorf("status lost the IDs: %+v", st)
				}
			},
		},
		{
			name:        "a port made by a pass that died before attaching it is attached, not made again",
			network:     withRouter(provisionedNet(), "edge"),
			seed:        func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort("")) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter, neutronfake.AddRouterInterface},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Attached"},
		},
		{
			name:    "spec.router moved to another router: ours leaves the old one, another's interface there stays",
			network: attachedTo(withRouter(provisionedNet(), "other"), edgeRouter, "port-5"),
			seed: func(f *neutronfake.Neutron) {
				routed(f)
				f.PutPort(ourPort(edgeRouter))
				f.PutPort(foreignPort(edgeRouter, "192.168.0.2"))
			},
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter, neutronfake.RemoveRouterInterface,
				neutronfake.CreatePort, neutronfake.AddRouterInterface},
			wantReady:  "True/Provisioned",
			wantEvents: []string{"Normal Detached", "Normal Attached"},
			check: func(t *testing.T, f *fixture) {
				if got := portsOn(f, edgeRouter); len(got) != 1 || got[0] != "port-6" {
					t.Errorf("on the old router: %v, want only the foreign port-6", got)
				}
				if got := f.network("net").Status.Router; got == nil || got.ID != otherRouter {
					t.Errorf("status.router = %+v, want on %s", got, otherRouter)
				}
			},
		},
		{
			name:        "spec.router removed: ours is detached, status.router goes",
			network:     attachedTo(provisionedNet(), edgeRouter, "port-5"),
			seed:        func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort(edgeRouter)) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.RemoveRouterInterface},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Detached"},
			check: func(t *testing.T, f *fixture) {
				if ports := f.neutron.Ports(seededNet); len(ports) != 0 {
					t.Errorf("ports left: %+v", ports)
				}
				if got := f.network("net").Status.Router; got != nil {
					t.Errorf("status.router = %+v after the detach", got)
				}
			},
		},
		{
			name: "spec.router removed and the gateway moved in one update: ours goes before the gateway moves",
			network: withSpec(attachedTo(provisionedNet(), edgeRouter, "port-5"),
				func(s *samplecrdv1.NetworkSpec) { s.Gateway = "192.168.0.254" }),
			seed:        func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort(edgeRouter)) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.RemoveRouterInterface, neutronfake.UpdateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Detached", "Normal Updated"},
		},
		{
			name:    "interfaces that carry another Network's or another cluster's mark are never detached",
			network: attachedTo(provisionedNet(), edgeRouter, "port-5"),
			seed: func(f *neutronfake.Neutron) {
				routed(f)
				other := ourPort(edgeRouter)
				other.Name = ours.ResourceName(neutron.Owner{Namespace: "default", Name: "net", UID: otherUID})
				f.PutPort(other)
				other = ourPort(edgeRouter)
				other.Description = otherCluster.Description()
				f.PutPort(other)
			},
			wantNeutron: []string{neutronfake.PortsOf},
			wantReady:   "True/Provisioned",
			check: func(t *testing.T, f *fixture) {
				if got := portsOn(f, edgeRouter); len(got) != 2 {
					t.Errorf("on the router: %v, want both look-alikes", got)
				}
			},
		},
		{
			// Neutron's refusal names the other subnet, ID and range,
			// which may be another namespace's (issue 40, finding 13b).
			name:    "a range that overlaps a subnet already on the router: CIDRConflict in the controller's words, naming nothing of the other subnet",
			network: withRouter(provisionedNet(), "edge"),
			seed: func(f *neutronfake.Neutron) {
				routed(f)
				theirs := f.AddNetwork("team-b/web", "")
				f.AddSubnet(theirs, "team-b/web", "", "192.168.128.0/24", "192.168.128.1")
				f.PutPort(neutron.Port{NetworkID: theirs, DeviceOwner: neutron.RouterInterfaceOwner, DeviceID: edgeRouter, Addresses: []string{"192.168.128.1"}})
			},
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter, neutronfake.CreatePort, neutronfake.AddRouterInterface},
			wantReady:   "False/CIDRConflict",
			wantEvents:  []string{"Warning CIDRConflict"},
			check: func(t *testing.T, f *fixture) {
				msg := f.network("net").Status.Conditions[0].Message
				for _, other := range []string{"net-5", "subnet-6", "192.168.128", "team-b"} {
					if strings.Contains(msg, other) {
						t.Errorf("the condition names %q of another's subnet: %q", other, msg)
					}
				}
				if !strings.Contains(msg, "spec.router") || !strings.Contains(msg, "another range") {
					t.Errorf("the condition %q does not say what to change", msg)
				}
			},
		},
		{
			name:        "a gateway another tool's interface holds: Neutron's refusal, in its own words",
			network:     withRouter(provisionedNet(), "edge"),
			seed:        func(f *neutronfake.Neutron) { routed(f); f.PutPort(foreignPort(otherRouter, "192.168.0.1")) },
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindRouter, neutronfake.CreatePort},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Warning NeutronRejected"},
			check: func(t *testing.T, f *fixture) {
				if got := portsOn(f, otherRouter); len(got) != 1 {
					t.Errorf("the foreign interface is gone: %v", got)
				}
			},
		},
	})
}

// TestRouterOnDelete is the table of deletions of a routed Network: the
// interface goes before the subnet, an interface nothing recorded is found
// when Neutron refuses, and another's interface blocks rather than goes.
func TestRouterOnDelete(t *testing.T) {
	deletingNet := func() *samplecrdv1.Network {
		return deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))
	}
	runPasses(t, []passCase{
		{
			name:        "ours is detached before the network goes, with its subnet; the router stays",
			network:     attachedTo(withRouter(deletingNet(), "edge"), edgeRouter, "port-5"),
			seed:        func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort(edgeRouter)) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.RemoveRouterInterface, neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks())+len(f.neutron.Subnets())+len(f.neutron.Ports(seededNet)) != 0 {
					t.Errorf("left in Neutron: %v %v %v", f.neutron.Networks(), f.neutron.Subnets(), f.neutron.Ports(seededNet))
				}
			},
		},
		{
			name:    "an interface of ours that status never recorded is found when Neutron refuses the network",
			network: deletingNet(),
			seed:    func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort(edgeRouter)) },
			wantNeutron: []string{neutronfake.DeleteNetwork, neutronfake.PortsOf, neutronfake.RemoveRouterInterface,
				neutronfake.DeleteNetwork},
			wantEvents: []string{"Normal Deleted"},
		},
		{
			name:    "another tool's interface on the subnet blocks the delete, named, and survives it",
			network: attachedTo(withRouter(deletingNet(), "edge"), edgeRouter, "port-5"),
			seed: func(f *neutronfake.Neutron) {
				routed(f)
				f.PutPort(ourPort(edgeRouter))
				f.PutPort(foreignPort(otherRouter, "192.168.0.2"))
			},
			wantErr: "backoff",
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.RemoveRouterInterface,
				neutronfake.DeleteNetwork, neutronfake.PortsOf, neutronfake.PortsOf},
			wantReady:  "False/DeletionBlocked",
			wantEvents: []string{"Warning DeletionBlocked"},
			check: func(t *testing.T, f *fixture) {
				if got := portsOn(f, otherRouter); len(got) != 1 || got[0] != "port-6" {
					t.Errorf("on the other router: %v, want the foreign port-6", got)
				}
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released while another's interface holds the subnet")
				}
				cond := f.network("net").Status.Conditions[0]
				if !strings.Contains(cond.Message, "port-6 (network:router_interface)") {
					t.Errorf("message %q does not name the foreign interface", cond.Message)
				}
			},
		},
		{
			name: "deletionPolicy Orphan: the interface stays on the router, without the mark",
			network: withSpec(attachedTo(withRouter(deletingNet(), "edge"), edgeRouter, "port-5"),
				func(s *samplecrdv1.NetworkSpec) { s.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan }),
			seed:        func(f *neutronfake.Neutron) { routed(f); f.PutPort(ourPort(edgeRouter)) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.UpdatePort, neutronfake.UpdateSubnet, neutronfake.GetNetwork, neutronfake.UpdateNetwork},
			wantEvents:  []string{"Normal Orphaned"},
			check: func(t *testing.T, f *fixture) {
				ports := f.neutron.Ports(seededNet)
				if len(ports) != 1 || ports[0].DeviceID != edgeRouter {
					t.Fatalf("ports = %+v, want the interface still on %s", ports, edgeRouter)
				}
				if _, ok := ours.OwnerOf(ports[0].Name, ports[0].Description); ok {
					t.Errorf("the released interface still carries the mark: %q", ports[0].Description)
				}
			},
		},
	})
}

// publicNet is the fixture's external network: ownRouted seeds it after
// inSync's network and subnet.
const publicNet = "external-3"

// ownRouted seeds the Network's network and subnet in sync, and the
// external network "public".
func ownRouted(f *neutronfake.Neutron) {
	inSync("192.168.0.0/16", "192.168.0.1")(f)
	f.AddExternalNetwork("public")
}

// withOwnRouter makes n ask for a router of its own on external.
func withOwnRouter(n *samplecrdv1.Network, external string) *samplecrdv1.Network {
	n.Spec.Router = &samplecrdv1.RouterReference{ExternalNetwork: external}
	return n
}

// seedOwnRouter seeds a router of the Network's own on publicNet, with
// our interface on it, and returns the router's ID.
func seedOwnRouter(f *neutronfake.Neutron) string {
	ownRouted(f)
	r, err := f.CreateRouter(context.Background(), ours.ResourceName(owner), ours.Description(), publicNet)
	if err != nil {
		panic(err)
	}
	f.PutPort(ourPort(r.ID))
	return r.ID
}

// TestOwnRouter is the table of passes of a router of the Network's own
// (spec.router.externalNetwork): made marked, on the external network
// the spec names (whether the administrator allows it is pkg/controller/tenancy's,
// asked before the pass), and deleted once no interface is on it.
func TestOwnRouter(t *testing.T) {
	provisionedNet := func() *samplecrdv1.Network {
		return provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
	}
	runPasses(t, []passCase{
		{
			name:    "a router of its own is made, marked, with its gateway on the allowed external network, and the subnet attached",
			network: withOwnRouter(provisionedNet(), "public"),
			seed:    ownRouted,
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindExternalNetwork, neutronfake.CreateRouter,
				neutronfake.CreatePort, neutronfake.AddRouterInterface},
			wantReady:  "True/Provisioned",
			wantEvents: []string{"Normal Created", "Normal Attached"},
			check: func(t *testing.T, f *fixture) {
				rs := f.neutron.Routers()
				if len(rs) != 1 || rs[0].GatewayNetworkID != publicNet {
					t.Fatalf("routers = %+v, want one on %s", rs, publicNet)
				}
				if o, ok := ours.OwnerOf(rs[0].Name, rs[0].Description); !ok || o.UID != testUID {
					t.Errorf("the router %q / %q is not recognisable as this Network's", rs[0].Name, rs[0].Description)
				}
				st := f.network("net").Status.Router
				if st == nil || st.ID != rs[0].ID || st.ExternalNetworkID != publicNet {
					t.Errorf("status.router = %+v", st)
				}
			},
		},
		{
			name:        "an own router already attached costs two reads and no write",
			network:     attachedTo(withOwnRouter(provisionedNet(), "public"), "router-4", "port-5"),
			seed:        func(f *neutronfake.Neutron) { seedOwnRouter(f) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindExternalNetwork},
			wantReady:   "True/Provisioned",
		},
		{
			name:        "spec.router removed: ours is detached, then the router of its own deleted",
			network:     attachedTo(provisionedNet(), "router-4", "port-5"),
			seed:        func(f *neutronfake.Neutron) { seedOwnRouter(f) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.RemoveRouterInterface, neutronfake.FindRouter, neutronfake.DeleteRouter},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Detached", "Normal Deleted"},
			check: func(t *testing.T, f *fixture) {
				if rs := f.neutron.Routers(); len(rs) != 0 {
					t.Errorf("routers left: %+v", rs)
				}
			},
		},
		{
			name:    "a router someone else made is never deleted, even when the spec moves off it",
			network: attachedTo(withOwnRouter(provisionedNet(), "public"), "router-4", "port-6"),
			seed: func(f *neutronfake.Neutron) {
				ownRouted(f)
				edge := f.AddRouter("edge")
				f.PutPort(ourPort(edge))
			},
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.FindExternalNetwork, neutronfake.CreateRouter,
				neutronfake.RemoveRouterInterface, neutronfake.CreatePort, neutronfake.AddRouterInterface},
			wantReady:  "True/Provisioned",
			wantEvents: []string{"Normal Created", "Normal Detached", "Normal Attached"},
			check: func(t *testing.T, f *fixture) {
				if rs := f.neutron.Routers(); len(rs) != 2 {
					t.Errorf("routers = %+v, want edge and the Network's own", rs)
				}
			},
		},
	})
}

// TestOwnRouterOnDelete: a deleted Network's own router goes last, after
// our interface and the subnet and network; another tool's interface on
// it keeps it, and the finalizer, until that tool removes it.
func TestOwnRouterOnDelete(t *testing.T) {
	deletingNet := func() *samplecrdv1.Network {
		return deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))
	}
	runPasses(t, []passCase{
		{
			name:    "interface, network (with its subnet), then the router",
			network: attachedTo(withOwnRouter(deletingNet(), "public"), "router-4", "port-5"),
			seed:    func(f *neutronfake.Neutron) { seedOwnRouter(f) },
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.RemoveRouterInterface,
				neutronfake.DeleteNetwork, neutronfake.FindRouter, neutronfake.DeleteRouter},
			wantEvents: []string{"Normal Deleted"},
			check: func(t *testing.T, f *fixture) {
				if rs := f.neutron.Routers(); len(rs) != 0 {
					t.Errorf("routers left: %+v", rs)
				}
			},
		},
		{
			name:    "another tool's interface on our router keeps it, and the finalizer",
			network: attachedTo(withOwnRouter(deletingNet(), "public"), "router-4", "port-5"),
			seed: func(f *neutronfake.Neutron) {
				r := seedOwnRouter(f)
				f.PutPort(neutron.Port{NetworkID: "their-net", DeviceOwner: neutron.RouterInterfaceOwner, DeviceID: r, Addresses: []string{"10.1.0.1"}})
			},
			wantErr: "backoff",
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.RemoveRouterInterface,
				neutronfake.DeleteNetwork, neutronfake.FindRouter, neutronfake.DeleteRouter, neutronfake.PortsOf},
			wantReady:  "False/DeletionBlocked",
			wantEvents: []string{"Warning DeletionBlocked"},
			check: func(t *testing.T, f *fixture) {
				if ports := f.neutron.Ports("their-net"); len(ports) != 1 {
					t.Errorf("the other tool's interface is gone: %+v", ports)
				}
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released while the router of its own is still there")
				}
				if msg := f.network("net").Status.Conditions[0].Message; !strings.Contains(msg, "port-6") {
					t.Errorf("message %q does not name the other tool's interface port-6", msg)
				}
			},
		},
	})
}
