package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/test/framework"
)

// Routers (issue 25): spec.router attaches the subnet to a router someone
// else made, through an interface the controller makes and alone removes.

// othersRouter makes a router as another tool would, removed when the
// test ends.
func othersRouter(ctx context.Context, t *testing.T, name string) *routers.Router {
	t.Helper()
	r, err := routers.Create(ctx, stack.Neutron.Client, routers.CreateOpts{Name: name}).Extract()
	if err != nil {
		t.Fatalf("creating router %s: %v", name, err)
	}
	t.Cleanup(func() { _ = routers.Delete(context.Background(), stack.Neutron.Client, r.ID).ExtractErr() })
	return r
}

// createRouted creates Network ns/name of cidr on the router ref names.
func createRouted(ctx context.Context, t *testing.T, ns, name string, spec samplecrdv1.NetworkSpec) {
	t.Helper()
	n := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Network %s/%s: %v", ns, name, err)
	}
}

// patchRouter sets spec.router of ns/name to router, JSON ("null" removes it).
func patchRouter(ctx context.Context, t *testing.T, ns, name, router string) {
	t.Helper()
	patch := []byte(`{"spec":{"router":` + router + `}}`)
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching the router of %s/%s: %v", ns, name, err)
	}
}

// attachedInNeutronAndOVN checks that n's status names an interface on
// routerID at address, that Neutron holds it as the controller's, and
// that OVN's Northbound database has the logical router port on it.
func attachedInNeutronAndOVN(ctx context.Context, t *testing.T, c *controller, n *samplecrdv1.Network, routerID, address, lrpNetworks string) {
	t.Helper()
	st := n.Status.Router
	if st == nil || st.ID != routerID || st.InterfaceAddress != address || st.InterfacePortID == "" {
		t.Fatalf("%s: status.router = %+v, want on %s at %s", n.Name, st, routerID, address)
	}
	p, err := ports.Get(ctx, stack.Neutron.Client, st.InterfacePortID).Extract()
	if err != nil {
		t.Fatalf("%s: the interface in status is not in Neutron: %v", n.Name, err)
	}
	if p.DeviceOwner != neutron.RouterInterfaceOwner || p.DeviceID != routerID || len(p.FixedIPs) != 1 || p.FixedIPs[0].IPAddress != address {
		t.Errorf("%s: Neutron port %s: owner %s device %s ips %v", n.Name, p.ID, p.DeviceOwner, p.DeviceID, p.FixedIPs)
	}
	if o, ok := c.mark(t).OwnerOf(p.Name, p.Description); !ok || o.UID != n.UID {
		t.Errorf("%s: the interface %q (%q) is not marked as the Network's", n.Name, p.Name, p.Description)
	}
	lrp := "lrp-" + st.InterfacePortID
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=networks", "find", "Logical_Router_Port", "name="+lrp)
		return strings.TrimSpace(out) == lrpNetworks, "OVN " + lrp + " networks: " + out, err
	})
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "lrp-list", "neutron-"+routerID)
		return strings.Contains(out, lrp), "OVN router neutron-" + routerID + " ports: " + out, err
	})
}

// goneFromNeutronAndOVN waits until port is neither in Neutron nor, as
// a logical router port, in OVN.
func goneFromNeutronAndOVN(ctx context.Context, t *testing.T, portID string) {
	t.Helper()
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		_, err := ports.Get(ctx, stack.Neutron.Client, portID).Extract()
		out, nbErr := stack.Neutron.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Router_Port", "name=lrp-"+portID)
		return gophercloud.ResponseCodeIs(err, 404) && strings.TrimSpace(out) == "",
			fmt.Sprintf("port %s: Neutron %v, OVN %q", portID, err, out), nbErr
	})
}

// TestRouterInterfacesAreOursAlone follows two Networks, IPv4 and IPv6
// (SLAAC), on a router someone else made: attached on their gateways, as
// Neutron and OVN show; detached when spec.router goes and attached again
// by ID; and, on delete, detached before the subnet is deleted, while an
// interface another tool put on the same subnet blocks the delete and
// survives it. The router itself is never touched.
func TestRouterInterfacesAreOursAlone(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)
	edge := othersRouter(ctx, t, "edge-"+ns)
	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{Routers: []string{edge.Name, edge.ID}})

	createRouted(ctx, t, ns, "v4", samplecrdv1.NetworkSpec{CIDR: "10.91.0.0/24", Gateway: "10.91.0.1",
		Router: &samplecrdv1.RouterReference{Name: edge.Name}})
	createRouted(ctx, t, ns, "v6", samplecrdv1.NetworkSpec{CIDR: "fd91::/64", Gateway: "fd91::1",
		IPv6AddressMode: samplecrdv1.IPv6ModeSLAAC, IPv6RAMode: samplecrdv1.IPv6ModeSLAAC,
		Router: &samplecrdv1.RouterReference{ID: edge.ID}})
	v4 := waitForReady(ctx, t, ns, "v4", time.Minute)
	v6 := waitForReady(ctx, t, ns, "v6", time.Minute)
	attachedInNeutronAndOVN(ctx, t, c, v4, edge.ID, "10.91.0.1", "10.91.0.1/24")
	attachedInNeutronAndOVN(ctx, t, c, v6, edge.ID, "fd91::1", "fd91::1/64")

	// A host on v4: a Neutron port bound on a chassis of OVN's, in a
	// network namespace. What it reaches goes through OVN's real pipeline.
	host := plugHost(ctx, t, ns, v4, "10.91.0.10")
	reaches := func(want bool) func(ctx context.Context) (bool, string, error) {
		return func(ctx context.Context) (bool, string, error) {
			err := host.chassis.Ping(ctx, host.netns, "10.91.0.1")
			return (err == nil) == want, fmt.Sprintf("ping 10.91.0.1 from the host: %v", err), nil
		}
	}

	// throughOurs checks that the host reaches the gateway, and that the
	// address it resolved it to is our interface's.
	throughOurs := func(t *testing.T) {
		t.Helper()
		if err := host.chassis.FlushNeighbours(ctx, host.netns); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, time.Minute, reaches(true))
		ours, err := ports.Get(ctx, stack.Neutron.Client, v4.Status.Router.InterfacePortID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if mac, err := host.chassis.Neighbour(ctx, host.netns, "10.91.0.1"); err != nil || mac != ours.MACAddress {
			t.Errorf("the host resolved the gateway to %q (%v), want our interface's MAC %s", mac, err, ours.MACAddress)
		}
	}

	t.Run("a host on the Network reaches the router on the gateway, through our interface", throughOurs)

	t.Run("spec.router removed detaches ours; set again by ID attaches anew", func(t *testing.T) {
		first := v4.Status.Router.InterfacePortID
		patchRouter(ctx, t, ns, "v4", "null")
		framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
			n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "v4", metav1.GetOptions{})
			return err == nil && n.Status.ObservedGeneration == n.Generation && n.Status.Router == nil,
				fmt.Sprintf("status.router = %+v", n.Status.Router), err
		})
		goneFromNeutronAndOVN(ctx, t, first)
		framework.Eventually(ctx, t, 30*time.Second, reaches(false))
		patchRouter(ctx, t, ns, "v4", `{"id":"`+edge.ID+`"}`)
		framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
			n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "v4", metav1.GetOptions{})
			v4 = n
			return err == nil && n.Status.Router != nil && n.Status.Router.InterfacePortID != first,
				fmt.Sprintf("status.router = %+v", n.Status.Router), err
		})
		attachedInNeutronAndOVN(ctx, t, c, v4, edge.ID, "10.91.0.1", "10.91.0.1/24")
		throughOurs(t)
	})
	host.remove(ctx, t)

	t.Run("delete detaches ours first; another tool's interface blocks the delete and survives", func(t *testing.T) {
		// The other tool's interface on v4's subnet, on a router of its own.
		theirs := othersRouter(ctx, t, "theirs-"+ns)
		foreign, err := routers.AddInterface(ctx, stack.Neutron.Client, theirs.ID, routers.AddInterfaceOpts{SubnetID: "", PortID: foreignPort(ctx, t, v4)}).Extract()
		if err != nil {
			t.Fatalf("attaching another tool's router: %v", err)
		}
		ours := v4.Status.Router.InterfacePortID
		if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "v4", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		blocked := waitForCondition(ctx, t, ns, "v4", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonDeletionBlocked)
		if !strings.Contains(readyCondition(blocked).Message, foreign.PortID) {
			t.Errorf("DeletionBlocked does not name the foreign interface %s: %s", foreign.PortID, readyCondition(blocked).Message)
		}
		// Detached before the subnet goes: ours is gone while the subnet,
		// held by theirs, is still there.
		goneFromNeutronAndOVN(ctx, t, ours)
		if p, err := ports.Get(ctx, stack.Neutron.Client, foreign.PortID).Extract(); err != nil || p.DeviceID != theirs.ID {
			t.Fatalf("the foreign interface did not survive: %+v, %v", p, err)
		}

		if _, err := routers.RemoveInterface(ctx, stack.Neutron.Client, theirs.ID, routers.RemoveInterfaceOpts{PortID: foreign.PortID}).Extract(); err != nil {
			t.Fatalf("the other tool removing its interface: %v", err)
		}
		waitForGone(ctx, t, ns, "v4", time.Minute)
		if _, err := networks.Get(ctx, stack.Neutron.Client, v4.Status.NetworkID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
			t.Errorf("the Neutron network outlived its Network: %v", err)
		}
	})

	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "v6", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "v6", time.Minute)
	goneFromNeutronAndOVN(ctx, t, v6.Status.Router.InterfacePortID)
	if _, err := routers.Get(ctx, stack.Neutron.Client, edge.ID).Extract(); err != nil {
		t.Errorf("the router someone else made did not survive its Networks: %v", err)
	}
}

// grantRouters sets the routers the TenantPolicy name grants, JSON
// ("null" grants none), as an administrator edits it.
func grantRouters(ctx context.Context, t *testing.T, name, routers string) {
	t.Helper()
	patch := []byte(`{"spec":{"routers":` + routers + `}}`)
	if _, err := networkClient(t).SamplecrdV1().TenantPolicies().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("setting the routers of TenantPolicy %s to %s: %v", name, routers, err)
	}
}

// onSwitch reports whether OVN's logical switch of network has a port of
// portID, as it has for a router interface on the network's subnet.
func onSwitch(ctx context.Context, networkID, portID string) (bool, string, error) {
	out, err := stack.Neutron.NBCtl(ctx, "lsp-list", "neutron-"+networkID)
	return strings.Contains(out, portID), "OVN switch neutron-" + networkID + " ports: " + out, err
}

// TestAWithdrawnRouterGrantDetachesInNeutronAndOVN: a Network attached
// to a router that a TenantPolicy grants is detached when the policy stops
// granting it: status.router is cleared, the interface is gone from
// Neutron and from OVN's router and switch, the Network is NotAllowed, and
// its network and subnet stay, the same ones. Given back, the grant
// attaches it again.
func TestAWithdrawnRouterGrantDetachesInNeutronAndOVN(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)
	edge := othersRouter(ctx, t, "edge-"+ns)
	tp := grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{Routers: []string{edge.Name}})

	createRouted(ctx, t, ns, "routed", samplecrdv1.NetworkSpec{CIDR: "10.88.0.0/24", Gateway: "10.88.0.1",
		Router: &samplecrdv1.RouterReference{Name: edge.Name}})
	n := waitForReady(ctx, t, ns, "routed", time.Minute)
	attachedInNeutronAndOVN(ctx, t, c, n, edge.ID, "10.88.0.1", "10.88.0.1/24")
	first := n.Status.Router.InterfacePortID
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		return onSwitch(ctx, n.Status.NetworkID, first)
	})

	grantRouters(ctx, t, tp.Name, "null")
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		got, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "routed", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		ready := readyCondition(got)
		return got.Status.Router == nil && ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == samplecrdv1.ReasonNotAllowed,
			fmt.Sprintf("status.router = %+v, Ready: %+v", got.Status.Router, ready), nil
	})
	goneFromNeutronAndOVN(ctx, t, first)
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		on, msg, err := onSwitch(ctx, n.Status.NetworkID, first)
		return !on, msg, err
	})
	withdrawn, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "routed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if withdrawn.Status.NetworkID != n.Status.NetworkID || withdrawn.Status.SubnetID != n.Status.SubnetID {
		t.Errorf("status names network %s subnet %s, want the same %s and %s", withdrawn.Status.NetworkID, withdrawn.Status.SubnetID, n.Status.NetworkID, n.Status.SubnetID)
	}
	if !neutronNetworkExists(ctx, t, n.Status.NetworkID) {
		t.Errorf("the network %s went with the grant", n.Status.NetworkID)
	}
	if _, err := subnets.Get(ctx, stack.Neutron.Client, n.Status.SubnetID).Extract(); err != nil {
		t.Errorf("the subnet %s went with the grant: %v", n.Status.SubnetID, err)
	}
	if _, err := routers.Get(ctx, stack.Neutron.Client, edge.ID).Extract(); err != nil {
		t.Errorf("the router someone else made did not survive the withdrawal: %v", err)
	}

	grantRouters(ctx, t, tp.Name, `["`+edge.Name+`"]`)
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		got, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "routed", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		n = got
		ready := readyCondition(got)
		return got.Status.Router != nil && ready != nil && ready.Status == metav1.ConditionTrue,
			fmt.Sprintf("status.router = %+v, Ready: %+v", got.Status.Router, ready), nil
	})
	attachedInNeutronAndOVN(ctx, t, c, n, edge.ID, "10.88.0.1", "10.88.0.1/24")
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		return onSwitch(ctx, n.Status.NetworkID, n.Status.Router.InterfacePortID)
	})
	if n.Status.NetworkID != withdrawn.Status.NetworkID || n.Status.SubnetID != withdrawn.Status.SubnetID {
		t.Errorf("re-attached on network %s subnet %s, want the kept %s and %s", n.Status.NetworkID, n.Status.SubnetID, withdrawn.Status.NetworkID, withdrawn.Status.SubnetID)
	}
}

// host is a machine on a Network: a Neutron port of its own, plugged on
// a chassis into a network namespace.
type host struct {
	chassis *framework.Chassis
	netns   string
	portID  string
}

// plugHost starts a chassis and puts a host on n at address.
func plugHost(ctx context.Context, t *testing.T, ns string, n *samplecrdv1.Network, address string) *host {
	t.Helper()
	chassis, err := stack.Neutron.StartChassis(ctx, filepath.Join(stack.Dir, "chassis-"+ns), "chassis-"+ns)
	if err != nil {
		t.Fatalf("starting a chassis: %v", err)
	}
	t.Cleanup(chassis.Stop)
	// No port security and no security group: the test is about the
	// router, not about what a security group lets through.
	opts := portsecurity.PortCreateOptsExt{PortSecurityEnabled: ptr.To(false), CreateOptsBuilder: ports.CreateOpts{
		NetworkID: n.Status.NetworkID, Name: "host-" + ns, SecurityGroups: &[]string{},
		FixedIPs: []ports.IP{{SubnetID: n.Status.SubnetID, IPAddress: address}}}}
	p, err := ports.Create(ctx, stack.Neutron.Client, opts).Extract()
	if err != nil {
		t.Fatalf("creating the host's port: %v", err)
	}
	h := &host{chassis: chassis, netns: "host-" + ns, portID: p.ID}
	t.Cleanup(func() { h.remove(context.Background(), t) })
	if err := chassis.Plug(ctx, h.netns, p.ID, p.MACAddress, address+"/24", n.Status.Gateway); err != nil {
		t.Fatalf("plugging the host: %v", err)
	}
	return h
}

// remove unplugs the host and deletes its port, which would otherwise
// block its Network's delete.
func (h *host) remove(ctx context.Context, t *testing.T) {
	t.Helper()
	h.chassis.Unplug(ctx, h.netns, h.portID)
	if err := ports.Delete(ctx, stack.Neutron.Client, h.portID).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("deleting the host's port: %v", err)
	}
}

// foreignPort makes a port on n's subnet as another tool would, with no
// mark, and returns its ID.
func foreignPort(ctx context.Context, t *testing.T, n *samplecrdv1.Network) string {
	t.Helper()
	p, err := ports.Create(ctx, stack.Neutron.Client, ports.CreateOpts{NetworkID: n.Status.NetworkID,
		FixedIPs: []ports.IP{{SubnetID: n.Status.SubnetID, IPAddress: "10.91.0.2"}}}).Extract()
	if err != nil {
		t.Fatalf("another tool's port: %v", err)
	}
	return p.ID
}

// externalNetwork makes an external network with a subnet, as a cloud
// administrator does, removed when the test ends.
func externalNetwork(ctx context.Context, t *testing.T, name, cidr string) *networks.Network {
	t.Helper()
	isExternal := true
	n, err := networks.Create(ctx, stack.Neutron.Client, external.CreateOptsExt{
		CreateOptsBuilder: networks.CreateOpts{Name: name}, External: &isExternal}).Extract()
	if err != nil {
		t.Fatalf("creating external network %s: %v", name, err)
	}
	t.Cleanup(func() { _ = networks.Delete(context.Background(), stack.Neutron.Client, n.ID).ExtractErr() })
	if _, err := subnets.Create(ctx, stack.Neutron.Client, subnets.CreateOpts{NetworkID: n.ID, CIDR: cidr, IPVersion: gophercloud.IPv4}).Extract(); err != nil {
		t.Fatalf("creating the subnet of %s: %v", name, err)
	}
	return n
}

// TestARouterOfItsOwn: a Network that asks for a router of its own on an
// external network the administrator allows gets one, marked as its own,
// with its gateway there, as Neutron and OVN show, and a host on the
// Network reaches the gateway through it. One that names another external
// network gets none, and says why. Deleting the Network deletes its
// router last.
func TestARouterOfItsOwn(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	public := externalNetwork(ctx, t, "public-"+ns, "172.24.91.0/24")
	elsewhere := externalNetwork(ctx, t, "elsewhere-"+ns, "172.24.92.0/24")
	c := startController(t, ns, "--router-external-networks="+public.Name)
	cleanupNetworks(t, ns)

	createRouted(ctx, t, ns, "own", samplecrdv1.NetworkSpec{CIDR: "10.92.0.0/24", Gateway: "10.92.0.1",
		Router: &samplecrdv1.RouterReference{ExternalNetwork: public.Name}})
	createRouted(ctx, t, ns, "refused", samplecrdv1.NetworkSpec{CIDR: "10.93.0.0/24",
		Router: &samplecrdv1.RouterReference{ExternalNetwork: elsewhere.ID}})

	own := waitForReady(ctx, t, ns, "own", time.Minute)
	st := own.Status.Router
	if st == nil || st.ExternalNetworkID != public.ID {
		t.Fatalf("status.router = %+v, want a router on %s", st, public.ID)
	}
	r, err := routers.Get(ctx, stack.Neutron.Client, st.ID).Extract()
	if err != nil {
		t.Fatalf("the router in status is not in Neutron: %v", err)
	}
	if o, ok := c.mark(t).OwnerOf(r.Name, r.Description); !ok || o.UID != own.UID {
		t.Errorf("router %q (%q) is not marked as the Network's", r.Name, r.Description)
	}
	if r.GatewayInfo.NetworkID != public.ID {
		t.Errorf("the router's gateway is on %q, want %s", r.GatewayInfo.NetworkID, public.ID)
	}
	attachedInNeutronAndOVN(ctx, t, c, own, r.ID, "10.92.0.1", "10.92.0.1/24")
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=networks", "list", "Logical_Router_Port")
		return strings.Contains(out, "172.24.91."), "OVN logical router ports: " + out, err
	})

	h := plugHost(ctx, t, ns, own, "10.92.0.10")
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		err := h.chassis.Ping(ctx, h.netns, "10.92.0.1")
		return err == nil, fmt.Sprintf("ping 10.92.0.1: %v", err), nil
	})
	h.remove(ctx, t)

	refused := waitForCondition(ctx, t, ns, "refused", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonExternalNetworkNotAllowed)
	if !strings.Contains(readyCondition(refused).Message, "--router-external-networks") {
		t.Errorf("the refusal does not say which flag allows it: %s", readyCondition(refused).Message)
	}
	if refused.Status.Router != nil {
		t.Errorf("status.router = %+v for a refused router", refused.Status.Router)
	}

	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "own", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "own", time.Minute)
	if _, err := routers.Get(ctx, stack.Neutron.Client, r.ID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("the Network's own router outlived it: %v", err)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Router", "name=neutron-"+r.ID)
		return strings.TrimSpace(out) == "", "OVN still has the router: " + out, err
	})
}

// TestLostRouterAnswersLeaveOneInterface loses the answers to the port
// create and to the attach of a routed Network, while Neutron carries both
// out: the late port is found and used, the late attach is seen, and
// neither is sent again, so the router holds exactly one interface of
// ours.
func TestLostRouterAnswersLeaveOneInterface(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	edge := othersRouter(ctx, t, "edge-"+ns)
	proxy := faultProxy(t)
	attach := "/v2.0/routers/" + edge.ID + "/add_router_interface"
	lostPort := proxy.HoldUntilClientGone(http.MethodPost, "/v2.0/ports", 1)
	lostAttach := proxy.HoldUntilClientGone(http.MethodPut, attach, 1)
	c := startController(t, ns, "--neutron-endpoint="+proxy.URL, "--neutron-timeout=2s")
	cleanupNetworks(t, ns)
	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{Routers: []string{edge.Name}})

	createRouted(ctx, t, ns, "lost", samplecrdv1.NetworkSpec{CIDR: "10.94.0.0/24", Gateway: "10.94.0.1",
		Router: &samplecrdv1.RouterReference{Name: edge.Name}})
	for _, h := range []*framework.Hold{lostPort, lostAttach} {
		select {
		case <-h.Completed():
		case <-ctx.Done():
			t.Fatal("a held request never reached Neutron")
		}
	}
	n := waitForReady(ctx, t, ns, "lost", time.Minute)
	attachedInNeutronAndOVN(ctx, t, c, n, edge.ID, "10.94.0.1", "10.94.0.1/24")
	page, err := ports.List(stack.Neutron.Client, ports.ListOpts{DeviceID: edge.ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	onEdge, err := ports.ExtractPorts(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(onEdge) != 1 || onEdge[0].ID != n.Status.Router.InterfacePortID {
		t.Errorf("the router has %d interfaces (%+v), want only ours, %s", len(onEdge), onEdge, n.Status.Router.InterfacePortID)
	}
	if got := proxy.Arrivals(http.MethodPost, "/v2.0/ports"); got != 1 {
		t.Errorf("%d port creates, want 1: the lost one was sent again", got)
	}
	if got := proxy.Arrivals(http.MethodPut, attach); got != 1 {
		t.Errorf("%d attaches, want 1: the lost one was sent again", got)
	}
}
