package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestMaxNetworksCapsANamespace (issue 40, finding 11b): a TenantPolicy
// caps a namespace at two Networks. The two oldest are made; the third
// is refused (NotAllowed, naming the cap) with nothing in Neutron and no
// finalizer; once the first is deleted, the third is made at once (the
// deletion queues it again, long before the few minutes after which a
// refusal is retried by itself).
func TestMaxNetworksCapsANamespace(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)
	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{MaxNetworks: ptr.To[int32](2)})

	createNetwork(ctx, t, ns, "a", "10.178.0.0/24", "10.178.0.1")
	createNetwork(ctx, t, ns, "b", "10.178.1.0/24", "10.178.1.1")
	waitForReady(ctx, t, ns, "a", time.Minute)
	waitForReady(ctx, t, ns, "b", time.Minute)
	createNetwork(ctx, t, ns, "c", "10.178.2.0/24", "10.178.2.1")
	refused := waitForCondition(ctx, t, ns, "c", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNotAllowed)
	if msg := readyCondition(refused).Message; !strings.Contains(msg, "maxNetworks: 2") {
		t.Errorf("the refusal %q does not name the cap", msg)
	}
	if len(refused.Finalizers) != 0 || refused.Status.NetworkID != "" {
		t.Errorf("the refused Network has finalizers %v and network %q: it was taken on", refused.Finalizers, refused.Status.NetworkID)
	}
	if nets, _ := c.neutronNetworks(ctx, t); len(nets) != 2 {
		t.Errorf("Neutron holds %d networks of the namespace, want the 2 of the cap", len(nets))
	}

	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "a", time.Minute)
	waitForReady(ctx, t, ns, "c", 30*time.Second)
}
