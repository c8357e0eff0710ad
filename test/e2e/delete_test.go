package e2e

import (
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samplecrd/network-controller/test/framework"
)

// TestADeleteIsOneNeutronRequest deletes a Ready Network: the controller
// sends Neutron one DELETE, of the network (neutron-server deletes its
// subnet and its DHCP port with it), and Neutron holds neither afterwards.
func TestADeleteIsOneNeutronRequest(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)

	createNetwork(ctx, t, ns, "short-lived", "10.72.0.0/24", "10.72.0.1")
	n := waitForReady(ctx, t, ns, "short-lived", time.Minute)
	deletes := func() float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "DELETE"})
	}
	before := deletes()
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "short-lived", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "short-lived", time.Minute)
	if got := deletes() - before; got != 1 {
		t.Errorf("%.0f Neutron DELETE requests for the Network's delete, want 1 (the network's)", got)
	}

	// A network's delete takes its subnets: both answer 404 now.
	if _, err := networks.Get(ctx, stack.Neutron.Client, n.Status.NetworkID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("network %s: %v, want Neutron's 404", n.Status.NetworkID, err)
	}
	if _, err := subnets.Get(ctx, stack.Neutron.Client, n.Status.SubnetID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("subnet %s: %v, want Neutron's 404", n.Status.SubnetID, err)
	}
}
