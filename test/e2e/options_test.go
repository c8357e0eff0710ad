package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/subnetpools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestSubnetOptionsEndToEnd sets every subnet and network option, then
// changes each mutable one in place, and checks each step where a user
// would: status and the printer columns, Neutron, and OVN's DHCP_Options.
func TestSubnetOptionsEndToEnd(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	startController(t, ns)
	cleanupNetworks(t, ns)
	const cidr = "10.61.0.0/24"

	_, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "options"},
		Spec: samplecrdv1.NetworkSpec{
			CIDR:            cidr, // and no gateway: the first host
			DNSNameservers:  []string{"10.61.0.53"},
			HostRoutes:      []samplecrdv1.HostRoute{{Destination: "10.62.0.0/16", NextHop: "10.61.0.254"}},
			AllocationPools: []samplecrdv1.AllocationPool{{Start: "10.61.0.10", End: "10.61.0.99"}},
			MTU:             ptr.To[int32](1400),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := waitForReady(ctx, t, ns, "options", time.Minute)
	ids := [2]string{n.Status.NetworkID, n.Status.SubnetID}
	st := n.Status
	if st.CIDR != cidr || st.Gateway != "10.61.0.1" || st.MTU != 1400 || st.NeutronStatus != "ACTIVE" ||
		!slices.Equal(st.AllocationPools, []samplecrdv1.AllocationPool{{Start: "10.61.0.10", End: "10.61.0.99"}}) {
		t.Errorf("status does not say what Neutron holds: %+v", st)
	}
	if got := printerColumns(ctx, t, ns, "options"); got["CIDR"] != cidr || got["Gateway"] != "10.61.0.1" || got["MTU"] != "1400" {
		t.Errorf("kubectl get shows %v", got)
	}
	s := neutronSubnet(ctx, t, n.Status.SubnetID)
	if s.GatewayIP != "10.61.0.1" || !slices.Equal(s.DNSNameservers, []string{"10.61.0.53"}) || len(s.HostRoutes) != 1 || !s.EnableDHCP {
		t.Errorf("Neutron subnet: %+v", s)
	}
	if got := neutronMTU(ctx, t, n.Status.NetworkID); got != 1400 {
		t.Errorf("Neutron MTU = %d, want 1400", got)
	}
	dhcp := dhcpOptions(cidr)
	framework.Eventually(ctx, t, 30*time.Second, dhcp.has("router=10.61.0.1", "dns_server={10.61.0.53}", "10.62.0.0/16,10.61.0.254", "mtu=1400"))

	// Every mutable option changes at once: one subnet update, one MTU
	// update, the same Neutron IDs.
	patch(ctx, t, ns, "options", `{"spec":{"gateway":"10.61.0.254","dnsNameservers":["10.61.0.53","10.61.0.54"],
		"hostRoutes":[{"destination":"10.63.0.0/16","nextHop":"10.61.0.1"}],
		"allocationPools":[{"start":"10.61.0.100","end":"10.61.0.199"}],"mtu":1300}}`)
	n = waitForReady(ctx, t, ns, "options", time.Minute)
	if got := [2]string{n.Status.NetworkID, n.Status.SubnetID}; got != ids {
		t.Errorf("Neutron IDs changed on an update in place: %v, then %v", ids, got)
	}
	if st := n.Status; st.Gateway != "10.61.0.254" || st.MTU != 1300 ||
		!slices.Equal(st.AllocationPools, []samplecrdv1.AllocationPool{{Start: "10.61.0.100", End: "10.61.0.199"}}) {
		t.Errorf("status after the update: %+v", st)
	}
	s = neutronSubnet(ctx, t, n.Status.SubnetID)
	if !slices.Equal(s.DNSNameservers, []string{"10.61.0.53", "10.61.0.54"}) || len(s.HostRoutes) != 1 || s.HostRoutes[0].DestinationCIDR != "10.63.0.0/16" {
		t.Errorf("Neutron subnet after the update: %+v", s)
	}
	framework.Eventually(ctx, t, 30*time.Second, dhcp.has("router=10.61.0.254", "dns_server={10.61.0.53, 10.61.0.54}", "10.63.0.0/16,10.61.0.1", "mtu=1300"))

	// DHCP off and on again: OVN drops the subnet's DHCP_Options row, then
	// makes it again.
	patch(ctx, t, ns, "options", `{"spec":{"enableDHCP":false}}`)
	n = waitForReady(ctx, t, ns, "options", time.Minute)
	if neutronSubnet(ctx, t, n.Status.SubnetID).EnableDHCP {
		t.Error("Neutron still serves DHCP")
	}
	framework.Eventually(ctx, t, 30*time.Second, dhcp.gone())
	patch(ctx, t, ns, "options", `{"spec":{"enableDHCP":null}}`)
	waitForReady(ctx, t, ns, "options", time.Minute)
	framework.Eventually(ctx, t, 30*time.Second, dhcp.has("router=10.61.0.254"))

	// No gateway: Neutron's gateway_ip becomes null. OVN's driver serves
	// DHCP only from a gateway or a metadata port (the local stack has no
	// metadata agent), so the row goes too.
	patch(ctx, t, ns, "options", `{"spec":{"gateway":null,"noGateway":true}}`)
	n = waitForReady(ctx, t, ns, "options", time.Minute)
	if n.Status.Gateway != "" || neutronSubnet(ctx, t, n.Status.SubnetID).GatewayIP != "" {
		t.Errorf("a gateway is left: status %q", n.Status.Gateway)
	}
	framework.Eventually(ctx, t, 30*time.Second, dhcp.gone())
	if got := [2]string{n.Status.NetworkID, n.Status.SubnetID}; got != ids {
		t.Errorf("Neutron IDs changed: %v, then %v", ids, got)
	}
}

// TestIPv6ModesReachNeutron creates an IPv6 Network with both modes and a
// DNS server, and finds them in Neutron and in OVN.
func TestIPv6ModesReachNeutron(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	startController(t, ns)
	cleanupNetworks(t, ns)
	const cidr = "fd00:61::/64"

	_, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "v6"},
		Spec: samplecrdv1.NetworkSpec{CIDR: cidr, DNSNameservers: []string{"fd00:61::53"},
			IPv6AddressMode: samplecrdv1.IPv6ModeDHCPv6Stateful, IPv6RAMode: samplecrdv1.IPv6ModeDHCPv6Stateful},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := waitForReady(ctx, t, ns, "v6", time.Minute)
	s := neutronSubnet(ctx, t, n.Status.SubnetID)
	if s.IPv6AddressMode != "dhcpv6-stateful" || s.IPv6RAMode != "dhcpv6-stateful" || s.GatewayIP != "fd00:61::1" {
		t.Errorf("Neutron subnet: %+v", s)
	}
	framework.Eventually(ctx, t, 30*time.Second, dhcpOptions(cidr).has(`dns_server={fd00:61::53}`))
}

// patch merge-patches a Network's spec.
func patch(ctx context.Context, t *testing.T, ns, name, body string) {
	t.Helper()
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching %s with %s: %v", name, body, err)
	}
}

func neutronSubnet(ctx context.Context, t *testing.T, id string) *subnets.Subnet {
	t.Helper()
	s, err := subnets.Get(ctx, stack.Neutron.Client, id).Extract()
	if err != nil {
		t.Fatalf("subnet %s: %v", id, err)
	}
	return s
}

func neutronMTU(ctx context.Context, t *testing.T, id string) int {
	t.Helper()
	var n struct {
		networks.Network
		mtu.NetworkMTUExt
	}
	if err := networks.Get(ctx, stack.Neutron.Client, id).ExtractInto(&n); err != nil {
		t.Fatalf("network %s: %v", id, err)
	}
	return n.MTU
}

// printerColumns gets a Network as kubectl get does (a Table), and returns
// its cells by column name.
func printerColumns(ctx context.Context, t *testing.T, ns, name string) map[string]string {
	t.Helper()
	raw, err := networkClient(t).SamplecrdV1().RESTClient().Get().Namespace(ns).Resource("networks").Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil || len(table.Rows) != 1 {
		t.Fatalf("not a one-row table (%v): %s", err, raw)
	}
	out := map[string]string{}
	for i, c := range table.ColumnDefinitions {
		out[c.Name] = fmt.Sprint(table.Rows[0].Cells[i])
	}
	return out
}

// dhcpOptions is OVN's DHCP_Options row of a subnet, found by its cidr.
type dhcpOptions string

func (cidr dhcpOptions) read(ctx context.Context) (string, error) {
	return stack.Neutron.NBCtl(ctx, "--bare", "--columns=options", "find", "DHCP_Options", fmt.Sprintf("cidr=%q", string(cidr)))
}

// has waits until the row's options contain every one of want.
func (cidr dhcpOptions) has(want ...string) func(context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		out, err := cidr.read(ctx)
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false, fmt.Sprintf("OVN DHCP_Options of %s lacks %s: %s", cidr, w, out), err
			}
		}
		return true, "", err
	}
}

func (cidr dhcpOptions) gone() func(context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		out, err := cidr.read(ctx)
		return strings.TrimSpace(out) == "", fmt.Sprintf("OVN still has DHCP_Options for %s: %s", cidr, out), err
	}
}

// TestOrphanLeavesTheNetworkUnmarked deletes a Network whose deletionPolicy
// is Orphan: the Network goes, its Neutron network and subnet stay, without
// the mark, and several lists of Neutron later the controller has still
// not touched them.
func TestOrphanLeavesTheNetworkUnmarked(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns, "--neutron-resync-period=1s")
	cleanupNetworks(t, ns)

	_, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "kept"},
		Spec:       samplecrdv1.NetworkSpec{CIDR: "10.64.0.0/24", DeletionPolicy: samplecrdv1.DeletionPolicyOrphan},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := waitForReady(ctx, t, ns, "kept", time.Minute)
	t.Cleanup(func() {
		_ = subnets.Delete(context.Background(), stack.Neutron.Client, n.Status.SubnetID).ExtractErr()
		_ = networks.Delete(context.Background(), stack.Neutron.Client, n.Status.NetworkID).ExtractErr()
	})
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "kept", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "kept", time.Minute)
	lists := c.metric(ctx, t, "network_controller_neutron_refreshes_total", map[string]string{"result": "success"})
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		now := c.metric(ctx, t, "network_controller_neutron_refreshes_total", map[string]string{"result": "success"})
		return now >= lists+3, fmt.Sprintf("%.0f lists of Neutron since the delete", now-lists), nil
	})

	net, err := networks.Get(ctx, stack.Neutron.Client, n.Status.NetworkID).Extract()
	if err != nil {
		t.Fatalf("the orphaned network is gone: %v", err)
	}
	s := neutronSubnet(ctx, t, n.Status.SubnetID)
	for _, got := range [][2]string{{net.Name, net.Description}, {s.Name, s.Description}} {
		if _, ours := c.mark(t).OwnerOf(got[0], got[1]); ours {
			t.Errorf("%q / %q still carries the mark", got[0], got[1])
		}
		if !strings.Contains(got[1], "released by network-controller") || !strings.Contains(got[1], ns+"/kept") {
			t.Errorf("description %q does not say where it came from", got[1])
		}
	}
	if nets, _ := c.neutronNetworks(ctx, t); len(nets) != 0 {
		t.Errorf("Neutron networks still marked for the cluster: %v", nets)
	}
}

// TestAdoptionIsAPrivilege makes a network and subnet by hand, as a person
// with the openstack CLI would, and a Network that adopts it. In a
// namespace the administrator did not allow, it is AdoptionRefused and
// Neutron is not even read; allowed, it becomes Ready with those IDs and
// the mark, and deleting the Network gives the network and subnet back
// under their own names. A mismatch of a network no policy names says
// only that it differs; another cluster's network is refused; Neutron is left exactly as
// it was by each refusal.
func TestAdoptionIsAPrivilege(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	handMade := func(name, cidr, gateway string) (networkID, subnetID string) {
		t.Helper()
		n, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{Name: name, Description: "made by a person"}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		s, err := subnets.Create(ctx, stack.Neutron.Client, subnets.CreateOpts{NetworkID: n.ID, Name: name + "-subnet", Description: "by hand",
			CIDR: cidr, GatewayIP: &gateway, IPVersion: 4}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = subnets.Delete(context.Background(), stack.Neutron.Client, s.ID).ExtractErr()
			_ = networks.Delete(context.Background(), stack.Neutron.Client, n.ID).ExtractErr()
		})
		return n.ID, s.ID
	}
	adopt := func(name, cidr, gateway, networkID string) {
		t.Helper()
		_, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       samplecrdv1.NetworkSpec{CIDR: cidr, Gateway: gateway, Adopt: &samplecrdv1.Adoption{NetworkID: networkID}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(networkID, subnetID, name string) {
		t.Helper()
		n, err := networks.Get(ctx, stack.Neutron.Client, networkID).Extract()
		if err != nil || n.Name != name || n.Description != "made by a person" {
			t.Errorf("network %s is %+v (%v), want it as it was made by hand", networkID, n, err)
		}
		s := neutronSubnet(ctx, t, subnetID)
		if s.Name != name+"-subnet" || s.Description != "by hand" {
			t.Errorf("subnet %s is %q / %q, want it as it was made by hand", subnetID, s.Name, s.Description)
		}
	}

	netID, subnetID := handMade("by-hand", "10.65.0.0/24", "10.65.0.1")
	adopt("adopted", "10.65.0.0/24", "10.65.0.1", netID)
	notAllowed := startController(t, ns, "--adoption-namespaces=some-other-namespace")
	r := waitForCondition(ctx, t, ns, "adopted", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonAdoptionRefused)
	if msg := readyCondition(r).Message; !strings.Contains(msg, "--adoption-namespaces") {
		t.Errorf("the refusal does not say how adoption is allowed: %s", msg)
	}
	unchanged(netID, subnetID, "by-hand")
	if err := notAllowed.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	c := startController(t, ns, "--adoption-namespaces="+ns)
	cleanupNetworks(t, ns) // before c stops: cleanups run last-in, first-out
	n := waitForReady(ctx, t, ns, "adopted", time.Minute)
	if n.Status.NetworkID != netID || n.Status.SubnetID != subnetID {
		t.Errorf("status names %s/%s, want the hand-made %s/%s", n.Status.NetworkID, n.Status.SubnetID, netID, subnetID)
	}
	s := neutronSubnet(ctx, t, subnetID)
	if o, ok := c.mark(t).OwnerOf(s.Name, s.Description); !ok || o.UID != n.UID {
		t.Errorf("the adopted subnet is not marked as the Network's: %q / %q", s.Name, s.Description)
	}

	otherNet, otherSubnet := handMade("by-hand-2", "10.66.0.0/24", "10.66.0.1")
	adopt("mismatch", "10.66.0.0/24", "10.66.0.254", otherNet)
	m := waitForCondition(ctx, t, ns, "mismatch", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonAdoptionMismatch)
	// No policy names the network: the message names no field (a field
	// at a time would tell its settings), and says where the matching
	// spec comes from.
	if msg := readyCondition(m).Message; strings.Contains(msg, "gateway") || !strings.Contains(msg, "network-controller import") || strings.Contains(msg, "10.66.0.1") {
		t.Errorf("the message names a field, shows Neutron's value, or does not point to import: %s", msg)
	}
	unchanged(otherNet, otherSubnet, "by-hand-2")

	// Another cluster's network is refused, whatever its spec says.
	other, err := neutron.NewMark("e2e-other-"+ns[len(ns)-8:], uuid.NewUUID())
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{
		Name: other.ResourceName(neutron.Owner{Namespace: ns, Name: "theirs", UID: uuid.NewUUID()}), Description: other.Description()}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = networks.Delete(context.Background(), stack.Neutron.Client, theirs.ID).ExtractErr() })
	adopt("theirs", "10.67.0.0/24", "", theirs.ID)
	r = waitForCondition(ctx, t, ns, "theirs", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonAdoptionRefused)
	if msg := readyCondition(r).Message; !strings.Contains(msg, "another cluster's network-controller") || strings.Contains(msg, other.Description()) {
		t.Errorf("the refusal does not say whose it is, or shows the other cluster's mark: %s", msg)
	}
	if got, err := networks.Get(ctx, stack.Neutron.Client, theirs.ID).Extract(); err != nil || got.Description != other.Description() || got.Name != theirs.Name {
		t.Errorf("the other cluster's network was changed: %+v (%v)", got, err)
	}

	// Adopted is released on delete by default, under its own names.
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "adopted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "adopted", time.Minute)
	unchanged(netID, subnetID, "by-hand")
}

// TestRangesFromASubnetPool makes a subnet pool, as an operator would, and
// two Networks that ask it for a range, one by the pool's name with a
// prefix length, one by its ID with the pool's default: each gets its own
// range of the pool, shown in status and by kubectl get, and keeps it
// through an update.
func TestRangesFromASubnetPool(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	pool, err := subnetpools.Create(ctx, stack.Neutron.Client, subnetpools.CreateOpts{
		Name: "e2e-" + ns, Prefixes: []string{"10.200.0.0/16"}, DefaultPrefixLen: 24,
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = subnetpools.Delete(context.Background(), stack.Neutron.Client, pool.ID).ExtractErr() })
	startController(t, ns)
	cleanupNetworks(t, ns)
	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{SubnetPools: []string{pool.Name, pool.ID}})

	for name, spec := range map[string]samplecrdv1.NetworkSpec{
		"by-name": {SubnetPool: pool.Name, PrefixLength: ptr.To[int32](26), DNSNameservers: []string{"10.200.255.53"}},
		"by-id":   {SubnetPool: pool.ID},
	} {
		if _, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	byName := waitForReady(ctx, t, ns, "by-name", time.Minute)
	byID := waitForReady(ctx, t, ns, "by-id", time.Minute)
	inPool := netip.MustParsePrefix("10.200.0.0/16")
	ranges := map[string]int{byName.Status.CIDR: 26, byID.Status.CIDR: 24}
	for cidr, bits := range ranges {
		p, err := netip.ParsePrefix(cidr)
		if err != nil || p.Bits() != bits || !inPool.Contains(p.Addr()) {
			t.Errorf("status.cidr %q: want a /%d of the pool's %s", cidr, bits, inPool)
		}
	}
	if len(ranges) != 2 {
		t.Errorf("both Networks got %s", byName.Status.CIDR)
	}
	if got := printerColumns(ctx, t, ns, "by-name"); got["CIDR"] != byName.Status.CIDR || got["Gateway"] != byName.Status.Gateway || got["Pool"] != pool.Name {
		t.Errorf("kubectl get shows %v", got)
	}
	s := neutronSubnet(ctx, t, byName.Status.SubnetID)
	if s.SubnetPoolID != pool.ID || !slices.Equal(s.DNSNameservers, []string{"10.200.255.53"}) {
		t.Errorf("Neutron subnet: pool %s, DNS %v", s.SubnetPoolID, s.DNSNameservers)
	}

	patch(ctx, t, ns, "by-name", `{"spec":{"dnsNameservers":["10.200.255.54"]}}`)
	n := waitForReady(ctx, t, ns, "by-name", time.Minute)
	if n.Status.SubnetID != byName.Status.SubnetID || n.Status.CIDR != byName.Status.CIDR {
		t.Errorf("the update moved the subnet: %s %s, then %s %s", byName.Status.SubnetID, byName.Status.CIDR, n.Status.SubnetID, n.Status.CIDR)
	}
	if got := neutronSubnet(ctx, t, n.Status.SubnetID).DNSNameservers; !slices.Equal(got, []string{"10.200.255.54"}) {
		t.Errorf("Neutron DNS = %v", got)
	}
}
