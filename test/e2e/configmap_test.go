package e2e

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// The object a Network owns (spec.writeConfigMapToRef): a ConfigMap of its
// namespace that consumers read without any right on Networks. Its deletion
// with the Network, by the API server's garbage collector, and a Pod that
// reads it with envFrom, are tested on the node (test/e2enode), where
// kube-controller-manager and a kubelet run.

// publishedBy is what network's status says the ConfigMap must hold.
func publishedBy(n *samplecrdv1.Network) map[string]string {
	want := map[string]string{
		samplecrdv1.ConfigMapKeyNetworkID: n.Status.NetworkID,
		samplecrdv1.ConfigMapKeySubnetID:  n.Status.SubnetID,
		samplecrdv1.ConfigMapKeyProjectID: n.Status.ProjectID,
		samplecrdv1.ConfigMapKeyCIDR:      n.Status.CIDR,
		samplecrdv1.ConfigMapKeyGateway:   n.Status.Gateway,
		samplecrdv1.ConfigMapKeyMTU:       strconv.Itoa(int(n.Status.MTU)),
	}
	if n.Status.Router != nil {
		want[samplecrdv1.ConfigMapKeyRouterID] = n.Status.Router.ID
	}
	return want
}

// waitForPublished waits until ConfigMap ns/name holds what Network
// ns/network's status says, and returns it.
func waitForPublished(ctx context.Context, t *testing.T, ns, network, name string) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, network, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		cm, err = kubeClient(t).CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		want := publishedBy(n)
		return maps.Equal(cm.Data, want), fmt.Sprintf("ConfigMap %s holds %v, want %v", name, cm.Data, want), nil
	})
	return cm
}

// publishInto sets spec.writeConfigMapToRef of Network ns/network.
func publishInto(ctx context.Context, t *testing.T, ns, network, configMap string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"writeConfigMapToRef":{"name":%q}}}`, configMap)
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Patch(ctx, network, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestANetworkPublishesIntoAConfigMapItOwns: the ConfigMap is made with
// what Neutron holds and the Network as its controller; edited by hand,
// it is repaired; renamed, the old one goes; a ConfigMap of the name that
// someone else made is refused with a Warning and never written.
func TestANetworkPublishesIntoAConfigMapItOwns(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	startController(t, ns)
	cleanupNetworks(t, ns)
	configMaps := kubeClient(t).CoreV1().ConfigMaps(ns)

	createNetwork(ctx, t, ns, "app", "10.90.0.0/24", "10.90.0.1")
	publishInto(ctx, t, ns, "app", "app-network")
	n := waitForReady(ctx, t, ns, "app", time.Minute)
	cm := waitForPublished(ctx, t, ns, "app", "app-network")
	ref := metav1.GetControllerOf(cm)
	if ref == nil || ref.UID != n.UID || ref.Kind != "Network" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("the ConfigMap's controller reference is %+v, want the Network %s, blocking its deletion", ref, n.UID)
	}

	t.Run("edited by hand, it is repaired", func(t *testing.T) {
		edited := cm.DeepCopy()
		edited.Data[samplecrdv1.ConfigMapKeyNetworkID] = "forged"
		edited.Data["EXTRA"] = "x"
		if _, err := configMaps.Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForPublished(ctx, t, ns, "app", "app-network")
	})

	t.Run("renamed, the old one is deleted", func(t *testing.T) {
		publishInto(ctx, t, ns, "app", "app-network-v2")
		waitForPublished(ctx, t, ns, "app", "app-network-v2")
		framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
			_, err := configMaps.Get(ctx, "app-network", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprintf("the old ConfigMap: %v", err), nil
		})
	})

	t.Run("someone else's of that name is refused and left as it is", func(t *testing.T) {
		theirs, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken"},
			Data: map[string]string{"owner": "another team"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		createNetwork(ctx, t, ns, "late", "10.91.0.0/24", "10.91.0.1")
		publishInto(ctx, t, ns, "late", "taken")
		waitForReady(ctx, t, ns, "late", time.Minute)
		framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
			return len(warningsFor(ctx, t, ns, "late", "ConfigMapNotControlled")) > 0, "no Warning ConfigMapNotControlled", nil
		})
		after, err := configMaps.Get(ctx, "taken", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != theirs.ResourceVersion || len(after.OwnerReferences) != 0 {
			t.Errorf("someone else's ConfigMap was written: resourceVersion %s → %s, owners %+v", theirs.ResourceVersion, after.ResourceVersion, after.OwnerReferences)
		}
	})
}
