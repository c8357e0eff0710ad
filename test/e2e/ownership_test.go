package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/test/framework"
)

// The tests of ownership: what the controller creates is recognisable from
// the create request on, a lost answer leaves no duplicate behind, and
// nothing that does not carry this cluster's mark — or whose identity does
// not parse — is ever touched.

// faultProxy starts a FaultProxy in front of the noauth neutron-server for
// one test. It outlives the test's other cleanups, which delete through it.
func faultProxy(t *testing.T) *framework.FaultProxy {
	t.Helper()
	return faultProxyTo(t, stack.Neutron.Endpoint)
}

// faultProxyTo is faultProxy in front of target.
func faultProxyTo(t *testing.T, target string) *framework.FaultProxy {
	t.Helper()
	p, err := framework.StartFaultProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// waitForExactlyOnePerNetwork waits until Neutron holds, under the
// controller's mark, exactly one network and one subnet per Network of ns,
// and they are the ones status names.
func waitForExactlyOnePerNetwork(ctx context.Context, t *testing.T, c *controller, ns string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(ctx, t, timeout, func(ctx context.Context) (bool, string, error) {
		list, err := networkClient(t).SamplecrdV1().Networks(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		nets, subs := c.neutronNetworks(ctx, t)
		ok, msg := framework.OnePerNetwork(list.Items, nets, subs)
		return ok, msg, nil
	})
}

// TestLostCreateAnswersLeaveNoDuplicates loses the answers to one network
// create and one subnet create to the controller's own timeout, while
// Neutron carries both out. A lost answer holds back its own Network's
// writes, so no write is retried before a list that began afterwards
// shows what Neutron did: the late network and subnet are used, and
// nothing is made twice.
func TestLostCreateAnswersLeaveNoDuplicates(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	proxy := faultProxy(t)
	lostNetwork := proxy.HoldUntilClientGone(http.MethodPost, "/v2.0/networks", 1)
	lostSubnet := proxy.HoldUntilClientGone(http.MethodPost, "/v2.0/subnets", 2)
	// A worker per Network, so that a retry would come at once if nothing
	// held it back.
	c := startController(t, ns, "--neutron-endpoint="+proxy.URL, "--neutron-timeout=2s", "--workers=3")
	cleanupNetworks(t, ns)

	const count = 3
	for i := range count {
		createNetwork(ctx, t, ns, fmt.Sprintf("lost-%d", i), fmt.Sprintf("10.81.%d.0/24", i), fmt.Sprintf("10.81.%d.1", i))
	}
	for _, h := range []*framework.Hold{lostNetwork, lostSubnet} {
		select {
		case <-h.Completed():
		case <-ctx.Done():
			t.Fatal("a held create never reached Neutron")
		}
	}
	for i := range count {
		waitForReady(ctx, t, ns, fmt.Sprintf("lost-%d", i), time.Minute)
	}
	waitForExactlyOnePerNetwork(ctx, t, c, ns, time.Minute)
	if got := c.metric(ctx, t, "network_controller_duplicate_networks_deleted_total", nil); got != 0 {
		t.Errorf("duplicate networks deleted = %.0f, want 0 (no create retried blind)", got)
	}
	if got := c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "POST"}); got != 2*count {
		t.Errorf("%.0f POSTs for %d Networks, want %d: the two lost creates were sent again", got, count, 2*count)
	}
}

// TestControllerKilledWithACreateInFlight kills the controller (SIGKILL)
// while Neutron holds its create request, restarts it, and only then lets
// Neutron carry the dead controller's request out. The successor made its
// own network meanwhile; the late one must go, and nothing else.
func TestControllerKilledWithACreateInFlight(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	proxy := faultProxy(t)
	held := proxy.HoldUntilReleased(http.MethodPost, "/v2.0/networks", 3)
	// One worker: the held create is the only request in flight when the
	// controller dies, so the successor has exactly one late create to find.
	c := startController(t, ns, "--neutron-endpoint="+proxy.URL, "--neutron-timeout=5s", "--neutron-resync-period=2s", "--workers=1")
	cleanupNetworks(t, ns)

	const count = 6
	for i := range count {
		createNetwork(ctx, t, ns, fmt.Sprintf("net-%d", i), fmt.Sprintf("10.82.%d.0/24", i), fmt.Sprintf("10.82.%d.1", i))
	}
	select {
	case <-held.Arrived():
	case <-ctx.Done():
		t.Fatal("the third network create never came")
	}
	c.Kill()
	c.start(t)
	for i := range count {
		waitForReady(ctx, t, ns, fmt.Sprintf("net-%d", i), 2*time.Minute)
	}
	held.Release()
	<-held.Completed()
	waitForExactlyOnePerNetwork(ctx, t, c, ns, time.Minute)
	if got := c.metric(ctx, t, "network_controller_duplicate_networks_deleted_total", nil); got != 1 {
		t.Errorf("duplicate networks deleted by the successor = %.0f, want 1", got)
	}
}

// TestForeignLookAlikesSurvive seeds, in the controller's Neutron project,
// what other tools, people and clusters leave there, under the names that
// once fooled the controller, and one real orphan of its own as a control:
// the orphan goes, everything else stays, through several lists.
func TestForeignLookAlikesSurvive(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	c := &controller{cluster: "e2e-" + ns, clusterUID: stack.ControlPlane.ClusterUID}
	other, err := neutron.NewMark("e2e-other-"+ns[len(ns)-8:], uuid.NewUUID())
	if err != nil {
		t.Fatal(err)
	}
	ours := c.mark(t)
	create := func(name, description string) string {
		t.Helper()
		n, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{Name: name, Description: description}).Extract()
		if err != nil {
			t.Fatalf("creating %q: %v", name, err)
		}
		t.Cleanup(func() { _ = networks.Delete(context.Background(), stack.Neutron.Client, n.ID).ExtractErr() })
		return n.ID
	}
	foreign := map[string]string{
		"Cluster API's naming, unmarked": create("k8s-clusterapi-cluster-default-foo", ""),
		"the old k8s-<uid> naming":       create("k8s-7d3c2a9e-0b1f-4c1e-9a55-2f0e1d9b8c77", ""),
		"another cluster's mark, a name that parses, no Network here": create(
			other.ResourceName(neutron.Owner{Namespace: ns, Name: "ghost", UID: uuid.NewUUID()}), other.Description()),
		"our mark, an identity that is not a UUID": create(ns+"/handmade/clusterapi-cluster-default-foo", ours.Description()),
	}
	orphan := create(ours.ResourceName(neutron.Owner{Namespace: ns, Name: "gone", UID: uuid.NewUUID()}), ours.Description())

	c = startController(t, ns, "--neutron-resync-period=1s")
	c.waitReady(ctx, t)
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		lists := c.metric(ctx, t, "network_controller_neutron_refreshes_total", map[string]string{"result": "success"})
		return lists >= 5, fmt.Sprintf("%.0f lists of Neutron", lists), nil
	})
	if _, err := networks.Get(ctx, stack.Neutron.Client, orphan).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("the control, an orphan of this cluster, was not collected: %v", err)
	}
	if got := c.metric(ctx, t, "network_controller_orphans_collected_total", map[string]string{"resource": "network"}); got != 1 {
		t.Errorf("orphans collected = %.0f, want 1", got)
	}
	for what, id := range foreign {
		if _, err := networks.Get(ctx, stack.Neutron.Client, id).Extract(); err != nil {
			t.Errorf("%s (%s): %v", what, id, err)
		}
	}
	if got := c.metric(ctx, t, "network_controller_neutron_unrecognised_resources", nil); got != 1 {
		t.Errorf("unrecognised resources = %.0f, want 1 (ours by mark, not by name)", got)
	}
}

// TestLongestNamesBecomeReadyAndAreDeleted: a Network with the longest
// valid name, in a namespace with the longest valid name, becomes Ready,
// its Neutron resources still name it, and it is deleted cleanly.
func TestLongestNamesBecomeReadyAndAreDeleted(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := "e2e-long-" + strings.Repeat("x", 63-len("e2e-long-")-8) + string(uuid.NewUUID())[:8]
	if _, err := kubeClient(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := startController(t, ns, "--cluster-name="+strings.Repeat("c", 63))
	cleanupNetworks(t, ns)
	name := strings.Repeat("n", 253)

	createNetwork(ctx, t, ns, name, "10.83.0.0/24", "10.83.0.1")
	n := waitForReady(ctx, t, ns, name, time.Minute)
	nets, subs := c.neutronNetworks(ctx, t)
	if len(nets) != 1 || len(subs) != 1 {
		t.Fatalf("%d networks and %d subnets", len(nets), len(subs))
	}
	for _, got := range []string{nets[0].Name, subs[0].Name} {
		suffix := "~/" + string(n.UID) + "/" + string(stack.ControlPlane.ClusterUID)
		if len(got) > neutron.MaxNameLength || !strings.HasPrefix(got, ns+"/nnnn") || !strings.HasSuffix(got, suffix) {
			t.Errorf("Neutron name %q (%d characters)", got, len(got))
		}
	}
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, name, time.Minute)
	if nets, subs := c.neutronNetworks(ctx, t); len(nets)+len(subs) != 0 {
		t.Errorf("left in Neutron: %d networks, %d subnets", len(nets), len(subs))
	}
}
