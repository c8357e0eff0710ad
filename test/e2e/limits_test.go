package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// Neutron as a limited, shared service, reached as every user reaches it:
// through Keystone, in a project of the test's own (newTenant), so that
// its quota, its ports and its throttling are no other test's.

// setNetworkQuota sets the network quota of project.
func setNetworkQuota(ctx context.Context, t *testing.T, project string, limit int) {
	t.Helper()
	if _, err := quotas.Update(ctx, stack.Neutron.Client, project, quotas.UpdateOpts{Network: ptr.To(limit)}).Extract(); err != nil {
		t.Fatalf("setting the network quota of %s to %d: %v", project, limit, err)
	}
}

// TestQuotaExceededUntilRaised: in a project whose network quota is 5, the
// 6th Network is Ready=False NeutronQuotaExceeded with Neutron's words and
// a Warning Event; once the quota is raised it becomes Ready by itself,
// within the backoff cap.
func TestQuotaExceededUntilRaised(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	tenant := newTenant(ctx, t, ns, "")
	setNetworkQuota(ctx, t, tenant.ProjectID, 5)
	c := asTenant(t, ns, tenant, "--max-retry-delay=3s")
	cleanupNetworks(t, ns)

	// Five fill the quota. They are made before the sixth: Zed's quota
	// driver (DbQuotaNoLockDriver) takes no lock, so creates racing for the
	// last unit may all pass its check.
	for i := range 5 {
		createNetwork(ctx, t, ns, fmt.Sprintf("q-%d", i), fmt.Sprintf("10.84.%d.0/24", i), fmt.Sprintf("10.84.%d.1", i))
	}
	for i := range 5 {
		waitForReady(ctx, t, ns, fmt.Sprintf("q-%d", i), time.Minute)
	}
	const over = "q-5"
	createNetwork(ctx, t, ns, over, "10.84.5.0/24", "10.84.5.1")
	exceeded := waitForCondition(ctx, t, ns, over, time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNeutronQuotaExceeded)
	if msg := readyCondition(exceeded).Message; !strings.Contains(msg, "Quota exceeded for resources: ['network']") {
		t.Errorf("the message does not carry Neutron's words: %s", msg)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		events, err := kubeClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + over})
		if err != nil {
			return false, "", err
		}
		for _, e := range events.Items {
			if e.Type == "Warning" && e.Reason == samplecrdv1.ReasonNeutronQuotaExceeded {
				return true, "", nil
			}
		}
		return false, "no Warning NeutronQuotaExceeded Event for " + over, nil
	})

	raised := time.Now()
	setNetworkQuota(ctx, t, tenant.ProjectID, 10)
	waitForReady(ctx, t, ns, over, 30*time.Second)
	t.Logf("Ready %s after the quota was raised (--max-retry-delay=3s)", time.Since(raised).Round(time.Millisecond))
	if nets, _ := c.neutronNetworks(ctx, t); len(nets) != 6 {
		t.Errorf("%d networks in Neutron for 6 Networks", len(nets))
	}
}

// TestDeleteBlockedByAPort puts a port on a Network's subnet, as Nova does
// for a VM. Deleting the Network then holds the finalizer, says which port
// blocks it, and retries with capped backoff, not in a hot loop; once the
// port is gone the delete completes by itself.
func TestDeleteBlockedByAPort(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	tenant := newTenant(ctx, t, ns, "")
	c := asTenant(t, ns, tenant, "--max-retry-delay=2s")
	cleanupNetworks(t, ns)

	createNetwork(ctx, t, ns, "busy", "10.85.0.0/24", "10.85.0.1")
	n := waitForReady(ctx, t, ns, "busy", time.Minute)
	// Nova makes an instance's port in the instance's project.
	port, err := ports.Create(ctx, stack.Neutron.Client, ports.CreateOpts{
		NetworkID: n.Status.NetworkID, Name: "a-vm", DeviceOwner: "compute:nova", ProjectID: tenant.ProjectID,
		FixedIPs: []ports.IP{{SubnetID: n.Status.SubnetID}},
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ports.Delete(context.Background(), stack.Neutron.Client, port.ID).ExtractErr() })

	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "busy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	blocked := waitForCondition(ctx, t, ns, "busy", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonDeletionBlocked)
	msg := readyCondition(blocked).Message
	if !strings.Contains(msg, port.ID) || !strings.Contains(msg, "compute:nova") {
		t.Errorf("the message does not name the port %s (compute:nova): %s", port.ID, msg)
	}
	if blocked.DeletionTimestamp == nil || !strings.Contains(strings.Join(blocked.Finalizers, ","), samplecrdv1.NetworkFinalizer) {
		t.Errorf("not held by the finalizer while blocked: %v %v", blocked.DeletionTimestamp, blocked.Finalizers)
	}

	// No hot loop: over 8s of refusals, the capped backoff (2s) allows
	// about a dozen attempts; a hot loop would make hundreds.
	deletes := func() float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "DELETE"})
	}
	start, before := time.Now(), deletes()
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		return time.Since(start) >= 8*time.Second, "refusals continue", nil
	})
	if attempts := deletes() - before; attempts < 2 || attempts > 20 {
		t.Errorf("%.0f delete attempts in 8s while blocked, want a few (retried, with backoff capped at 2s)", attempts)
	}

	if err := ports.Delete(ctx, stack.Neutron.Client, port.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "busy", 30*time.Second)
	if _, err := networks.Get(ctx, stack.Neutron.Client, n.Status.NetworkID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("the Neutron network outlived its Network: %v", err)
	}
}

// TestThrottlingIsHonoured puts a fault proxy in front of the Keystone
// neutron-server, as the tenant's catalog entry for Neutron. It answers
// the network creates with 429 (Retry-After: 1) four times and the subnet
// creates with a load balancer's 503 (Retry-After: 1) twice, as a busy
// Neutron does. Every Network becomes Ready without a
// failed sync, each refusal is counted, and Neutron holds exactly one
// network and subnet per Network: a refused create was not carried out,
// and resending it made no duplicate.
func TestThrottlingIsHonoured(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	proxy := faultProxyTo(t, stack.Neutron.KeystoneEndpoint)
	proxy.Refuse(http.MethodPost, "/v2.0/networks", 4, http.StatusTooManyRequests, "1")
	proxy.Refuse(http.MethodPost, "/v2.0/subnets", 2, http.StatusServiceUnavailable, "1")
	c := asTenant(t, ns, newTenant(ctx, t, ns, proxy.URL), "--workers=3")
	cleanupNetworks(t, ns)

	for i := range 3 {
		createNetwork(ctx, t, ns, fmt.Sprintf("busy-%d", i), fmt.Sprintf("10.68.%d.0/24", i), fmt.Sprintf("10.68.%d.1", i))
	}
	for i := range 3 {
		waitForReady(ctx, t, ns, fmt.Sprintf("busy-%d", i), time.Minute)
	}
	waitForExactlyOnePerNetwork(ctx, t, c, ns, 30*time.Second)
	if got := c.metric(ctx, t, "network_controller_neutron_throttled_total", map[string]string{"code": "429"}); got != 4 {
		t.Errorf("throttled 429s = %.0f, want 4", got)
	}
	if got := c.metric(ctx, t, "network_controller_neutron_throttled_total", map[string]string{"code": "503"}); got != 2 {
		t.Errorf("throttled 503s = %.0f, want 2", got)
	}
	if got := c.metric(ctx, t, "network_controller_syncs_total", map[string]string{"result": "error"}); got != 0 {
		t.Errorf("%.0f syncs failed: throttling reached the work queue", got)
	}
}
