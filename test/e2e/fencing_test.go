package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// partitionableKubeconfig is a kubeconfig for one replica through a
// proxy of its own to the API server, which the test can cut.
func partitionableKubeconfig(t *testing.T, ns string) (*framework.TCPProxy, string) {
	t.Helper()
	path := filepath.Join(stack.Dir, ns+"-partitionable.kubeconfig")
	proxy, err := framework.PartitionableKubeconfig(stack.ControlPlane.AdminConfig, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	return proxy, path
}

// TestAFrozenLeaderWritesNothingWhenItResumes is Jepsen's process pause.
// The leader retries a create that Neutron refuses (over quota) every
// second; it is frozen (SIGSTOP) past its lease and cut off from the API
// server, and meanwhile the standby takes over and makes the network. The
// old leader resumes with the retry due at once and its renewal hanging,
// so client-go still calls it the leader: only the fence keeps its create,
// built on a stale view of Neutron, from reaching Neutron as a duplicate.
func TestAFrozenLeaderWritesNothingWhenItResumes(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	fast := []string{"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s"}
	leading := func(c *controller) bool { return c.metric(ctx, t, "leader_election_master_status", nil) == 1 }
	api, kubeconfig := partitionableKubeconfig(t, ns)
	neutronOfOld := faultProxy(t)
	old := startController(t, ns, append(fast, "--kubeconfig="+kubeconfig, "--neutron-endpoint="+neutronOfOld.URL, "--max-retry-delay=1s")...)
	old.waitProbe(ctx, t, "/healthz")
	framework.Eventually(ctx, t, 30*time.Second, func(context.Context) (bool, string, error) {
		return leading(old), "the first controller is not leading yet", nil
	})
	standby := startController(t, ns, fast...)
	cleanupNetworks(t, ns)
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		code, body := get(ctx, standby.probeURL+"/readyz")
		return code == http.StatusOK, fmt.Sprintf("the standby is not ready: /readyz %d: %s", code, body), nil
	})

	neutronOfOld.RefuseOverQuota(http.MethodPost, "/v2.0/networks", 1<<30)
	createNetwork(ctx, t, ns, "x", "10.84.0.0/24", "10.84.0.1")
	waitForCondition(ctx, t, ns, "x", 30*time.Second, metav1.ConditionFalse, samplecrdv1.ReasonNeutronQuotaExceeded)

	if err := old.Freeze(); err != nil {
		t.Fatal(err)
	}
	thaw := func() { _ = old.Thaw() }
	t.Cleanup(thaw)
	api.Partition()
	t.Cleanup(api.Heal)
	neutronOfOld.ClearRefusals()
	framework.Eventually(ctx, t, 30*time.Second, func(context.Context) (bool, string, error) {
		return leading(standby), "the standby has not taken over", nil
	})
	waitForReady(ctx, t, ns, "x", 30*time.Second)

	posts := neutronOfOld.Arrivals(http.MethodPost, "/v2.0/networks")
	thaw()
	framework.Eventually(ctx, t, 20*time.Second, func(ctx context.Context) (bool, string, error) {
		if sent := neutronOfOld.Arrivals(http.MethodPost, "/v2.0/networks") - posts; sent > 0 {
			t.Fatalf("the old leader sent %d network creates after it lost the Lease", sent)
		}
		fenced := old.metric(ctx, t, "network_controller_writes_fenced_total", map[string]string{"to": "neutron"})
		return fenced > 0, "the old leader has not tried its retry yet", nil
	})

	api.Heal()
	framework.Eventually(ctx, t, 30*time.Second, func(context.Context) (bool, string, error) {
		return old.Exited(), "the old leader has not noticed it lost the Lease", nil
	})
	waitForExactlyOnePerNetwork(ctx, t, standby, ns, time.Minute)
}
