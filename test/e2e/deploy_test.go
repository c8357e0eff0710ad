package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

const deployNamespace = "network-controller-system"

// TestDeployManifestsAreSufficientAndLeast applies artifacts/deploy with
// kubectl, as a cluster admin would, then runs the controller with the
// token of the ServiceAccount the manifests create: it must reconcile a
// Network through create, update and delete, and it must be able to do
// nothing it does not need.
func TestDeployManifestsAreSufficientAndLeast(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	// The CRD the admin applies names the in-cluster webhook's Service;
	// this cluster converts through the test process's (no Pod runs here).
	if err := framework.ForgetConversionWebhook(ctx, stack.ControlPlane.AdminConfig); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig,
		"apply", "-k", filepath.Join(stack.RepoRoot, "artifacts", "deploy")).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k artifacts/deploy: %v\n%s", err, out)
	}
	if err := stack.Conversion.Use(ctx, stack.ControlPlane); err != nil {
		t.Fatal(err)
	}

	saConfig, err := stack.ControlPlane.ServiceAccountConfig(ctx, deployNamespace, "network-controller")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(stack.Dir, "deployed-sa.kubeconfig")
	if err := framework.WriteKubeconfig(saConfig, "network-controller", kubeconfig); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(ctx, t)
	startController(t, ns,
		"--kubeconfig="+kubeconfig,
		"--leader-elect-resource-namespace="+deployNamespace,
		"--leader-elect-resource-name=network-controller")
	cleanupNetworks(t, ns)

	createNetwork(ctx, t, ns, "rbac", "10.80.0.0/24", "10.80.0.1")
	waitForReady(ctx, t, ns, "rbac", time.Minute)
	patch := []byte(`{"spec":{"gateway":"10.80.0.254","writeConfigMapToRef":{"name":"rbac-network"}}}`)
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Patch(ctx, "rbac", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForReady(ctx, t, ns, "rbac", time.Minute)
	// The owned ConfigMap: watched, created, and deleted when no longer
	// named, with the deployed RBAC.
	if cm := waitForPublished(ctx, t, ns, "rbac", "rbac-network"); cm.Data[samplecrdv1.ConfigMapKeyGateway] != "10.80.0.254" {
		t.Errorf("the published gateway is %q, want the new one", cm.Data[samplecrdv1.ConfigMapKeyGateway])
	}
	publishInto(ctx, t, ns, "rbac", "rbac-network-v2")
	waitForPublished(ctx, t, ns, "rbac", "rbac-network-v2")
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := kubeClient(t).CoreV1().ConfigMaps(ns).Get(ctx, "rbac-network", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the ConfigMap no longer named: %v", err), nil
	})
	events, err := kubeClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 {
		t.Error("the controller could not record Events with the deployed RBAC")
	}
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "rbac", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "rbac", time.Minute)

	user := "system:serviceaccount:" + deployNamespace + ":network-controller"
	for _, denied := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "secrets"},
		{Verb: "list", Resource: "secrets", Namespace: deployNamespace},
		{Verb: "delete", Group: "samplecrd.k8s.io", Resource: "networks", Namespace: ns},
		{Verb: "create", Group: "samplecrd.k8s.io", Resource: "networks", Namespace: ns},
		{Verb: "update", Group: "samplecrd.k8s.io", Resource: "networks", Namespace: ns},
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: deployNamespace, Name: "someone-elses-lease"},
		{Verb: "create", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"},
		{Verb: "list", Resource: "pods"},
		{Verb: "patch", Resource: "configmaps", Namespace: ns, Name: "any"},
		{Verb: "get", Resource: "namespaces", Name: "default"},
		{Verb: "update", Resource: "namespaces", Name: "default"},
		{Verb: "create", Group: "samplecrd.k8s.io", Resource: "tenantpolicies"},
		{Verb: "update", Group: "samplecrd.k8s.io", Resource: "tenantpolicies", Name: "any"},
		// The conversion webhook's, which has a ServiceAccount of its own.
		{Verb: "get", Group: "samplecrd.k8s.io", Resource: "networks", Namespace: ns, Name: "rbac"},
		{Verb: "get", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "networks.samplecrd.k8s.io"},
	} {
		review, err := kubeClient(t).AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &denied},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed {
			t.Errorf("the ServiceAccount may %s %s %q in %q: more than it needs", denied.Verb, denied.Resource, denied.Name, denied.Namespace)
		}
	}

	// The conversion webhook's ServiceAccount reads a stored Network and
	// the Network CRD, and nothing else.
	webhook := "system:serviceaccount:" + deployNamespace + ":network-controller-conversion"
	for _, tc := range []struct {
		attributes authorizationv1.ResourceAttributes
		allowed    bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "samplecrd.k8s.io", Resource: "networks", Namespace: ns, Name: "any"}, true},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "networks.samplecrd.k8s.io"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "samplecrd.k8s.io", Resource: "networks"}, false},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: "samplecrd.k8s.io", Resource: "networks", Namespace: ns, Name: "any"}, false},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "tenantpolicies.samplecrd.k8s.io"}, false},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: deployNamespace}, false},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: deployNamespace, Name: "network-controller"}, false},
	} {
		review, err := kubeClient(t).AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: webhook, ResourceAttributes: &tc.attributes},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != tc.allowed {
			a := tc.attributes
			t.Errorf("the webhook's ServiceAccount may %s %s/%s %q: %v, want %v", a.Verb, a.Group, a.Resource, a.Name, review.Status.Allowed, tc.allowed)
		}
	}

	// Uninstall as README's "Uninstall" says not to, all at once: what
	// kubectl delete -k artifacts/deploy removes is the controller alone.
	kept := createNetwork(ctx, t, ns, "kept", "10.81.0.0/24", "10.81.0.1")
	kept = waitForReady(ctx, t, ns, kept.Name, time.Minute)
	out, err = exec.CommandContext(ctx, "kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig,
		"delete", "-k", filepath.Join(stack.RepoRoot, "artifacts", "deploy"), "--wait=false").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl delete -k artifacts/deploy: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "customresourcedefinition") {
		t.Errorf("kubectl delete -k artifacts/deploy deleted the CRD:\n%s", out)
	}
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, kept.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the Network did not survive the controller's uninstall: %v", err)
	}
	if _, err := networks.Get(ctx, stack.Neutron.Client, kept.Status.NetworkID).Extract(); err != nil {
		t.Errorf("its Neutron network did not survive the controller's uninstall: %v", err)
	}
	// With no controller left, what it would have done is done by hand, as
	// README's "Uninstall" tells an operator who got here.
	if err := networks.Delete(ctx, stack.Neutron.Client, kept.Status.NetworkID).ExtractErr(); err != nil {
		t.Errorf("deleting the Neutron network by hand: %v", err)
	}
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Patch(ctx, kept.Name, types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil {
		t.Errorf("removing the finalizer by hand: %v", err)
	}
}

// TestLeaderElectionFailsOver runs two controllers against one Lease:
// exactly one works; killed, the other takes over within the lease
// duration and finishes the work, with no duplicate in Neutron.
func TestLeaderElectionFailsOver(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	// Short, but with room for a loaded CI machine: a missed renewal would
	// hand the lease over early and fail the test for the wrong reason.
	fast := []string{"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s"}
	// Who leads is read where client-go reports it,
	// leader_election_master_status; what a replica did, from its own
	// neutron_requests_total. A standby is ready once it has seen a leader.
	leading := func(c *controller) bool { return c.metric(ctx, t, "leader_election_master_status", nil) == 1 }
	creates := func(c *controller) float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "POST"})
	}
	first := startController(t, ns, fast...)
	// /healthz answers once the process serves, /metrics with it.
	first.waitProbe(ctx, t, "/healthz")
	framework.Eventually(ctx, t, 30*time.Second, func(context.Context) (bool, string, error) {
		return leading(first), "the first controller is not leading yet", nil
	})
	second := startController(t, ns, fast...)
	cleanupNetworks(t, ns)
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		code, body := get(ctx, second.probeURL+"/readyz")
		return code == http.StatusOK, fmt.Sprintf("the second controller is not a ready standby: /readyz %d: %s", code, body), nil
	})

	createNetwork(ctx, t, ns, "one", "10.81.0.0/24", "10.81.0.1")
	waitForReady(ctx, t, ns, "one", time.Minute)
	if n := creates(second); n != 0 || leading(second) {
		t.Fatalf("the standby worked: %v creates, leading %v", n, leading(second))
	}

	first.Kill()
	killedAt := time.Now()
	createNetwork(ctx, t, ns, "two", "10.82.0.0/24", "10.82.0.1")
	waitForReady(ctx, t, ns, "two", time.Minute)
	t.Logf("the standby finished the work %s after the leader died", time.Since(killedAt).Round(time.Millisecond))
	if !leading(second) || creates(second) == 0 {
		t.Errorf("the standby never became the leader (leading %v, %v creates)", leading(second), creates(second))
	}
	nets, subs := second.neutronNetworks(ctx, t)
	if len(nets) != 2 || len(subs) != 2 {
		t.Errorf("%d networks and %d subnets in Neutron for 2 Networks", len(nets), len(subs))
	}
}

// TestMetricsAndReadiness reads /metrics and /readyz as Prometheus and the
// kubelet would.
func TestMetricsAndReadiness(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := throughKeystone(t, ns, framework.PasswordCloud, "--neutron-resync-period=1s")
	cleanupNetworks(t, ns)

	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		code, body := get(ctx, c.probeURL+"/readyz")
		return code == http.StatusOK, fmt.Sprintf("/readyz %d: %s", code, body), nil
	})
	createNetwork(ctx, t, ns, "measured", "10.83.0.0/24", "10.83.0.1")
	waitForReady(ctx, t, ns, "measured", time.Minute)

	_, metrics := get(ctx, c.metricsURL+"/metrics")
	for _, want := range []string{
		`workqueue_adds_total{name="networks"}`,
		`workqueue_depth{name="networks"}`,
		`network_controller_syncs_total{result="success"}`,
		`network_controller_sync_duration_seconds_bucket{result="success"`,
		`network_controller_neutron_requests_total{code="201",method="POST"}`,
		`rest_client_requests_total{`,
		`leader_election_master_status{name="` + ns + `"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, body := get(ctx, c.probeURL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d: %s", code, body)
	}

	startNeutronServer := stopNeutronServer(t)
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		code, body := get(ctx, c.probeURL+"/readyz")
		return code != http.StatusOK && strings.Contains(body, "neutron"), fmt.Sprintf("/readyz %d with neutron-server down: %s", code, body), nil
	})
	// Why is for the log: the probes' port answers anyone.
	if code, body := get(ctx, c.probeURL+"/readyz/neutron"); code == http.StatusOK || strings.Contains(body, stack.Neutron.Endpoint) ||
		strings.Contains(body, "refused") || !strings.Contains(body, "the reason is in the controller's log") {
		t.Errorf("/readyz/neutron %d with neutron-server down says: %s", code, body)
	}
	if err := startNeutronServer(ctx); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		code, body := get(ctx, c.probeURL+"/readyz")
		return code == http.StatusOK, fmt.Sprintf("/readyz %d after neutron-server came back: %s", code, body), nil
	})
}

// get returns the status code and body of a GET, or 0 and the error.
func get(ctx context.Context, url string) (int, string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"?verbose", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestLogsCanBeJSON: with --logging-format=json every line the controller
// writes is one JSON object with a message, which is what a log pipeline
// needs; the one test that reads a log, because the log's shape is what it
// checks.
func TestLogsCanBeJSON(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns, "--logging-format=json")
	cleanupNetworks(t, ns)
	createNetwork(ctx, t, ns, "logged", "10.84.0.0/24", "10.84.0.1")
	waitForReady(ctx, t, ns, "logged", time.Minute)
	// The controller runs on (the Network's cleanup needs it): a last line
	// still being written is left out.
	data, err := os.ReadFile(c.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	lines, created := 0, false
	for line := range strings.Lines(string(data)) {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		var entry struct {
			Msg string  `json:"msg"`
			TS  float64 `json:"ts"`
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil || entry.Msg == "" || entry.TS == 0 {
			t.Errorf("not a JSON log entry with ts and msg: %q (%v)", line, err)
			continue
		}
		lines++
		created = created || entry.Msg == "Created Neutron network"
	}
	if lines == 0 || !created {
		t.Errorf("%d JSON lines, none saying what was created", lines)
	}
}

// TestMetricsNeedAnAuthorizedToken: with --metrics-secure, /metrics is
// HTTPS and the API server decides who reads it: no token is 401, a
// ServiceAccount without the manifests' network-controller-metrics-reader
// ClusterRole is 403, one bound to it is served.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns, "--metrics-secure=true")
	url := strings.Replace(c.metricsURL, "http://", "https://", 1) + "/metrics"
	kube := kubeClient(t)

	reader := manifestObject[rbacv1.ClusterRole](t, "artifacts/deploy/rbac.yaml", "ClusterRole", "network-controller-metrics-reader")
	reader.Name = ns + "-metrics-reader"
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: reader.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "prometheus"}}}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), reader.Name, metav1.DeleteOptions{})
	})
	token := func(sa string) string {
		cfg, err := stack.ControlPlane.ServiceAccountConfig(ctx, ns, sa)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.BearerToken
	}
	scrape := func(token string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		// The certificate is self-signed: a scraper authenticates itself,
		// it does not pin the controller.
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	c.waitReady(ctx, t)
	if code, body := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d %.200s", code, body)
	}
	if code, body := scrape(token("nobody")); code != http.StatusForbidden {
		t.Errorf("a ServiceAccount without the reader role: %d %.200s", code, body)
	}
	prometheus := token("prometheus")
	framework.Eventually(ctx, t, 30*time.Second, func(context.Context) (bool, string, error) {
		code, body := scrape(prometheus)
		return code == http.StatusOK && strings.Contains(body, "network_controller_syncs_total"), fmt.Sprintf("the reader: %d %.200s", code, body), nil
	})
	if code, _ := get(ctx, strings.Replace(url, "https://", "http://", 1)); code == http.StatusOK {
		t.Error("/metrics is also served without TLS")
	}
}

// manifestObject decodes the object kind/name of a multi-document file of
// the repository.
func manifestObject[T any](t *testing.T, file, kind, name string) *T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(stack.RepoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("%s has no %s %s (%v)", file, kind, name, err)
		}
		meta, _ := raw["metadata"].(map[string]any)
		if raw["kind"] != kind || meta["name"] != name {
			continue
		}
		out := new(T)
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
}
