package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestNetworkLifecycle follows one Network from create to delete and checks
// each step where a user would: status, Neutron, and OVN.
func TestNetworkLifecycle(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)

	createNetwork(ctx, t, ns, "example-network", "192.168.0.0/16", "192.168.0.1")
	n := waitForReady(ctx, t, ns, "example-network", time.Minute)
	if n.Status.NetworkID == "" || n.Status.SubnetID == "" {
		t.Fatalf("Ready without Neutron IDs: %+v", n.Status)
	}
	if !strings.Contains(strings.Join(n.Finalizers, ","), samplecrdv1.NetworkFinalizer) {
		t.Errorf("finalizers = %v, want %s", n.Finalizers, samplecrdv1.NetworkFinalizer)
	}
	subnet, err := subnets.Get(ctx, stack.Neutron.Client, n.Status.SubnetID).Extract()
	if err != nil {
		t.Fatalf("the subnet in status is not in Neutron: %v", err)
	}
	if subnet.NetworkID != n.Status.NetworkID || subnet.CIDR != "192.168.0.0/16" || subnet.GatewayIP != "192.168.0.1" {
		t.Errorf("Neutron subnet: network %s cidr %s gateway %s", subnet.NetworkID, subnet.CIDR, subnet.GatewayIP)
	}
	if owner, ok := c.mark(t).OwnerOf(subnet.Name, subnet.Description); !ok || owner.UID != n.UID || owner.Key() != ns+"/example-network" {
		t.Errorf("subnet %q (%q) does not name its Network %s/example-network (uid %s)", subnet.Name, subnet.Description, ns, n.UID)
	}
	switchName := "neutron-" + n.Status.NetworkID
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Switch", "name="+switchName)
		return strings.TrimSpace(out) == switchName, "OVN logical switch " + switchName + ": " + out, err
	})
	dhcpRouter := func(want string) func(ctx context.Context) (bool, string, error) {
		return func(ctx context.Context) (bool, string, error) {
			out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=options", "find", "DHCP_Options", `cidr="192.168.0.0/16"`)
			return strings.Contains(out, "router="+want), "OVN DHCP_Options of 192.168.0.0/16: " + out, err
		}
	}
	framework.Eventually(ctx, t, 30*time.Second, dhcpRouter("192.168.0.1"))

	// The gateway may change; Neutron and OVN follow.
	patch := []byte(`{"spec":{"gateway":"192.168.0.254"}}`)
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Patch(ctx, "example-network", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	n = waitForReady(ctx, t, ns, "example-network", time.Minute)
	if n.Status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d after the update, want 2", n.Status.ObservedGeneration)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		s, err := subnets.Get(ctx, stack.Neutron.Client, n.Status.SubnetID).Extract()
		if err != nil {
			return false, "", err
		}
		return s.GatewayIP == "192.168.0.254", "Neutron gateway " + s.GatewayIP, nil
	})
	framework.Eventually(ctx, t, 30*time.Second, dhcpRouter("192.168.0.254"))

	// Delete: Neutron first, then the object.
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "example-network", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "example-network", time.Minute)
	if _, err := networks.Get(ctx, stack.Neutron.Client, n.Status.NetworkID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("the Neutron network outlived its Network: %v", err)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Switch", "name="+switchName)
		return strings.TrimSpace(out) == "", "OVN still has " + out, err
	})
	if nets, _ := c.neutronNetworks(ctx, t); len(nets) != 0 {
		t.Errorf("Neutron networks left for the cluster: %v", nets)
	}
}

// TestNeutronOutage stops neutron-server under a running controller that
// reaches it through Keystone: a new Network reports NeutronUnavailable, a
// deleted one waits, and both finish by themselves once neutron-server is
// back.
func TestNeutronOutage(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	throughKeystone(t, ns, framework.PasswordCloud)
	cleanupNetworks(t, ns)

	createNetwork(ctx, t, ns, "before", "10.61.0.0/24", "10.61.0.1")
	before := waitForReady(ctx, t, ns, "before", time.Minute)

	startNeutronServer := stopNeutronServer(t)

	createNetwork(ctx, t, ns, "during", "10.62.0.0/24", "10.62.0.1")
	waitForCondition(ctx, t, ns, "during", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNeutronUnavailable)

	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting := waitForCondition(ctx, t, ns, "before", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonDeleting)
	if deleting.DeletionTimestamp == nil {
		t.Fatal("not being deleted")
	}

	if err := startNeutronServer(ctx); err != nil {
		t.Fatalf("restarting neutron-server: %v", err)
	}
	waitForReady(ctx, t, ns, "during", 2*time.Minute)
	waitForGone(ctx, t, ns, "before", 2*time.Minute)
	if _, err := networks.Get(ctx, stack.Neutron.Client, before.Status.NetworkID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("the deleted Network's Neutron network survived the outage: %v", err)
	}
}

// TestFiftyNetworksAtOnce creates 50 Networks in one go; all become Ready.
func TestFiftyNetworksAtOnce(t *testing.T) {
	ctx := framework.TestContext(t, 5*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)

	const count = 50
	start := time.Now()
	for i := range count {
		createNetwork(ctx, t, ns, fmt.Sprintf("bulk-%02d", i), fmt.Sprintf("10.%d.%d.0/24", 150+i/200, i%200), fmt.Sprintf("10.%d.%d.1", 150+i/200, i%200))
	}
	framework.Eventually(ctx, t, 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		list, err := networkClient(t).SamplecrdV1().Networks(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		ready := 0
		for i := range list.Items {
			if c := readyCondition(&list.Items[i]); c != nil && c.Status == metav1.ConditionTrue {
				ready++
			}
		}
		return ready == count, fmt.Sprintf("%d of %d Ready", ready, count), nil
	})
	t.Logf("%d Networks Ready in %s", count, time.Since(start).Round(time.Millisecond))
	if nets, subs := c.neutronNetworks(ctx, t); len(nets) != count || len(subs) != count {
		t.Errorf("%d networks and %d subnets in Neutron for %d Networks", len(nets), len(subs), count)
	}
}

// TestResyncOfAnInSyncClusterWritesNothing lets several informer resyncs
// and Neutron lists pass over Ready Networks and counts the writes they
// cause: none to the API server, none to Neutron.
func TestResyncOfAnInSyncClusterWritesNothing(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns, "--resync-period=2s", "--neutron-resync-period=2s")
	cleanupNetworks(t, ns)

	// The seed's spec, and the richer ones: every option is compared at
	// each resync, and none may look changed when it is not.
	specs := []samplecrdv1.NetworkSpec{
		{CIDR: "10.70.0.0/24", Gateway: "10.70.0.1"},
		{CIDR: "10.70.1.0/24", DNSNameservers: []string{"10.70.1.53", "10.70.1.54"}, MTU: ptr.To[int32](1400),
			HostRoutes:      []samplecrdv1.HostRoute{{Destination: "10.71.0.0/16", NextHop: "10.70.1.254"}, {Destination: "10.72.0.0/16", NextHop: "10.70.1.254"}},
			AllocationPools: []samplecrdv1.AllocationPool{{Start: "10.70.1.100", End: "10.70.1.149"}, {Start: "10.70.1.10", End: "10.70.1.19"}}},
		{CIDR: "10.70.2.0/24", NoGateway: true, EnableDHCP: ptr.To(false)},
		{CIDR: "fd00:70::/64", Gateway: "fd00:70:0:0::1", IPv6AddressMode: samplecrdv1.IPv6ModeSLAAC, DNSNameservers: []string{"fd00:70::53"}},
		{CIDR: "10.70.4.0/24", Gateway: "10.70.4.254", DeletionPolicy: samplecrdv1.DeletionPolicyDelete},
	}
	count := len(specs)
	for i, spec := range specs {
		if _, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("steady-%d", i)}, Spec: spec}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range count {
		waitForReady(ctx, t, ns, fmt.Sprintf("steady-%d", i), time.Minute)
	}

	syncs := func() float64 { return c.metric(ctx, t, "network_controller_syncs_total", nil) }
	lists := func() float64 {
		return c.metric(ctx, t, "network_controller_neutron_refreshes_total", map[string]string{"result": "success"})
	}
	neutronWrites := func() float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "POST"}) +
			c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "PUT"}) +
			c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "DELETE"})
	}
	neutronReads := func() float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "GET"})
	}
	// The first list after Ready brings each subnet's address counts
	// (status.subnets[].usedIPs and freeIPs, where the credentials may
	// read them), one status write per Network: the steady state begins
	// once two lists have passed.
	lists0 := lists()
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		l := lists() - lists0
		return l >= 2, fmt.Sprintf("%.0f Neutron lists since Ready", l), nil
	})
	apiWrites, writes, reads, syncs0 := networkWrites(ctx, t), neutronWrites(), neutronReads(), syncs()
	lists0 = lists()
	// Wait for three informer resyncs of every Network and three Neutron lists.
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		s, l := syncs()-syncs0, lists()-lists0
		return s >= 3*float64(count) && l >= 3, fmt.Sprintf("%.0f syncs and %.0f Neutron lists since Ready", s, l), nil
	})
	if got := networkWrites(ctx, t) - apiWrites; got != 0 {
		t.Errorf("%d API server writes to networks during resyncs of an in-sync cluster, want 0", got)
	}
	if got := neutronWrites() - writes; got != 0 {
		t.Errorf("%.0f Neutron write requests during resyncs of an in-sync cluster, want 0", got)
	}
	// Four list requests (networks, subnets, routers, network IP
	// availabilities) per refresh, whatever the number of Networks: O(1),
	// not a request per Network.
	if gotReads, gotLists := neutronReads()-reads, lists()-lists0; gotReads > 4*(gotLists+1) {
		t.Errorf("%.0f Neutron reads for %.0f refreshes, want 4 per refresh", gotReads, gotLists)
	}
}

// networkWrites sums kube-apiserver's own count of write requests to the
// networks resource (its /metrics), whoever made them.
func networkWrites(ctx context.Context, t *testing.T) int {
	t.Helper()
	client, err := rest.HTTPClientFor(stack.ControlPlane.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := httpRequest(ctx, stack.ControlPlane.AdminConfig.Host+"/metrics")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	total := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="networks"`) {
			continue
		}
		write := false
		for _, verb := range []string{"APPLY", "PATCH", "UPDATE", "POST", "DELETE", "DELETECOLLECTION"} {
			if strings.Contains(line, `verb="`+verb+`"`) {
				write = true
			}
		}
		if !write {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		total += int(v)
	}
	return total
}

// TestFrozenNeutronFailsFast freezes the neutron-server that the
// controller reaches through Keystone (SIGSTOP: connections are accepted
// and never answered, as with a hung server) right after Networks are
// deleted, and creates more during the freeze. Only the requests sent
// before three in a row went unanswered wait out --neutron-timeout: the
// breaker then opens, every Network that needs Neutron says so at once,
// and all finish by themselves after the thaw.
func TestFrozenNeutronFailsFast(t *testing.T) {
	const workers, before, during = 2, 3, 10
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	c := throughKeystone(t, ns, framework.PasswordCloud, "--neutron-timeout=3s", fmt.Sprintf("--workers=%d", workers))
	cleanupNetworks(t, ns)
	for i := range before {
		createNetwork(ctx, t, ns, fmt.Sprintf("before-%d", i), fmt.Sprintf("10.63.%d.0/24", i), fmt.Sprintf("10.63.%d.1", i))
	}
	for i := range before {
		waitForReady(ctx, t, ns, fmt.Sprintf("before-%d", i), time.Minute)
	}
	unansweredWrites := func() float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "POST", "code": "<error>"}) +
			c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "DELETE", "code": "<error>"})
	}

	thaw := freezeNeutronServer(t)
	for i := range before {
		if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, fmt.Sprintf("before-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range during {
		createNetwork(ctx, t, ns, fmt.Sprintf("during-%d", i), fmt.Sprintf("10.64.%d.0/24", i), fmt.Sprintf("10.64.%d.1", i))
	}
	for i := range during {
		waitForCondition(ctx, t, ns, fmt.Sprintf("during-%d", i), 30*time.Second, metav1.ConditionFalse, samplecrdv1.ReasonNeutronUnavailable)
	}
	for i := range before {
		waitForCondition(ctx, t, ns, fmt.Sprintf("before-%d", i), 30*time.Second, metav1.ConditionFalse, samplecrdv1.ReasonDeleting)
	}
	if got := c.metric(ctx, t, "network_controller_neutron_breaker_open", nil); got != 1 {
		t.Errorf("breaker open = %.0f during the freeze, want 1", got)
	}
	// Without the breaker, each of the 13 Networks would send a write and
	// wait the timeout out; with it, only those sent until breakerFailures
	// in a row had gone unanswered: at most one round of every worker past
	// breakerFailures-1 of them.
	const breakerFailures = 3 // the inventory's default
	if got := unansweredWrites(); got > breakerFailures+workers-1 {
		t.Errorf("%.0f writes went unanswered during the freeze, want at most %d", got, breakerFailures+workers-1)
	}

	thaw()
	for i := range during {
		waitForReady(ctx, t, ns, fmt.Sprintf("during-%d", i), time.Minute)
	}
	for i := range before {
		waitForGone(ctx, t, ns, fmt.Sprintf("before-%d", i), time.Minute)
	}
	waitForExactlyOnePerNetwork(ctx, t, c, ns, time.Minute)
	if got := c.metric(ctx, t, "network_controller_neutron_breaker_open", nil); got != 0 {
		t.Errorf("breaker open = %.0f after the thaw, want 0", got)
	}
}

// TestOneFailedWriteHoldsBackOnlyItsNetwork: a trickle of 5xx answers
// must not stop every Network's writes. Neutron's load balancer refuses
// one network create with a 502; Neutron may or may not have done it, so
// that Network waits for a list to show what happened (two
// --neutron-timeouts later), while a Network created after it is made at
// once and the breaker stays closed.
func TestOneFailedWriteHoldsBackOnlyItsNetwork(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	proxy := faultProxy(t)
	c := startController(t, ns, "--neutron-endpoint="+proxy.URL, "--neutron-timeout=10s", "--max-retry-delay=1s")
	cleanupNetworks(t, ns)

	proxy.Refuse(http.MethodPost, "/v2.0/networks", 1, http.StatusBadGateway, "")
	createNetwork(ctx, t, ns, "refused", "10.66.0.0/24", "10.66.0.1")
	waitForCondition(ctx, t, ns, "refused", 30*time.Second, metav1.ConditionFalse, samplecrdv1.ReasonNeutronUnavailable)
	createNetwork(ctx, t, ns, "after", "10.66.1.0/24", "10.66.1.1")
	// Well within the 20 s until the list that releases "refused".
	waitForReady(ctx, t, ns, "after", 10*time.Second)
	if got := c.metric(ctx, t, "network_controller_neutron_breaker_open", nil); got != 0 {
		t.Errorf("breaker open = %.0f after one refused write, want 0", got)
	}
	if n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "refused", metav1.GetOptions{}); err != nil || readyCondition(n).Status == metav1.ConditionTrue {
		t.Errorf("the refused Network is Ready (%v) before a list showed what its create did", err)
	}

	waitForReady(ctx, t, ns, "refused", time.Minute)
	waitForExactlyOnePerNetwork(ctx, t, c, ns, time.Minute)
}
