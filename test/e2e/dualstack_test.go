package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/test/framework"
)

// The e2e tests of issue 42's dual-stack Networks (samplecrd.k8s.io/v2,
// one Neutron network with one subnet per spec.subnets entry), on the
// shared stack, whose CRD converts through the webhook.

// ipv6Subnet is a v2 subnet of cidr whose addresses and router
// advertisements are DHCPv6-stateless: unlike SLAAC, a mode for which
// OVN keeps DHCP options, so that OVN shows the subnet.
func ipv6Subnet(cidr string) samplecrdv2.SubnetSpec {
	return samplecrdv2.SubnetSpec{CIDR: cidr, IPv6AddressMode: samplecrdv2.IPv6ModeDHCPv6Stateless, IPv6RAMode: samplecrdv2.IPv6ModeDHCPv6Stateless}
}

// createDualStack creates a v2 Network of an IPv4 subnet cidr4 (gateway
// its first address, which Neutron picks) and an IPv6 subnet cidr6.
func createDualStack(ctx context.Context, t *testing.T, ns, name, cidr4, cidr6 string) {
	t.Helper()
	if _, err := networkClient(t).SamplecrdV2().Networks(ns).Create(ctx, &samplecrdv2.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: cidr4}, ipv6Subnet(cidr6)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the v2 Network %s: %v", name, err)
	}
}

// waitForReadyV2 waits until the Network, read as v2, is Ready=True for
// its current generation, and returns it.
func waitForReadyV2(ctx context.Context, t *testing.T, ns, name string, timeout time.Duration) *samplecrdv2.Network {
	t.Helper()
	var got *samplecrdv2.Network
	framework.Eventually(ctx, t, timeout, func(ctx context.Context) (bool, string, error) {
		n, err := networkClient(t).SamplecrdV2().Networks(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		got = n
		c := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady)
		if c == nil {
			return false, name + " has no Ready condition", nil
		}
		ok := c.Status == metav1.ConditionTrue && c.Reason == samplecrdv1.ReasonProvisioned && n.Status.ObservedGeneration == n.Generation
		return ok, fmt.Sprintf("%s Ready=%s/%s (%s), observedGeneration %d of %d", name, c.Status, c.Reason, c.Message, n.Status.ObservedGeneration, n.Generation), nil
	})
	return got
}

// subnetIDs are the Neutron IDs that n's status.subnets gives, in
// spec.subnets' order; the test fails unless status has one subnet per
// spec entry, each of its CIDR and with an ID.
func subnetIDs(t *testing.T, n *samplecrdv2.Network) []string {
	t.Helper()
	if len(n.Status.Subnets) != len(n.Spec.Subnets) {
		t.Fatalf("status.subnets %+v for %d spec.subnets", n.Status.Subnets, len(n.Spec.Subnets))
	}
	var ids []string
	for i, s := range n.Status.Subnets {
		if s.CIDR != n.Spec.Subnets[i].CIDR || s.ID == "" {
			t.Fatalf("status.subnets[%d] = %+v, want the subnet of %s with its ID", i, s, n.Spec.Subnets[i].CIDR)
		}
		ids = append(ids, s.ID)
	}
	return ids
}

// wantOneNetworkOf fails the test unless the controller's Neutron
// networks are exactly the network id, holding exactly the subnets
// cidrs (by CIDR), and returns its subnets' IDs by CIDR.
func wantOneNetworkOf(ctx context.Context, t *testing.T, c *controller, id string, cidrs ...string) map[string]string {
	t.Helper()
	nets, subs := c.neutronNetworks(ctx, t)
	if len(nets) != 1 || nets[0].ID != id {
		t.Fatalf("Neutron networks of the cluster %v, want only %s", nets, id)
	}
	byCIDR := map[string]string{}
	for _, s := range subs {
		if s.NetworkID != id {
			t.Errorf("subnet %s (%s) on network %s, want %s", s.ID, s.CIDR, s.NetworkID, id)
		}
		byCIDR[s.CIDR] = s.ID
	}
	var got []string
	for cidr := range byCIDR {
		got = append(got, cidr)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(cidrs))
	if len(subs) != len(cidrs) || !slices.Equal(got, want) {
		t.Fatalf("network %s holds %d subnets of %v, want one each of %v", id, len(subs), got, want)
	}
	return byCIDR
}

// ovnSwitches are the names of OVN's logical switches for the Neutron
// network id (one per network, named neutron-ID).
func ovnSwitches(ctx context.Context, id string) ([]string, error) {
	out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Switch", "name=neutron-"+id)
	return strings.Fields(out), err
}

// TestADualStackNetworkIsOneNeutronNetwork: a v2 Network with an IPv4
// and an IPv6 subnet becomes Ready with one Neutron network holding both
// subnets, the ones its status.subnets names; OVN has one logical switch
// for that network, and DHCP options for each subnet.
func TestADualStackNetworkIsOneNeutronNetwork(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)

	const cidr4, cidr6 = "10.86.0.0/24", "fd00:86::/64"
	createDualStack(ctx, t, ns, "dual", cidr4, cidr6)
	n := waitForReadyV2(ctx, t, ns, "dual", time.Minute)
	ids := subnetIDs(t, n)

	byCIDR := wantOneNetworkOf(ctx, t, c, n.Status.NetworkID, cidr4, cidr6)
	if byCIDR[cidr4] != ids[0] || byCIDR[cidr6] != ids[1] {
		t.Errorf("Neutron's subnets %v, status.subnets' IDs %v", byCIDR, ids)
	}
	for i, want := range []gophercloud.IPVersion{gophercloud.IPv4, gophercloud.IPv6} {
		s, err := subnets.Get(ctx, stack.Neutron.Client, ids[i]).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if s.IPVersion != int(want) {
			t.Errorf("subnet %s of %s is IPv%d, want IPv%d", s.ID, s.CIDR, s.IPVersion, want)
		}
	}
	if s, err := subnets.Get(ctx, stack.Neutron.Client, ids[1]).Extract(); err == nil &&
		(s.IPv6AddressMode != string(samplecrdv2.IPv6ModeDHCPv6Stateless) || s.IPv6RAMode != string(samplecrdv2.IPv6ModeDHCPv6Stateless)) {
		t.Errorf("IPv6 subnet's modes %q/%q, want %s", s.IPv6AddressMode, s.IPv6RAMode, samplecrdv2.IPv6ModeDHCPv6Stateless)
	}

	// OVN agrees: one logical switch for the network, and each subnet's
	// DHCP options name that subnet.
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		switches, err := ovnSwitches(ctx, n.Status.NetworkID)
		return len(switches) == 1, fmt.Sprintf("OVN logical switches for network %s: %v", n.Status.NetworkID, switches), err
	})
	for i, cidr := range []string{cidr4, cidr6} {
		framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
			out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=external_ids", "find", "DHCP_Options", fmt.Sprintf("cidr=%q", cidr))
			return strings.Contains(out, ids[i]), fmt.Sprintf("OVN DHCP_Options of %s: %q, want subnet %s", cidr, out, ids[i]), err
		})
	}
}

// TestAnIPv6SubnetAddedThroughV2CreatesOnlyIt: a Ready Network made
// through v1 gains an IPv6 subnet through v2: the controller sends
// Neutron one POST (the subnet's) and no DELETE, the network and the IPv4
// subnet keep their IDs, and v1 still reads the IPv4 subnet's ID.
func TestAnIPv6SubnetAddedThroughV2CreatesOnlyIt(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)

	const cidr4, cidr6 = "10.87.0.0/24", "fd00:87::/64"
	createNetwork(ctx, t, ns, "grows", cidr4, "10.87.0.1")
	before := waitForReady(ctx, t, ns, "grows", time.Minute)
	requests := func(method string) float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": method})
	}
	posts, deletes := requests("POST"), requests("DELETE")

	v2Networks := networkClient(t).SamplecrdV2().Networks(ns)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := v2Networks.Get(ctx, "grows", metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Subnets = append(n.Spec.Subnets, ipv6Subnet(cidr6))
		_, err = v2Networks.Update(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("adding the IPv6 subnet through v2: %v", err)
	}
	n := waitForReadyV2(ctx, t, ns, "grows", time.Minute)
	ids := subnetIDs(t, n)

	if got := requests("POST") - posts; got != 1 {
		t.Errorf("%.0f Neutron POST requests for the added subnet, want 1 (its own)", got)
	}
	if got := requests("DELETE") - deletes; got != 0 {
		t.Errorf("%.0f Neutron DELETE requests for an added subnet, want none", got)
	}
	if n.Status.NetworkID != before.Status.NetworkID || ids[0] != before.Status.SubnetID {
		t.Errorf("network %s and IPv4 subnet %s after the add, want %s and %s kept",
			n.Status.NetworkID, ids[0], before.Status.NetworkID, before.Status.SubnetID)
	}
	byCIDR := wantOneNetworkOf(ctx, t, c, before.Status.NetworkID, cidr4, cidr6)
	if byCIDR[cidr4] != before.Status.SubnetID || byCIDR[cidr6] != ids[1] {
		t.Errorf("Neutron's subnets %v, want %s's %s kept and %s's %s", byCIDR, cidr4, before.Status.SubnetID, cidr6, ids[1])
	}

	// v1 reads the first subnet at the top, as before, and the IPv6 one in
	// the conversion's annotation.
	asV1 := waitForReady(ctx, t, ns, "grows", time.Minute)
	if asV1.Status.SubnetID != before.Status.SubnetID || asV1.Spec.CIDR != cidr4 || !strings.Contains(asV1.Annotations[samplecrdv1.SubnetsAnnotation], cidr6) {
		t.Errorf("read through v1: subnet %s, cidr %s, annotations %v", asV1.Status.SubnetID, asV1.Spec.CIDR, asV1.Annotations)
	}
}
