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
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/test/framework"
)

// The tests of "never destroy or take what is not ours" (issue 22), each on
// the real stack: clusters that share a Neutron project, adoption, garbage
// collection, credentials fixed in place, and what an outage tells whom.

// otherCluster is a second Kubernetes cluster (etcd and kube-apiserver of
// its own) that shares the stack's Neutron, for one test.
type otherCluster struct {
	cp *framework.ControlPlane
	nc clientset.Interface
}

// startOtherCluster starts an other cluster whose Network CRD converts
// through a webhook of its own, served by the test process as the
// stack's is.
func startOtherCluster(ctx context.Context, t *testing.T) *otherCluster {
	t.Helper()
	o := startOtherClusterWithoutConversion(ctx, t)
	webhook, err := framework.ServeConversionWebhook(ctx, filepath.Join(stack.Dir, "conversion-"+strings.ToLower(t.Name())), o.cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(webhook.Stop)
	if err := webhook.Use(ctx, o.cp); err != nil {
		t.Fatal(err)
	}
	return o
}

// startOtherClusterWithoutConversion starts an other cluster whose
// Network CRD names artifacts/crd's in-cluster Service (v1 refused), for a test that
// points it at a webhook of its own.
func startOtherClusterWithoutConversion(ctx context.Context, t *testing.T) *otherCluster {
	t.Helper()
	cp, err := stack.StartOtherCluster(ctx, filepath.Join(stack.Dir, "cluster-"+strings.ToLower(t.Name())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	nc, err := clientset.NewForConfig(cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &otherCluster{cp: cp, nc: nc}
}

// namespace makes the namespace ns in the other cluster too.
func (o *otherCluster) namespace(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(o.cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createIn creates a Network in the cluster of nc and waits for it to be
// Ready; it returns the Network as Ready.
func createIn(ctx context.Context, t *testing.T, nc clientset.Interface, ns, name, cidr string) *samplecrdv1.Network {
	t.Helper()
	if _, err := nc.SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: samplecrdv1.NetworkSpec{CIDR: cidr},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Network %s/%s: %v", ns, name, err)
	}
	return waitForConditionIn(ctx, t, nc, ns, name, time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
}

// refreshes is how many lists of Neutron c has completed.
func (c *controller) refreshes(ctx context.Context, t *testing.T) float64 {
	t.Helper()
	return c.metric(ctx, t, "network_controller_neutron_refreshes_total", map[string]string{"result": "success"})
}

// waitForLists waits until c has completed n more lists of Neutron than
// it had when called: every list is a chance for it to act on what it sees.
func (c *controller) waitForLists(ctx context.Context, t *testing.T, n float64) {
	t.Helper()
	start := c.refreshes(ctx, t)
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		got := c.refreshes(ctx, t)
		return got >= start+n, fmt.Sprintf("%v of %v lists of Neutron", got-start, n), nil
	})
}

// neutronNetworkExists reports whether Neutron still holds network id.
func neutronNetworkExists(ctx context.Context, t *testing.T, id string) bool {
	t.Helper()
	_, err := networks.Get(ctx, stack.Neutron.Client, id).Extract()
	if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatalf("reading network %s: %v", id, err)
	}
	return err == nil
}

// TestClusterIdentitiesDoNotCollide runs two clusters against one Neutron
// project, each with two controllers: one left at its default identity
// (its kube-system UID), one given the same explicit --cluster-name as the
// other cluster's. Every controller lists the project again and again; no
// controller deletes another cluster's network. Those sharing a name see
// each other's resources, and hold them back as not this cluster's.
func TestClusterIdentitiesDoNotCollide(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	other := startOtherCluster(ctx, t)
	derived, shared := newNamespace(ctx, t), newNamespace(ctx, t)
	other.namespace(ctx, t, derived)
	other.namespace(ctx, t, shared)
	name := "shared-" + shared[len(shared)-5:]

	fast := "--neutron-resync-period=1s"
	ours := startControllerOn(t, stack.ControlPlane, derived, nil, "--cluster-name=", fast)
	theirs := startControllerOn(t, other.cp, derived, nil, "--cluster-name=", fast)
	oursShared := startControllerOn(t, stack.ControlPlane, shared, nil, "--cluster-name="+name, fast)
	theirsShared := startControllerOn(t, other.cp, shared, nil, "--cluster-name="+name, fast)
	for _, ns := range []string{derived, shared} {
		cleanupNetworks(t, ns)
		cleanupNetworksIn(t, other.nc, ns)
	}

	made := []*samplecrdv1.Network{
		createIn(ctx, t, networkClient(t), derived, "net", "10.90.0.0/24"),
		createIn(ctx, t, other.nc, derived, "net", "10.90.1.0/24"),
		createIn(ctx, t, networkClient(t), shared, "net", "10.90.2.0/24"),
		createIn(ctx, t, other.nc, shared, "net", "10.90.3.0/24"),
	}
	if a, b := ours.mark(t).Description(), theirs.mark(t).Description(); a == b {
		t.Errorf("two clusters at their default identity share the mark %q", a)
	}

	// Four lists each: enough for two sightings a grace period apart, and
	// the collection that would follow them.
	for _, c := range []*controller{ours, theirs, oursShared, theirsShared} {
		c.waitForLists(ctx, t, 4)
	}
	for _, n := range made {
		if !neutronNetworkExists(ctx, t, n.Status.NetworkID) {
			t.Errorf("Neutron network %s of Network %s/%s (uid %s) was deleted by another cluster's controller", n.Status.NetworkID, n.Namespace, n.Name, n.UID)
		}
	}
	for _, c := range []*controller{ours, theirs, oursShared, theirsShared} {
		if n := c.metric(ctx, t, "network_controller_orphans_collected_total", nil); n != 0 {
			t.Errorf("a controller of %s collected %v resources", c.namespace, n)
		}
	}
	// Those of one name did see each other's network, as an orphan, and
	// held it back for what it is.
	for _, c := range []*controller{oursShared, theirsShared} {
		if n := c.metric(ctx, t, "network_controller_orphans_held_back_total", map[string]string{"reason": "not-this-cluster"}); n < 1 {
			t.Errorf("a controller named %s never looked at the other cluster's network (%v held back)", name, n)
		}
	}
}

// TestAPartialAdoptionDeletedWithOrphanKeepsTheSubnet: adoption marks the
// subnet, then the network; a fault proxy fails the network's update
// every time, so the adoption stays half done. The Network is then deleted
// with deletionPolicy Orphan: the subnet comes back under its own name and
// description, and no later list of Neutron collects it.
func TestAPartialAdoptionDeletedWithOrphanKeepsTheSubnet(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	proxy := faultProxy(t)
	// Each refused mark is a write whose outcome is unknown (a 500): the
	// Network's next write, and its delete, wait for a list begun
	// 2 × --neutron-timeout after it. A short timeout keeps that wait
	// within the test's minute.
	c := startController(t, ns, "--neutron-endpoint="+proxy.URL, "--adoption-namespaces="+ns,
		"--max-retry-delay=2s", "--neutron-resync-period=1s", "--neutron-timeout=3s")
	cleanupNetworks(t, ns)

	net, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{Name: "by-hand", Description: "made by a person"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	gateway := "10.68.0.1"
	sub, err := subnets.Create(ctx, stack.Neutron.Client, subnets.CreateOpts{NetworkID: net.ID, Name: "by-hand-subnet", Description: "by hand",
		CIDR: "10.68.0.0/24", GatewayIP: &gateway, IPVersion: 4}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = subnets.Delete(context.Background(), stack.Neutron.Client, sub.ID).ExtractErr()
		_ = networks.Delete(context.Background(), stack.Neutron.Client, net.ID).ExtractErr()
	})
	proxy.Refuse("PUT", "/v2.0/networks/"+net.ID, 1<<30, 500, "")

	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "half"},
		Spec:       samplecrdv1.NetworkSpec{CIDR: "10.68.0.0/24", Gateway: gateway, Adopt: &samplecrdv1.Adoption{NetworkID: net.ID}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		s := neutronSubnet(ctx, t, sub.ID)
		_, marked := c.mark(t).OwnerOf(s.Name, s.Description)
		return marked, fmt.Sprintf("subnet %q / %q", s.Name, s.Description), nil
	})
	if got := neutronSubnet(ctx, t, sub.ID); got.Name == "by-hand-subnet" {
		t.Fatal("the subnet was not marked")
	}

	patch(ctx, t, ns, "half", `{"spec":{"deletionPolicy":"Orphan"}}`)
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "half", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "half", time.Minute)
	c.waitForLists(ctx, t, 3) // enough for a collection, were the subnet still marked

	s := neutronSubnet(ctx, t, sub.ID)
	if s.Name != "by-hand-subnet" || s.Description != "by hand" {
		t.Errorf("the released subnet is %q / %q, want it under its own name and description", s.Name, s.Description)
	}
	if got, err := networks.Get(ctx, stack.Neutron.Client, net.ID).Extract(); err != nil || got.Name != "by-hand" || got.Description != "made by a person" {
		t.Errorf("the network is %+v (%v), want it as it was made", got, err)
	}
}

// TestAReCreatedNetworkWaitsForTheGracePeriodAndALiveRead: a Network is
// deleted with its finalizer removed by hand while the controller is down,
// and created again under the same name, as a restore from backup does: a
// new UID. The controller makes new Neutron resources for it; the old
// ones are orphans. With a grace period of an hour they survive list after
// list; a controller with a short one collects them, after the API server
// confirmed that no Network has their UID, and leaves the new ones.
func TestAReCreatedNetworkWaitsForTheGracePeriodAndALiveRead(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	fast := "--neutron-resync-period=1s"
	c := startController(t, ns, "--orphan-grace-period=1h", fast)
	createNetwork(ctx, t, ns, "net", "10.69.0.0/24", "10.69.0.1")
	old := waitForReady(ctx, t, ns, "net", time.Minute)
	if err := c.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	patch(ctx, t, ns, "net", `{"metadata":{"finalizers":null}}`)
	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "net", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForGone(ctx, t, ns, "net", time.Minute)
	createNetwork(ctx, t, ns, "net", "10.69.0.0/24", "10.69.0.1")

	patient := startController(t, ns, "--orphan-grace-period=1h", fast)
	restored := waitForReady(ctx, t, ns, "net", time.Minute)
	if restored.UID == old.UID || restored.Status.NetworkID == old.Status.NetworkID {
		t.Fatalf("the re-created Network has uid %s and network %s, as the old one", restored.UID, restored.Status.NetworkID)
	}
	patient.waitForLists(ctx, t, 3)
	if !neutronNetworkExists(ctx, t, old.Status.NetworkID) {
		t.Fatal("the old Network's network was collected within the grace period")
	}
	if err := patient.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	prompt := startController(t, ns, "--orphan-grace-period=2s", fast)
	cleanupNetworks(t, ns) // before prompt stops: cleanups run last-in, first-out
	prompt.waitReady(ctx, t)
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		n := prompt.metric(ctx, t, "network_controller_orphans_collected_total", map[string]string{"resource": "network"})
		return n == 1, fmt.Sprintf("%v networks collected", n), nil
	})
	if neutronNetworkExists(ctx, t, old.Status.NetworkID) {
		t.Error("the old Network's network was counted as collected but is still there")
	}
	if !neutronNetworkExists(ctx, t, restored.Status.NetworkID) {
		t.Error("the re-created Network's own network was collected")
	}
}

// TestFixedCredentialsAreUsedWithoutARestart: the controller's clouds.yaml
// is a Secret volume, written as the kubelet writes one, with a wrong
// password. A new Network says AuthenticationFailed, once (one Warning,
// however many attempts). The Secret is fixed: the kubelet swaps the file
// by a symlink, and the same process authenticates and makes the Network
// Ready.
func TestFixedCredentialsAreUsedWithoutARestart(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	volume := filepath.Join(stack.Dir, ns+"-cloud-secret")
	writeCloud := func(password string) {
		t.Helper()
		data, err := stack.Keystone.PasswordCloudsYAML(password)
		if err != nil {
			t.Fatal(err)
		}
		if err := framework.WriteSecretVolume(volume, map[string][]byte{"clouds.yaml": data}); err != nil {
			t.Fatal(err)
		}
	}
	writeCloud("not-the-password")
	c := startControllerWithEnv(t, ns, []string{"OS_CLIENT_CONFIG_FILE=" + filepath.Join(volume, "clouds.yaml")},
		"--neutron-endpoint=", "--os-cloud="+framework.PasswordCloud, "--cloud-reload-interval=1s", "--max-retry-delay=2s")
	cleanupNetworks(t, ns)

	createNetwork(ctx, t, ns, "net", "10.70.0.0/24", "10.70.0.1")
	waitForCondition(ctx, t, ns, "net", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonAuthenticationFailed)
	failures := func() float64 { return c.metric(ctx, t, "network_controller_neutron_auth_failures_total", nil) }
	before := failures()
	framework.Eventually(ctx, t, time.Minute, func(context.Context) (bool, string, error) {
		return failures() >= before+2, fmt.Sprintf("%v failed attempts", failures()), nil
	})
	warnings := warningsFor(ctx, t, ns, "net", samplecrdv1.ReasonAuthenticationFailed)
	if len(warnings) != 1 || warnings[0].Count > 1 {
		t.Errorf("Warning events %+v, want one, once, however many attempts", warnings)
	}

	writeCloud(stack.Keystone.Password)
	waitForReady(ctx, t, ns, "net", time.Minute)
	c.waitReady(ctx, t)
	if c.Exited() {
		t.Error("the controller exited; fixed credentials must be picked up by the running process")
	}
	if n := failures(); n < before {
		t.Errorf("the failure count went down from %v to %v: the process was restarted", before, n)
	}
}

// warningsFor lists the Warning Events of reason on Network ns/name.
func warningsFor(ctx context.Context, t *testing.T, ns, name, reason string) []corev1.Event {
	t.Helper()
	list, err := kubeClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.name": name, "type": corev1.EventTypeWarning, "reason": reason}.String()})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestAnOutageNamesNoOtherNamespacesNetwork: one controller manages two
// namespaces (of a cluster of the test's own, so it may watch them all).
// Neutron fails the create of team-a's Network and every list, so the
// breaker opens (on failures in a row) and stays open. team-b's new Network
// is refused by the breaker: its condition and Events say Neutron is down,
// and nothing of team-a's. The Network team-b had before stays Ready.
func TestAnOutageNamesNoOtherNamespacesNetwork(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	other := startOtherCluster(ctx, t)
	teamA, teamB := "team-a", "team-b"
	other.namespace(ctx, t, teamA)
	other.namespace(ctx, t, teamB)
	proxy := faultProxy(t)
	// A short --neutron-timeout: the list that shows what became of the
	// refused create comes two timeouts later, and only then do three
	// requests in a row fail.
	c := startControllerOn(t, other.cp, teamA, nil, "--namespace=", "--neutron-endpoint="+proxy.URL, "--max-retry-delay=2s", "--neutron-timeout=5s")
	cleanupNetworksIn(t, other.nc, teamA)
	cleanupNetworksIn(t, other.nc, teamB)

	before := createIn(ctx, t, other.nc, teamB, "before", "10.71.0.0/24")
	proxy.Refuse("POST", "/v2.0/networks", 1<<30, 500, "")
	proxy.Refuse("GET", "/v2.0/networks", 1<<30, 500, "")
	if _, err := other.nc.SamplecrdV1().Networks(teamA).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-project"}, Spec: samplecrdv1.NetworkSpec{CIDR: "10.71.1.0/24"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := waitForConditionIn(ctx, t, other.nc, teamA, "secret-project", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNeutronUnavailable)
	// The lists keep failing too: the breaker opens on failures in a row.
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		return c.metric(ctx, t, "network_controller_neutron_breaker_open", nil) == 1, "the breaker is not open yet", nil
	})

	if _, err := other.nc.SamplecrdV1().Networks(teamB).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "new"}, Spec: samplecrdv1.NetworkSpec{CIDR: "10.71.2.0/24"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused := waitForConditionIn(ctx, t, other.nc, teamB, "new", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNeutronUnavailable)
	leaks := func(text string) bool {
		return strings.Contains(text, teamA) || strings.Contains(text, "secret-project") || strings.Contains(text, string(secret.UID))
	}
	if msg := readyCondition(refused).Message; leaks(msg) || !strings.Contains(msg, "Neutron is not answering") {
		t.Errorf("team-b's Network says %q: want the breaker's refusal, naming nothing of team-a", msg)
	}
	kc, err := kubernetes.NewForConfig(other.cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	events, err := kc.CoreV1().Events(teamB).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if leaks(e.Message) {
			t.Errorf("team-b's Event %s %q names team-a's Network", e.Reason, e.Message)
		}
	}
	if n, err := other.nc.SamplecrdV1().Networks(teamB).Get(ctx, before.Name, metav1.GetOptions{}); err != nil || readyCondition(n).Status != metav1.ConditionTrue {
		t.Errorf("team-b's in-sync Network is %+v (%v) during the outage, want Ready", n.Status.Conditions, err)
	}

	proxy.ClearRefusals()
	for _, key := range []types.NamespacedName{{Namespace: teamA, Name: "secret-project"}, {Namespace: teamB, Name: "new"}} {
		waitForConditionIn(ctx, t, other.nc, key.Namespace, key.Name, time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
	}
}

// TestAnAdminCredentialTouchesOnlyItsProject: the controller is given the
// cloud admin's credential, which lists every project's networks. In
// another project lies a network with this cluster's mark, named for a
// Network that does not exist: an orphan in every respect but its project.
// The controller lists only its token's project, makes its own Network
// Ready there, and never collects the other.
func TestAnAdminCredentialTouchesOnlyItsProject(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	admin, err := stack.Keystone.AdminCloudsYAML()
	if err != nil {
		t.Fatal(err)
	}
	cloudsYAML := filepath.Join(stack.Dir, ns+"-admin-clouds.yaml")
	if err := os.WriteFile(cloudsYAML, admin, 0o600); err != nil {
		t.Fatal(err)
	}
	c := withCloud(t, ns, cloudsYAML, framework.AdminCloud, "--neutron-resync-period=1s")
	cleanupNetworks(t, ns)

	// The noauth server works in a project of its own, not Keystone's admin one.
	lookAlike := c.mark(t).ResourceName(neutron.Owner{Namespace: ns, Name: "gone", UID: uuid.NewUUID()})
	elsewhere, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{Name: lookAlike, Description: c.mark(t).Description()}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = networks.Delete(context.Background(), stack.Neutron.Client, elsewhere.ID).ExtractErr() })

	createNetwork(ctx, t, ns, "net", "10.72.0.0/24", "10.72.0.1")
	ours := waitForReady(ctx, t, ns, "net", time.Minute)
	mine, err := networks.Get(ctx, stack.Neutron.Client, ours.Status.NetworkID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if mine.ProjectID == elsewhere.ProjectID {
		t.Fatalf("both networks are in project %s: the test needs two", mine.ProjectID)
	}
	c.waitForLists(ctx, t, 3)
	if !neutronNetworkExists(ctx, t, elsewhere.ID) {
		t.Errorf("the look-alike in project %s was collected by a controller of project %s", elsewhere.ProjectID, mine.ProjectID)
	}
}

// TestARestartDuringAnOutageLeavesReadyNetworksAlone: a controller starts
// (or becomes the leader) while every list of Neutron fails. The Network
// that was Ready before stays Ready, untouched (the same resourceVersion),
// list after failed list; once Neutron answers, nothing changes either.
func TestARestartDuringAnOutageLeavesReadyNetworksAlone(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	proxy := faultProxy(t)
	// The first controller lists Neutron often, so that the list that
	// brings the address counts comes soon after Ready.
	first := startController(t, ns, "--neutron-endpoint="+proxy.URL, "--neutron-resync-period=2s")
	createNetwork(ctx, t, ns, "net", "10.73.0.0/24", "10.73.0.1")
	waitForReady(ctx, t, ns, "net", time.Minute)
	// Ready is not yet the steady state: the first list after it brings
	// the subnet's address counts (status.subnets[].usedIPs and freeIPs),
	// a status write. Were the first controller stopped before it, the
	// second would write them after the outage, rightly.
	before := waitForAddressCounts(ctx, t, ns, "net")
	if err := first.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	proxy.Refuse("GET", "/v2.0/networks", 1<<30, 503, "")
	c := startController(t, ns, "--neutron-endpoint="+proxy.URL)
	cleanupNetworks(t, ns) // before c stops: cleanups run last-in, first-out
	c.waitServing(ctx, t)
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		n := c.metric(ctx, t, "network_controller_neutron_refreshes_total", map[string]string{"result": "error"})
		return n >= 3, fmt.Sprintf("%v failed lists of Neutron", n), nil
	})
	during, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "net", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if during.ResourceVersion != before.ResourceVersion {
		t.Errorf("the Ready Network was written during the outage: %+v", readyCondition(during))
	}

	proxy.ClearRefusals()
	c.waitReady(ctx, t)
	after := waitForReady(ctx, t, ns, "net", time.Minute)
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the Network was written after the outage, though nothing changed: %+v", readyCondition(after))
	}
}
