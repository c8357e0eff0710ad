package e2enode

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/test/framework"
)

// conversionPort is the port every replica serves the conversion webhook on
// (the chart's conversion.port, artifacts/deploy's --conversion-bind-address).
const conversionPort = 9443

// TestConversionWebhookAnswersFromEveryReplica: hack/deploy.sh (the chart
// and hack/conversion-certs.sh) points the CRD at the Service
// network-controller-conversion, whose Pods (the webhook's Deployment, apart
// from the controller's) each answer a ConversionReview sent to them. A
// frozen controller takes no conversion with it: with its leader frozen,
// every v1 read answers. A frozen webhook replica leaves the Service: its
// readiness fails within seconds, and then every v1 read answers again, from
// the other.
func TestConversionWebhookAnswersFromEveryReplica(t *testing.T) {
	ctx := framework.TestContext(t, 5*time.Minute)
	controllers := waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
	webhooks := waitPodsReady(ctx, t, controllerNamespace, conversionSelector, 2, true, 2*time.Minute)

	crds, err := apiextensionsclientset.NewForConfig(stack.ControlPlane.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, framework.NetworkCRD, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := crd.Spec.Conversion; c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil ||
		c.Webhook.ClientConfig.Service == nil || c.Webhook.ClientConfig.Service.Name != "network-controller-conversion" ||
		c.Webhook.ClientConfig.Service.Namespace != controllerNamespace || len(c.Webhook.ClientConfig.CABundle) == 0 {
		t.Fatalf("the CRD's conversion does not name the Service network-controller-conversion with a caBundle: %+v", crd.Spec.Conversion)
	}

	// Each replica by itself, through the API server's proxy to its Pod.
	for _, p := range webhooks {
		if err := convertAt(ctx, t, p.Name); err != nil {
			t.Errorf("webhook replica %s: %v", p.Name, err)
		}
	}

	// A Network stored as v2, which a v1 read converts.
	ns := newNamespace(ctx, t, nil)
	createNetworks(ctx, t, ns, "conv", 160, 1)
	waitAllReady(ctx, t, ns, 1, 2*time.Minute)

	// The controller's leader frozen: no v1 read waits for it.
	leader, _, _ := strings.Cut(leaseHolder(ctx, t), "_")
	var leaderPod *corev1.Pod
	for i := range controllers {
		if controllers[i].Name == leader {
			leaderPod = &controllers[i]
		}
	}
	if leaderPod == nil {
		t.Fatalf("the leader %q is not one of the Ready replicas", leader)
	}
	thawLeader := freeze(ctx, t, *leaderPod)
	if ok, failed, last := v1Reads(ctx, t, ns, 8); failed != 0 {
		t.Errorf("with the controller's leader frozen, %d of %d v1 reads failed (last: %s), want none: the webhook is not the controller's", failed, ok+failed, last)
	}
	thawLeader()

	// A webhook replica frozen: it leaves the Service's endpoints once
	// its readiness probe times out (2 s apart), and then every read is
	// answered by the other. A call the API server sent it meanwhile
	// waits for the request's deadline, so each read has a short one.
	frozen, other := webhooks[0], webhooks[1]
	frozenAt := time.Now()
	thawWebhook := freeze(ctx, t, frozen)
	framework.Eventually(ctx, t, 15*time.Second, func(ctx context.Context) (bool, string, error) {
		if ok, failed, last := v1Reads(ctx, t, ns, 8); failed != 0 {
			return false, fmt.Sprintf("%d of %d v1 reads failed with %s frozen (last: %s)", failed, ok+failed, frozen.Name, last), nil
		}
		return true, "", nil
	})
	t.Logf("every v1 read answered %s after the webhook replica %s froze", time.Since(frozenAt).Round(100*time.Millisecond), frozen.Name)
	if err := convertAt(ctx, t, other.Name); err != nil {
		t.Errorf("the other webhook replica %s with %s frozen: %v", other.Name, frozen.Name, err)
	}
	thawWebhook()
	// Thawed (or restarted), both answer again.
	waitPodsReady(ctx, t, controllerNamespace, conversionSelector, 2, true, 2*time.Minute)
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		for _, p := range webhooks {
			if err := convertAt(ctx, t, p.Name); err != nil {
				return false, fmt.Sprintf("replica %s: %v", p.Name, err), nil
			}
		}
		return true, "", nil
	})
}

// freeze stops the first process of a Pod's first container with SIGSTOP
// (the kernel delivers it to a PID namespace's init from outside), as a
// stuck node or a long pause would, and returns what thaws it (SIGCONT),
// which the test's cleanup also calls.
func freeze(ctx context.Context, t *testing.T, p corev1.Pod) (thaw func()) {
	t.Helper()
	if len(p.Status.ContainerStatuses) == 0 {
		t.Fatalf("%s has no container", p.Name)
	}
	pid, err := stack.Node.ContainerPID(ctx, p.Status.ContainerStatuses[0].ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("freezing %s (pid %d): %v", p.Name, pid, err)
	}
	var once sync.Once
	thaw = func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(thaw)
	return thaw
}

// v1Reads reads the Network conv-0 of ns through v1 n times, each within
// 3 s, and counts what answered right and what failed.
func v1Reads(ctx context.Context, t *testing.T, ns string, n int) (ok, failed int, last string) {
	t.Helper()
	for range n {
		out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig, "--request-timeout=3s",
			"-n", ns, "get", "networks.v1.samplecrd.k8s.io", "conv-0", "-o", "jsonpath={.apiVersion} {.spec.cidr}").CombinedOutput()
		switch {
		case err == nil && string(out) == "samplecrd.k8s.io/v1 10.160.0.0/24":
			ok++
		case err == nil:
			t.Errorf("a v1 read returned %q", out)
			failed++
		default:
			failed++
			last = strings.TrimSpace(string(out))
		}
	}
	return ok, failed, last
}

// convertAt sends a ConversionReview of a dual-stack v2 Network to v1 to the
// conversion webhook of one Pod, through the API server's Pod proxy (which
// does not verify the Pod's certificate: what is tested here is that the
// replica answers, not the caBundle, which the v1 reads test), and checks
// the answer.
func convertAt(ctx context.Context, t *testing.T, pod string) error {
	t.Helper()
	network := samplecrdv2.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv2.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: "review", Namespace: "default", UID: "00000000-0000-0000-0000-000000000042"},
		Spec: samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{
			{CIDR: "10.161.0.0/24", Gateway: "10.161.0.1"},
			{CIDR: "fd00:161::/64"},
		}, MTU: ptr.To[int32](1400)},
	}
	raw, err := json.Marshal(network)
	if err != nil {
		return err
	}
	uid := types.UID(fmt.Sprintf("review-%s-%d", pod, time.Now().UnixNano()))
	body, err := json.Marshal(apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: samplecrdv1.SchemeGroupVersion.String(),
			Objects: []runtime.RawExtension{{Raw: raw}}},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := kubeClient(t).CoreV1().RESTClient().Post().Namespace(controllerNamespace).Resource("pods").
		Name(fmt.Sprintf("https:%s:%d", pod, conversionPort)).SubResource("proxy").Suffix("convert").
		SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("POST /convert: %w (%s)", err, out)
	}
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(out, &review); err != nil {
		return fmt.Errorf("decoding the answer %q: %w", out, err)
	}
	resp := review.Response
	switch {
	case resp == nil:
		return fmt.Errorf("no response in %s", out)
	case resp.UID != uid:
		return fmt.Errorf("response for %q, want %q", resp.UID, uid)
	case resp.Result.Status != metav1.StatusSuccess:
		return fmt.Errorf("conversion failed: %+v", resp.Result)
	case len(resp.ConvertedObjects) != 1:
		return fmt.Errorf("%d objects converted, want 1", len(resp.ConvertedObjects))
	}
	var got samplecrdv1.Network
	if err := json.Unmarshal(resp.ConvertedObjects[0].Raw, &got); err != nil {
		return err
	}
	if got.APIVersion != samplecrdv1.SchemeGroupVersion.String() || got.Spec.CIDR != "10.161.0.0/24" ||
		!strings.Contains(got.Annotations[samplecrdv1.SubnetsAnnotation], "fd00:161::/64") {
		return fmt.Errorf("converted to %s with cidr %q and %s=%q, want v1 with the IPv4 subnet at the top and the IPv6 one in the annotation",
			got.APIVersion, got.Spec.CIDR, samplecrdv1.SubnetsAnnotation, got.Annotations[samplecrdv1.SubnetsAnnotation])
	}
	return nil
}

// TestStorageVersionMigrationStoresV2: the node's control plane serves
// storagemigration.k8s.io/v1, and a StorageVersionMigration (what
// docs/api-versions.md tells a v1 user to create after the upgrade)
// rewrites a Network stored as v1 before the upgrade in v2, through the
// conversion webhook; the Network keeps its Neutron IDs and stays Ready.
func TestStorageVersionMigrationStoresV2(t *testing.T) {
	ctx := framework.TestContext(t, 5*time.Minute)
	resources, err := kubeClient(t).Discovery().ServerResourcesForGroupVersion("storagemigration.k8s.io/v1")
	if err != nil {
		t.Fatalf("the API server does not serve storagemigration.k8s.io/v1: %v", err)
	}
	t.Logf("storagemigration.k8s.io/v1 serves %d resources", len(resources.APIResources))

	ns := newNamespace(ctx, t, nil)
	createNetworks(ctx, t, ns, "old", 162, 1)
	before := waitAllReady(ctx, t, ns, 1, 2*time.Minute)[0]
	key := fmt.Sprintf("/registry/samplecrd.k8s.io/networks/%s/%s", ns, before.Name)
	if v := storedAPIVersion(ctx, t, key); v != "samplecrd.k8s.io/v2" {
		t.Fatalf("a Network created now is stored as %s, want samplecrd.k8s.io/v2", v)
	}

	// As it was stored before the upgrade: its v1 form, written to etcd
	// directly (etcd holds no resourceVersion; the API server's watch
	// sees an update). With its managedFields: without them the
	// controller's server-side apply no longer owns the finalizer, and
	// cannot withdraw it when the Network is deleted.
	v1JSON := kubectl(ctx, t, "-n", ns, "get", "networks.v1.samplecrd.k8s.io", before.Name, "-o", "json", "--show-managed-fields")
	var obj map[string]any
	if err := json.Unmarshal([]byte(v1JSON), &obj); err != nil {
		t.Fatal(err)
	}
	delete(obj["metadata"].(map[string]any), "resourceVersion")
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	etcdctl(ctx, t, "put", key, string(data))
	if v := storedAPIVersion(ctx, t, key); v != "samplecrd.k8s.io/v1" {
		t.Fatalf("after the write to etcd the Network is stored as %s, want samplecrd.k8s.io/v1", v)
	}

	svm := fmt.Sprintf(`{"apiVersion":"storagemigration.k8s.io/v1","kind":"StorageVersionMigration","metadata":{"name":"networks-%s"},"spec":{"resource":{"group":"samplecrd.k8s.io","resource":"networks"}}}`, ns)
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig, "create", "-f", "-")
	cmd.Stdin = strings.NewReader(svm)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("creating the StorageVersionMigration: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig, "delete", "storageversionmigration", "networks-"+ns).Run()
	})
	kubectl(ctx, t, "wait", "storageversionmigration/networks-"+ns, "--for=condition=Succeeded", "--timeout=3m")
	if v := storedAPIVersion(ctx, t, key); v != "samplecrd.k8s.io/v2" {
		t.Errorf("after the migration the Network is stored as %s, want samplecrd.k8s.io/v2", v)
	}
	after := waitAllReady(ctx, t, ns, 1, time.Minute)[0]
	if after.Status.NetworkID != before.Status.NetworkID || after.Status.SubnetID != before.Status.SubnetID {
		t.Errorf("the migration changed the Neutron IDs: %s/%s -> %s/%s", before.Status.NetworkID, before.Status.SubnetID, after.Status.NetworkID, after.Status.SubnetID)
	}
	if !meta.IsStatusConditionTrue(after.Status.Conditions, samplecrdv1.ConditionReady) {
		t.Errorf("the Network is not Ready after the migration: %+v", after.Status.Conditions)
	}
}

// storedAPIVersion is the apiVersion of the object at key in etcd: the
// version it is stored in, which the API server never shows.
func storedAPIVersion(ctx context.Context, t *testing.T, key string) string {
	t.Helper()
	out := etcdctl(ctx, t, "get", key, "--print-value-only")
	var stored metav1.TypeMeta
	if err := json.Unmarshal([]byte(out), &stored); err != nil {
		t.Fatalf("the value at %s is not JSON: %v\n%s", key, err, out)
	}
	return stored.APIVersion
}

func etcdctl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(stack.RepoRoot, "bin", "etcdctl"), append([]string{"--endpoints=" + stack.ControlPlane.EtcdURL}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("etcdctl %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
