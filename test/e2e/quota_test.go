package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samplecrd/network-controller/test/framework"
)

// TestTheProjectsQuotaIsExported (issue 54): in a project whose network
// quota is 5, with 4 Networks, the controller's metrics say 4 of 5
// networks used, read with its lists; a fifth makes it 5 of 5 (which
// NetworkControllerNeutronQuotaNearlyFull's promtool test fires on);
// deleting one brings it back to 4.
func TestTheProjectsQuotaIsExported(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	tenant := newTenant(ctx, t, ns, "")
	setNetworkQuota(ctx, t, tenant.ProjectID, 5)
	// Lists (and so quota reads) every 10 s, and a second after writes
	// pause: the default's 5 minutes, and 30 s between such lists, would
	// outlast the test.
	c := asTenant(t, ns, tenant, "--max-retry-delay=2s", "--neutron-resync-period=10s")
	cleanupNetworks(t, ns)

	networks := map[string]string{"project_id": tenant.ProjectID, "resource": "networks"}
	quotaIs := func(wantUsed, wantLimit float64) {
		t.Helper()
		// Scraped with the test's context: the poll's own ends at its
		// deadline, and a scrape cut short would hide what was seen.
		framework.Eventually(ctx, t, 30*time.Second, func(context.Context) (bool, string, error) {
			used := c.metric(ctx, t, "network_controller_neutron_quota_used", networks)
			limit := c.metric(ctx, t, "network_controller_neutron_quota_limit", networks)
			return used == wantUsed && limit == wantLimit, fmt.Sprintf("networks quota %v used of %v, want %v of %v", used, limit, wantUsed, wantLimit), nil
		})
	}

	for i := range 4 {
		createNetwork(ctx, t, ns, fmt.Sprintf("q-%d", i), fmt.Sprintf("10.86.%d.0/24", i), fmt.Sprintf("10.86.%d.1", i))
	}
	for i := range 4 {
		waitForReady(ctx, t, ns, fmt.Sprintf("q-%d", i), time.Minute)
	}
	quotaIs(4, 5)

	createNetwork(ctx, t, ns, "q-4", "10.86.4.0/24", "10.86.4.1")
	waitForReady(ctx, t, ns, "q-4", time.Minute)
	quotaIs(5, 5)

	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "q-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "q-0", time.Minute)
	quotaIs(4, 5)
}
