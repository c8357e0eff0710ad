package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
	"github.com/samplecrd/network-controller/test/framework"
)

// Credentials that change or go (issue 34): no network is ever left in a
// project where nothing lists it again, and no deletion is ever stranded.

// asCloud is tenant's clouds.yaml with its cloud renamed cloud: another
// project's credentials under the name a controller or Network uses.
func asCloud(t *testing.T, tenant *framework.Tenant, cloud string) []byte {
	t.Helper()
	var file struct {
		Clouds map[string]any `json:"clouds"`
	}
	if err := yaml.Unmarshal(cloudsYAMLOf(t, tenant, ""), &file); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(map[string]any{"clouds": map[string]any{cloud: file.Clouds[tenant.Cloud]}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replaceFile puts data at path by a rename, as the kubelet swaps a
// mounted Secret's files: a reader sees the old file or the new one.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// TestASwappedCloudsYAMLLeavesNoNetworkBehind: the controller's own
// clouds.yaml is changed in place to another project's credentials (as a
// mounted Secret is), and a Network of the first project is deleted. The
// Network waits, CredentialsUnavailable with both projects named, and
// keeps its finalizer; its network stays in the first project. Once the
// first project's credentials are back, the delete finishes there.
func TestASwappedCloudsYAMLLeavesNoNetworkBehind(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	own, err := stack.Keystone.PasswordCloudsYAML(stack.Keystone.Password)
	if err != nil {
		t.Fatal(err)
	}
	other := newTenant(ctx, t, "swap-"+ns[len(ns)-5:], "")
	path := filepath.Join(stack.Dir, ns+"-clouds.yaml")
	write := func(data []byte) { t.Helper(); replaceFile(t, path, data) }
	write(own)
	withCloud(t, ns, path, framework.PasswordCloud, "--cloud-reload-interval=1s", "--max-retry-delay=2s")
	cleanupNetworks(t, ns)
	// Run first, if the test stops early: the cleanup's deletes of the
	// first project's networks need its credentials.
	t.Cleanup(func() { write(own) })

	createNetwork(ctx, t, ns, "kept", "10.97.0.0/24", "10.97.0.1")
	kept := waitForReady(ctx, t, ns, "kept", time.Minute)
	if kept.Status.ProjectID != stack.Keystone.ProjectID {
		t.Fatalf("status.projectID = %q, want the controller's project %s", kept.Status.ProjectID, stack.Keystone.ProjectID)
	}

	write(asCloud(t, other, framework.PasswordCloud))
	// A new Network records the place the credentials reach at its first
	// sync, before anything is made for it: one that records the other
	// project is the sign that the controller reads the swapped file. One
	// made before it did records the first project (and may wait there,
	// CredentialsUnavailable, if the swap came before its subnet); then
	// another is made.
	sentinels := 0
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		if sentinels > 0 {
			n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, fmt.Sprintf("sentinel-%d", sentinels), metav1.GetOptions{})
			switch {
			case err != nil || n.Status.Place == nil:
				return false, fmt.Sprintf("sentinel-%d has no place yet (%v)", sentinels, err), nil
			case n.Status.Place.ProjectID == other.ProjectID:
				return true, "", nil
			}
		}
		sentinels++
		createNetwork(ctx, t, ns, fmt.Sprintf("sentinel-%d", sentinels), fmt.Sprintf("10.97.%d.0/24", sentinels), fmt.Sprintf("10.97.%d.1", sentinels))
		return false, fmt.Sprintf("sentinel-%d made", sentinels), nil
	})
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "kept", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n := waitForCondition(ctx, t, ns, "kept", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonCredentialsUnavailable)
	if msg := readyCondition(n).Message; !strings.Contains(msg, stack.Keystone.ProjectID) || !strings.Contains(msg, other.ProjectID) {
		t.Errorf("the message %q does not name both projects", msg)
	}
	if len(n.Finalizers) == 0 || !neutronNetworkExists(ctx, t, kept.Status.NetworkID) {
		t.Fatalf("finalizers %v, network %s there: %v; want both kept", n.Finalizers, kept.Status.NetworkID, neutronNetworkExists(ctx, t, kept.Status.NetworkID))
	}

	// The sentinels of the other project go while its credentials are in
	// use (any made before the swap was seen go at the end, with the
	// first project's).
	for i := 1; i <= sentinels; i++ {
		name := fmt.Sprintf("sentinel-%d", i)
		if s, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, name, metav1.GetOptions{}); err != nil || s.Status.Place == nil || s.Status.Place.ProjectID != other.ProjectID {
			continue
		}
		if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForGone(ctx, t, ns, name, time.Minute)
	}

	write(own)
	waitForGone(ctx, t, ns, "kept", time.Minute)
	if neutronNetworkExists(ctx, t, kept.Status.NetworkID) {
		t.Errorf("the deleted Network's network %s is still in project %s", kept.Status.NetworkID, stack.Keystone.ProjectID)
	}
}

// TestARegionSwitchLeavesNoNetworkBehind: the controller's own
// clouds.yaml keeps its project but switches region_name to a second
// region, whose catalog entry is another Neutron (framework.OtherRegion:
// it knows nothing of the first region's network), and a Network of the
// first region is deleted. The Network waits, CredentialsUnavailable with
// both regions named, and keeps its finalizer; its network and subnet stay
// in the first region. Once the file names the first region again, the
// delete finishes there.
func TestARegionSwitchLeavesNoNetworkBehind(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	regionTwo := "RegionTwo-" + ns[strings.LastIndex(ns, "-")+1:]
	other, err := framework.StartOtherRegion(stack.Neutron.KeystoneEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	twoPath, err := stack.Keystone.ControllerCloudVia(ctx, regionTwo, other.URL)
	if err != nil {
		t.Fatal(err)
	}
	two, err := os.ReadFile(twoPath)
	if err != nil {
		t.Fatal(err)
	}
	one, err := stack.Keystone.PasswordCloudsYAML(stack.Keystone.Password)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(stack.Dir, ns+"-clouds.yaml")
	replaceFile(t, path, one)
	// Lists every 2 s: the first request in the second region comes soon
	// after the switch, whatever the Networks do.
	withCloud(t, ns, path, framework.PasswordCloud, "--cloud-reload-interval=1s", "--max-retry-delay=2s", "--neutron-resync-period=2s")
	cleanupNetworks(t, ns)
	// Run first, if the test stops early: the cleanup's deletes need the
	// first region.
	t.Cleanup(func() { replaceFile(t, path, one) })

	createNetwork(ctx, t, ns, "kept", "10.89.0.0/24", "10.89.0.1")
	kept := waitForReady(ctx, t, ns, "kept", time.Minute)
	if p := kept.Status.Place; p == nil || p.Region != "RegionOne" || p.ProjectID != stack.Keystone.ProjectID {
		t.Fatalf("status.place = %+v, want region RegionOne of project %s", p, stack.Keystone.ProjectID)
	}
	netID, subnetID := kept.Status.NetworkID, kept.Status.SubnetID
	inRegionOne := func() (bool, bool) {
		t.Helper()
		_, err := subnets.Get(ctx, stack.Neutron.Client, subnetID).Extract()
		if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			t.Fatalf("reading subnet %s: %v", subnetID, err)
		}
		return neutronNetworkExists(ctx, t, netID), err == nil
	}
	other.Hide(netID, subnetID)

	replaceFile(t, path, two)
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		return other.Requests() > 0, "no request has reached " + regionTwo + " yet", nil
	})
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "kept", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var n *samplecrdv1.Network
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		got, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "kept", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			network, subnet := inRegionOne()
			return false, "", fmt.Errorf("the Network was deleted through %s; its network is still in RegionOne: %v, its subnet: %v", regionTwo, network, subnet)
		}
		if err != nil {
			return false, err.Error(), nil
		}
		n = got
		c := readyCondition(n)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == samplecrdv1.ReasonCredentialsUnavailable,
			fmt.Sprintf("Ready: %+v", c), nil
	})
	if msg := readyCondition(n).Message; !strings.Contains(msg, `region "RegionOne"`) || !strings.Contains(msg, `region "`+regionTwo+`"`) {
		t.Errorf("the message %q does not name both regions", msg)
	}
	if network, subnet := inRegionOne(); len(n.Finalizers) == 0 || !network || !subnet {
		t.Fatalf("finalizers %v, network %s there: %v, subnet %s there: %v; want all kept", n.Finalizers, netID, network, subnetID, subnet)
	}

	replaceFile(t, path, one)
	waitForGone(ctx, t, ns, "kept", time.Minute)
	if network, subnet := inRegionOne(); network || subnet {
		t.Errorf("the deleted Network's network (%v) or subnet (%v) is still in RegionOne", network, subnet)
	}
}

// TestADeletionOutlivesItsSecretAndARestart: in a cluster of the test's
// own, 300 Networks of one namespace name Secrets that do not exist (each
// read fails), while a Network of another namespace is made with its
// namespace's credentials, at most one held at a time. Then, as a
// namespace's deletion does in no chosen order, its Secret goes and the
// Network is deleted, while the controller is down; the controller that
// starts afterwards knows nothing of the Secret but its kept copy, deletes
// the network from the namespace's project and removes the finalizer, and
// the copy goes with the last Network that named it.
func TestADeletionOutlivesItsSecretAndARestart(t *testing.T) {
	ctx := framework.TestContext(t, 5*time.Minute)
	other := startOtherCluster(ctx, t)
	kc, err := kubernetes.NewForConfig(other.cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	team, noise := "leaving", "noise"
	other.namespace(ctx, t, team)
	other.namespace(ctx, t, noise)
	project := newTenant(ctx, t, "leaving-"+fmt.Sprint(time.Now().UnixNano()%100000), "")
	credentialsSecret(ctx, t, kc, team, "cloud", cloudsYAMLOf(t, project, ""))
	start := func() *controller {
		return startControllerOn(t, other.cp, team, []string{"OS_CLIENT_CONFIG_FILE=" + stack.Keystone.CloudsYAML},
			"--namespace=", "--neutron-endpoint=", "--os-cloud="+framework.PasswordCloud, "--max-retry-delay=3s",
			"--max-cloud-credentials=1", "--cloud-reload-interval=1s", "--leader-elect-resource-namespace=default")
	}
	c := start()
	cleanupNetworksIn(t, other.nc, team)
	cleanupNetworksIn(t, other.nc, noise)

	for i := range 300 {
		createWithCredentials(ctx, t, other.nc, noise, fmt.Sprintf("n-%d", i), fmt.Sprintf("10.98.%d.%d/30", i/64, (i%64)*4), fmt.Sprintf("missing-%d", i), "x")
	}
	createWithCredentials(ctx, t, other.nc, team, "net", "10.99.0.0/24", "cloud", project.Cloud)
	net := waitForConditionIn(ctx, t, other.nc, team, "net", 2*time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
	inProject(ctx, t, net, project.ProjectID)
	waitForConditionIn(ctx, t, other.nc, noise, "n-299", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonCredentialsUnavailable)
	keptName := tenancy.KeptName(tenancy.Key{Namespace: team, Secret: "cloud", Cloud: project.Cloud})
	if _, err := kc.CoreV1().Secrets("default").Get(ctx, keptName, metav1.GetOptions{}); err != nil {
		t.Fatalf("no kept copy of the credentials in the controller's namespace: %v", err)
	}

	if err := c.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := kc.CoreV1().Secrets(team).Delete(ctx, "cloud", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := other.nc.SamplecrdV1().Networks(team).Delete(ctx, "net", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start()
	framework.Eventually(ctx, t, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := other.nc.SamplecrdV1().Networks(team).Get(ctx, "net", metav1.GetOptions{})
		if err == nil {
			return false, fmt.Sprintf("the Network is still there: %+v", readyCondition(n)), nil
		}
		return strings.Contains(err.Error(), "not found"), err.Error(), nil
	})
	if neutronNetworkExists(ctx, t, net.Status.NetworkID) {
		t.Errorf("the network %s is still in the namespace's project", net.Status.NetworkID)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		_, err := kc.CoreV1().Secrets("default").Get(ctx, keptName, metav1.GetOptions{})
		return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprintf("the kept copy: %v", err), nil
	})
}
