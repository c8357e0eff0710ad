package e2enode

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/test/framework"
)

const (
	controllerNamespace = "network-controller-system"
	controllerSelector  = "app.kubernetes.io/name=network-controller"
	conversionSelector  = "app.kubernetes.io/name=network-controller-conversion"
	injectorNamespace   = "envoy-injector"
	injectorSelector    = "app.kubernetes.io/name=envoy-injector"
)

func kubeClient(t *testing.T) kubernetes.Interface { return stack.ControlPlane.KubeClient(t) }

func networkClient(t *testing.T) clientset.Interface { return stack.ControlPlane.NetworkClient(t) }

// newNamespace creates a namespace for the test, with labels.
func newNamespace(ctx context.Context, t *testing.T, labels map[string]string) string {
	t.Helper()
	return framework.NewNamespace(ctx, t, kubeClient(t), labels)
}

func kubectl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", stack.ControlPlane.AdminKubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// createNetworks creates count Networks named prefix-i in 10.<octet>.i.0/24
// and deletes them (waiting until they are gone) when the test ends.
func createNetworks(ctx context.Context, t *testing.T, ns, prefix string, octet, count int) {
	t.Helper()
	client := networkClient(t).SamplecrdV1().Networks(ns)
	for i := range count {
		n := &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)},
			Spec:       samplecrdv1.NetworkSpec{CIDR: fmt.Sprintf("10.%d.%d.0/24", octet, i), Gateway: fmt.Sprintf("10.%d.%d.1", octet, i)},
		}
		if _, err := client.Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// In v2, the stored version, which needs no conversion webhook:
		// TestHelmUninstallKeepsNetworks has removed it by now.
		client := networkClient(t).SamplecrdV2().Networks(ns)
		if err := client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Error(err)
			return
		}
		framework.Eventually(ctx, t, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
			list, err := client.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return len(list.Items) == 0, fmt.Sprintf("%d Networks left", len(list.Items)), nil
		})
	})
}

// waitAllReady waits until every Network of ns is Ready for its generation.
func waitAllReady(ctx context.Context, t *testing.T, ns string, want int, timeout time.Duration) []samplecrdv1.Network {
	t.Helper()
	var items []samplecrdv1.Network
	framework.Eventually(ctx, t, timeout, func(ctx context.Context) (bool, string, error) {
		list, err := networkClient(t).SamplecrdV1().Networks(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		items = list.Items
		ready := 0
		for _, n := range list.Items {
			if meta.IsStatusConditionTrue(n.Status.Conditions, samplecrdv1.ConditionReady) && n.Status.ObservedGeneration == n.Generation {
				ready++
			}
		}
		return ready == want && len(list.Items) == want, fmt.Sprintf("%d of %d Networks Ready", ready, want), nil
	})
	return items
}

// neutronOf lists the Neutron networks the deployed controller marked for
// Networks of ns, and their subnets.
func neutronOf(ctx context.Context, t *testing.T, ns string) ([]networks.Network, []subnets.Subnet, error) {
	t.Helper()
	// artifacts/deploy sets no --cluster-name: the mark is the cluster's own.
	mark, err := neutron.NewMark("", stack.ControlPlane.ClusterUID)
	if err != nil {
		return nil, nil, err
	}
	page, err := networks.List(stack.Neutron.Client, networks.ListOpts{Description: mark.Description()}).AllPages(ctx)
	if err != nil {
		return nil, nil, err
	}
	all, err := networks.ExtractNetworks(page)
	if err != nil {
		return nil, nil, err
	}
	var nets []networks.Network
	var subs []subnets.Subnet
	for _, n := range all {
		if !strings.HasPrefix(n.Name, ns+"/") {
			continue
		}
		nets = append(nets, n)
		page, err := subnets.List(stack.Neutron.Client, subnets.ListOpts{NetworkID: n.ID}).AllPages(ctx)
		if err != nil {
			return nil, nil, err
		}
		s, err := subnets.ExtractSubnets(page)
		if err != nil {
			return nil, nil, err
		}
		subs = append(subs, s...)
	}
	return nets, subs, nil
}

// waitExactlyOneEach waits until Neutron holds exactly one network and one
// subnet per Network of ns, the ones its status names.
func waitExactlyOneEach(ctx context.Context, t *testing.T, ns string, timeout time.Duration) {
	t.Helper()
	seen := "Neutron not read yet"
	framework.Eventually(ctx, t, timeout, func(ctx context.Context) (bool, string, error) {
		list, err := networkClient(t).SamplecrdV1().Networks(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		nets, subs, err := neutronOf(ctx, t, ns)
		if err != nil {
			// A read cut by the deadline says nothing: report what the
			// last one saw.
			return false, seen + "; then reading Neutron: " + err.Error(), nil
		}
		ok, msg := framework.OnePerNetwork(list.Items, nets, subs)
		seen = msg
		return ok, msg, nil
	})
}

// pods returns the Pods of a selector, failing the test on error.
func pods(ctx context.Context, t *testing.T, ns, selector string) []corev1.Pod {
	t.Helper()
	list, err := kubeClient(t).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitPodsReady waits until want Pods of the selector run, all Ready (or,
// with ready=false, all running and none Ready), none being deleted.
func waitPodsReady(ctx context.Context, t *testing.T, ns, selector string, want int, ready bool, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var got []corev1.Pod
	framework.Eventually(ctx, t, timeout, func(ctx context.Context) (bool, string, error) {
		got = nil
		matching := 0
		for _, p := range pods(ctx, t, ns, selector) {
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			got = append(got, p)
			if podReady(p) == ready {
				matching++
			}
		}
		return len(got) == want && matching == want, fmt.Sprintf("%d running Pods, %d of them with Ready=%v; want %d", len(got), matching, ready, want), nil
	})
	return got
}

// leaseHolder returns the holder of the controller's Lease.
func leaseHolder(ctx context.Context, t *testing.T) string {
	t.Helper()
	lease, err := kubeClient(t).CoordinationV1().Leases(controllerNamespace).Get(ctx, "network-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}
