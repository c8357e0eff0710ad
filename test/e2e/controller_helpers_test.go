package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/test/framework"
)

// controller is one network-controller process under test. It manages only
// its test's namespace and marks its Neutron resources with a cluster name
// of its own, so tests cannot see each other's Networks or networks.
type controller struct {
	*framework.Process
	namespace, cluster string
	// clusterUID is the UID of the kube-system namespace of the cluster
	// the controller runs against.
	clusterUID types.UID
	args       []string
	// probeURL and metricsURL are the roots of its HTTP endpoints.
	probeURL, metricsURL string
}

// startController runs network-controller against the stack for namespace
// ns; it is stopped when the test ends, after the test's own cleanups.
func startController(t *testing.T, ns string, extraArgs ...string) *controller {
	t.Helper()
	return startControllerWithEnv(t, ns, nil, extraArgs...)
}

// startControllerWithEnv is startController with more environment, e.g.
// OS_CLIENT_CONFIG_FILE for a controller that reaches Neutron through
// Keystone.
func startControllerWithEnv(t *testing.T, ns string, env []string, extraArgs ...string) *controller {
	t.Helper()
	return startControllerOn(t, stack.ControlPlane, ns, env, extraArgs...)
}

// startControllerOn is startControllerWithEnv against the cluster of cp:
// the stack's, or another one that shares its Neutron.
func startControllerOn(t *testing.T, cp *framework.ControlPlane, ns string, env []string, extraArgs ...string) *controller {
	t.Helper()
	kubeconfig := filepath.Join(stack.Dir, fmt.Sprintf("%s-%s.kubeconfig", ns, cp.ClusterUID))
	if err := framework.WriteKubeconfig(cp.AdminConfig, "admin", kubeconfig); err != nil {
		t.Fatal(err)
	}
	c := &controller{namespace: ns, cluster: "e2e-" + ns, clusterUID: cp.ClusterUID}
	for _, arg := range extraArgs {
		if name, ok := strings.CutPrefix(arg, "--cluster-name="); ok {
			c.cluster = name
		}
	}
	ports, err := framework.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	c.probeURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	c.metricsURL = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	c.args = append([]string{
		// A lease of its own: a test's controllers compete only with each other.
		"--leader-elect-resource-name=" + ns,
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[0]),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[1]),
		"--kubeconfig=" + kubeconfig,
		"--namespace=" + ns,
		"--neutron-endpoint=" + stack.Neutron.Endpoint,
		"--cluster-name=" + c.cluster, // extraArgs may repeat a flag: the last one wins
		// Orphans go a second after a second sighting, not minutes.
		"--orphan-grace-period=1s",
		"-v=4",
	}, extraArgs...)
	c.Process = &framework.Process{
		Name: "network-controller",
		Path: controllerBinary,
		Args: c.args,
		Env:  append(os.Environ(), env...),
		Dir:  stack.Dir,
		// Unique per process: a test may run several controllers.
		LogPath: filepath.Join(stack.Dir, fmt.Sprintf("%s-controller-%d.log", ns, time.Now().UnixNano())),
	}
	c.start(t)
	t.Cleanup(func() {
		_ = c.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("controller log (tail):\n%s", c.Tail(6000))
		}
	})
	return c
}

func (c *controller) start(t *testing.T) {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
}

// metric returns the sum of the controller's samples of the metric name
// whose labels include labels (0 when it has none), read from its /metrics.
func (c *controller) metric(ctx context.Context, t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return scrapeMetric(ctx, t, http.DefaultClient, c.metricsURL+"/metrics", name, labels)
}

// scrapeMetric reads a program's /metrics at url and returns the sum of
// the samples of the metric name whose labels include labels (0 when it
// has none).
func scrapeMetric(ctx context.Context, t *testing.T, client *http.Client, url, name string, labels map[string]string) float64 {
	t.Helper()
	req, err := httpRequest(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("reading the metrics at %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ms := testutil.NewMetrics()
	if err := testutil.ParseMetrics(string(body), &ms); err != nil {
		t.Fatalf("parsing the metrics at %s: %v", url, err)
	}
	sum := 0.0
	for _, s := range ms[name] {
		match := true
		for k, v := range labels {
			match = match && string(s.Metric[model.LabelName(k)]) == v
		}
		if match {
			sum += float64(s.Value)
		}
	}
	return sum
}

// waitReady waits until the controller's /readyz passes.
func (c *controller) waitReady(ctx context.Context, t *testing.T) {
	t.Helper()
	c.waitProbe(ctx, t, "/readyz")
}

// waitServing waits until the controller answers /healthz: it runs, whether
// or not it is ready.
func (c *controller) waitServing(ctx context.Context, t *testing.T) {
	t.Helper()
	c.waitProbe(ctx, t, "/healthz")
}

// waitProbe waits until the probe at path answers 200.
func (c *controller) waitProbe(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		req, err := httpRequest(ctx, c.probeURL+path)
		if err != nil {
			return false, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, path + ": " + resp.Status, nil
	})
}

// mark is the ownership mark of the controller's cluster.
func (c *controller) mark(t *testing.T) neutron.Mark {
	t.Helper()
	m, err := neutron.NewMark(c.cluster, c.clusterUID)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func networkClient(t *testing.T) clientset.Interface { return stack.ControlPlane.NetworkClient(t) }

func createNetwork(ctx context.Context, t *testing.T, ns, name, cidr, gateway string) *samplecrdv1.Network {
	t.Helper()
	n, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       samplecrdv1.NetworkSpec{CIDR: cidr, Gateway: gateway},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Network %s: %v", name, err)
	}
	return n
}

// cleanupNetworks deletes the namespace's Networks when the test ends and
// waits until they are gone, while the test's controller still runs.
func cleanupNetworks(t *testing.T, ns string) {
	cleanupNetworksIn(t, networkClient(t), ns)
}

// cleanupNetworksIn is cleanupNetworks in the cluster of nc.
func cleanupNetworksIn(t *testing.T, nc clientset.Interface, ns string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		client := nc.SamplecrdV1().Networks(ns)
		if err := client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		framework.Eventually(ctx, t, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
			list, err := client.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, "", err
			}
			return len(list.Items) == 0, fmt.Sprintf("%d Networks left in %s", len(list.Items), ns), nil
		})
	})
}

// readyCondition returns the Network's Ready condition, or nil.
func readyCondition(n *samplecrdv1.Network) *metav1.Condition {
	return meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady)
}

// waitForReady waits until the Network is Ready=True for its current
// generation, and returns it.
func waitForReady(ctx context.Context, t *testing.T, ns, name string, timeout time.Duration) *samplecrdv1.Network {
	t.Helper()
	return waitForCondition(ctx, t, ns, name, timeout, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
}

func waitForCondition(ctx context.Context, t *testing.T, ns, name string, timeout time.Duration, status metav1.ConditionStatus, reason string) *samplecrdv1.Network {
	t.Helper()
	return waitForConditionIn(ctx, t, networkClient(t), ns, name, timeout, status, reason)
}

// waitForConditionIn is waitForCondition in the cluster of nc.
func waitForConditionIn(ctx context.Context, t *testing.T, nc clientset.Interface, ns, name string, timeout time.Duration, status metav1.ConditionStatus, reason string) *samplecrdv1.Network {
	t.Helper()
	var got *samplecrdv1.Network
	framework.Eventually(ctx, t, timeout, func(ctx context.Context) (bool, string, error) {
		n, err := nc.SamplecrdV1().Networks(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		got = n
		c := readyCondition(n)
		if c == nil {
			return false, name + " has no Ready condition", nil
		}
		ok := c.Status == status && c.Reason == reason && n.Status.ObservedGeneration == n.Generation
		return ok, fmt.Sprintf("%s Ready=%s/%s (%s), observedGeneration %d of %d", name, c.Status, c.Reason, c.Message, n.Status.ObservedGeneration, n.Generation), nil
	})
	return got
}

// waitForAddressCounts waits until every subnet in the Network's
// status.subnets (read as v2) has its address counts, which the first
// list of Neutron after Ready brings when the controller's credentials
// may read them, and returns the Network read through v1 then.
func waitForAddressCounts(ctx context.Context, t *testing.T, ns, name string) *samplecrdv1.Network {
	t.Helper()
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := networkClient(t).SamplecrdV2().Networks(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, s := range n.Status.Subnets {
			if s.UsedIPs == nil || s.FreeIPs == nil {
				return false, fmt.Sprintf("status.subnets %+v without address counts", n.Status.Subnets), nil
			}
		}
		return len(n.Status.Subnets) > 0, fmt.Sprintf("status.subnets %+v", n.Status.Subnets), nil
	})
	n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func waitForGone(ctx context.Context, t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(ctx, t, timeout, func(ctx context.Context) (bool, string, error) {
		_, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("%s still exists (%v)", name, err), nil
	})
}

// neutronNetworks lists the Neutron networks that carry the controller's
// cluster's mark, and every subnet on them.
func (c *controller) neutronNetworks(ctx context.Context, t *testing.T) ([]networks.Network, []subnets.Subnet) {
	t.Helper()
	page, err := networks.List(stack.Neutron.Client, networks.ListOpts{Description: c.mark(t).Description()}).AllPages(ctx)
	if err != nil {
		t.Fatalf("listing Neutron networks: %v", err)
	}
	nets, err := networks.ExtractNetworks(page)
	if err != nil {
		t.Fatal(err)
	}
	var subs []subnets.Subnet
	for _, n := range nets {
		page, err := subnets.List(stack.Neutron.Client, subnets.ListOpts{NetworkID: n.ID}).AllPages(ctx)
		if err != nil {
			t.Fatalf("listing subnets: %v", err)
		}
		s, err := subnets.ExtractSubnets(page)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s...)
	}
	return nets, subs
}

// grant makes a TenantPolicy that grants the Networks of namespace ns what
// spec says, as a cluster administrator would; it goes when the test ends.
func grant(ctx context.Context, t *testing.T, ns string, spec samplecrdv1.TenantPolicySpec) *samplecrdv1.TenantPolicy {
	t.Helper()
	spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	tp, err := networkClient(t).SamplecrdV1().TenantPolicies().Create(ctx,
		&samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "grant-" + ns}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("granting namespace %s %+v: %v", ns, spec, err)
	}
	t.Cleanup(func() {
		_ = networkClient(t).SamplecrdV1().TenantPolicies().Delete(context.Background(), tp.Name, metav1.DeleteOptions{})
	})
	return tp
}
