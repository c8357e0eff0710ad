package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestTheProjectsQuotaIsExported (issue 54): in a project whose network
// quota is 5, with 4 Networks, the controller's metrics say 4 of 5
// networks used, read with its lists, and no Network says its project is
// nearly full; a fifth makes it 5 of 5 (which
// NetworkControllerNeutronQuotaNearlyFull's promtool test fires on), and
// every Network of the project says QuotaNearlyFull with the counts; a
// sixth is NeutronQuotaExceeded, as before; deleting it and one more
// brings the count back to 4 and clears the condition on every Network.
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
	nearlyFullSaidBy(ctx, t, ns, "", "q-0", "q-1", "q-2", "q-3")

	createNetwork(ctx, t, ns, "q-4", "10.86.4.0/24", "10.86.4.1")
	waitForReady(ctx, t, ns, "q-4", time.Minute)
	quotaIs(5, 5)
	nearlyFullSaidBy(ctx, t, ns, "networks 5 of 5", "q-0", "q-1", "q-2", "q-3", "q-4")

	// One more is refused by Neutron, as before, and says so too.
	createNetwork(ctx, t, ns, "q-5", "10.86.5.0/24", "10.86.5.1")
	waitForCondition(ctx, t, ns, "q-5", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNeutronQuotaExceeded)
	nearlyFullSaidBy(ctx, t, ns, "networks 5 of 5", "q-5")

	// The refused one goes first: left, it would take the room made.
	for _, name := range []string{"q-5", "q-0"} {
		if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForGone(ctx, t, ns, name, time.Minute)
	}
	quotaIs(4, 5)
	nearlyFullSaidBy(ctx, t, ns, "", "q-1", "q-2", "q-3", "q-4")
}

// nearlyFullSaidBy waits until each named Network of ns says
// QuotaNearlyFull True with want in its message, or, for want "", says no
// QuotaNearlyFull at all; Ready is not what it is about.
func nearlyFullSaidBy(ctx context.Context, t *testing.T, ns, want string, names ...string) {
	t.Helper()
	for _, name := range names {
		framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
			n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			got := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionQuotaNearlyFull)
			if want == "" {
				return got == nil, fmt.Sprintf("%s says %+v, want no QuotaNearlyFull", name, got), nil
			}
			return got != nil && got.Status == metav1.ConditionTrue && got.Reason == samplecrdv1.QuotaNearlyFullReason && strings.Contains(got.Message, want),
				fmt.Sprintf("%s says %+v, want QuotaNearlyFull True saying %q", name, got, want), nil
		})
	}
}
