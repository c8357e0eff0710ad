package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/test/framework"
)

// Tenancy (issue 25): one controller, two namespaces, each with a Secret
// of its own that names a Keystone project of its own.

// credentialsSecret makes Secret name in ns of the cluster of kc, holding
// cloudsYAML as the controller reads it.
func credentialsSecret(ctx context.Context, t *testing.T, kc kubernetes.Interface, ns, name string, cloudsYAML []byte) {
	t.Helper()
	if _, err := kc.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string][]byte{samplecrdv1.CloudsYAMLKey: cloudsYAML}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Secret %s/%s: %v", ns, name, err)
	}
}

// cloudsYAMLOf reads tenant's clouds.yaml; with password, its cloud's
// password is replaced by it.
func cloudsYAMLOf(t *testing.T, tenant *framework.Tenant, password string) []byte {
	t.Helper()
	raw, err := os.ReadFile(tenant.CloudsYAML)
	if err != nil {
		t.Fatal(err)
	}
	if password == "" {
		return raw
	}
	var file struct {
		Clouds map[string]map[string]any `json:"clouds"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	file.Clouds[tenant.Cloud]["auth"].(map[string]any)["password"] = password
	out, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// createWithCredentials creates Network ns/name of cidr that names the
// cloud of Secret secretName.
func createWithCredentials(ctx context.Context, t *testing.T, nc clientset.Interface, ns, name, cidr, secretName, cloud string) {
	t.Helper()
	n := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: samplecrdv1.NetworkSpec{CIDR: cidr}}
	if secretName != "" {
		n.Spec.CloudCredentialsRef = &samplecrdv1.CloudCredentialsReference{SecretName: secretName, CloudName: cloud}
	}
	if _, err := nc.SamplecrdV1().Networks(ns).Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Network %s/%s: %v", ns, name, err)
	}
}

// inProject checks that Neutron holds n's network in project, and that
// n's status says so.
func inProject(ctx context.Context, t *testing.T, n *samplecrdv1.Network, project string) {
	t.Helper()
	got, err := networks.Get(ctx, stack.Neutron.Client, n.Status.NetworkID).Extract()
	if err != nil {
		t.Fatalf("reading %s/%s's network: %v", n.Namespace, n.Name, err)
	}
	if got.ProjectID != project || n.Status.ProjectID != project {
		t.Errorf("%s/%s: Neutron holds its network in project %q and status says %q; want %q", n.Namespace, n.Name, got.ProjectID, n.Status.ProjectID, project)
	}
}

// TestEachNamespaceInItsOwnProject: one controller, run with its own
// cloud, manages two namespaces of a cluster of the test's own. Each
// namespace names its own Keystone project in a Secret of its own; a
// Network that names none is made in the controller's project.
//   - Each namespace's Networks land in its project, and count against its
//     quota only: team-a's quota of one refuses its second Network, while
//     team-b's second is Ready.
//   - A wrong password in one of team-b's Secrets fails only the Network
//     that names it (AuthenticationFailed); team-a and team-b go on.
//   - A Network cannot use a Secret of another namespace: team-b's Network
//     that names team-a's Secret is told that team-b has none by that name.
//   - A Secret changed to another project's credentials changes nothing:
//     its Network says so, and gets no second network there.
//   - A Network whose Secret went, once the controller has read that it
//     went, is still deleted from its project.
func TestEachNamespaceInItsOwnProject(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	other := startOtherCluster(ctx, t)
	kc, err := kubernetes.NewForConfig(other.cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	teamA, teamB := "team-a", "team-b"
	other.namespace(ctx, t, teamA)
	other.namespace(ctx, t, teamB)
	projectA, projectB := newTenant(ctx, t, "tenancy-a", ""), newTenant(ctx, t, "tenancy-b", "")
	setNetworkQuota(ctx, t, projectA.ProjectID, 1)
	credentialsSecret(ctx, t, kc, teamA, "cloud", cloudsYAMLOf(t, projectA, ""))
	credentialsSecret(ctx, t, kc, teamB, "cloud", cloudsYAMLOf(t, projectB, ""))
	credentialsSecret(ctx, t, kc, teamB, "wrong", cloudsYAMLOf(t, projectB, "not-the-password"))
	credentialsSecret(ctx, t, kc, teamA, "only-in-a", cloudsYAMLOf(t, projectA, ""))

	startControllerOn(t, other.cp, teamA, []string{"OS_CLIENT_CONFIG_FILE=" + stack.Keystone.CloudsYAML},
		"--namespace=", "--neutron-endpoint=", "--os-cloud="+framework.PasswordCloud, "--max-retry-delay=3s",
		// Secrets read again after a second, not ten: the last subtest
		// needs the controller to have seen its Secret go.
		"--cloud-reload-interval=1s",
		// Secrets are not watched: a changed one is seen at a Network's
		// next sync, here within seconds.
		"--resync-period=3s")
	cleanupNetworksIn(t, other.nc, teamA)
	cleanupNetworksIn(t, other.nc, teamB)

	createWithCredentials(ctx, t, other.nc, teamA, "a", "10.74.0.0/24", "cloud", projectA.Cloud)
	createWithCredentials(ctx, t, other.nc, teamB, "b", "10.74.1.0/24", "cloud", projectB.Cloud)
	createWithCredentials(ctx, t, other.nc, teamA, "own", "10.74.2.0/24", "", "")
	a := waitForConditionIn(ctx, t, other.nc, teamA, "a", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
	b := waitForConditionIn(ctx, t, other.nc, teamB, "b", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
	own := waitForConditionIn(ctx, t, other.nc, teamA, "own", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
	inProject(ctx, t, a, projectA.ProjectID)
	inProject(ctx, t, b, projectB.ProjectID)
	inProject(ctx, t, own, stack.Keystone.ProjectID)

	t.Run("each project's quota counts its own Networks", func(t *testing.T) {
		createWithCredentials(ctx, t, other.nc, teamA, "a2", "10.74.3.0/24", "cloud", projectA.Cloud)
		createWithCredentials(ctx, t, other.nc, teamB, "b2", "10.74.4.0/24", "cloud", projectB.Cloud)
		waitForConditionIn(ctx, t, other.nc, teamA, "a2", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNeutronQuotaExceeded)
		inProject(ctx, t, waitForConditionIn(ctx, t, other.nc, teamB, "b2", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned), projectB.ProjectID)
	})

	t.Run("a wrong password fails only the Networks that name it", func(t *testing.T) {
		createWithCredentials(ctx, t, other.nc, teamB, "wrong", "10.74.5.0/24", "wrong", projectB.Cloud)
		createWithCredentials(ctx, t, other.nc, teamA, "a-after", "10.74.6.0/24", "", "")
		waitForConditionIn(ctx, t, other.nc, teamB, "wrong", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonAuthenticationFailed)
		waitForConditionIn(ctx, t, other.nc, teamA, "a-after", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
		if n := waitForConditionIn(ctx, t, other.nc, teamB, "b", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned); n.Status.NetworkID != b.Status.NetworkID {
			t.Errorf("b's network went from %s to %s", b.Status.NetworkID, n.Status.NetworkID)
		}
	})

	t.Run("a Network cannot use another namespace's Secret", func(t *testing.T) {
		createWithCredentials(ctx, t, other.nc, teamB, "borrowed", "10.74.7.0/24", "only-in-a", projectA.Cloud)
		n := waitForConditionIn(ctx, t, other.nc, teamB, "borrowed", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonCredentialsUnavailable)
		if msg := readyCondition(n).Message; !strings.Contains(msg, "Secret team-b/only-in-a does not exist") {
			t.Errorf("the message %q does not say that team-b has no such Secret", msg)
		}
		if n.Status.NetworkID != "" || len(n.Finalizers) != 0 {
			t.Errorf("a Network without usable credentials has network %q and finalizers %v", n.Status.NetworkID, n.Finalizers)
		}
	})

	t.Run("a Secret turned to another project's credentials changes nothing", func(t *testing.T) {
		setCloudsYAML := func(cloudsYAML []byte) {
			t.Helper()
			s, err := kc.CoreV1().Secrets(teamB).Get(ctx, "cloud", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s.Data[samplecrdv1.CloudsYAMLKey] = cloudsYAML
			if _, err := kc.CoreV1().Secrets(teamB).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Project A's credentials under the cloud name b's spec names.
		var file struct {
			Clouds map[string]any `json:"clouds"`
		}
		if err := yaml.Unmarshal(cloudsYAMLOf(t, projectA, ""), &file); err != nil {
			t.Fatal(err)
		}
		file.Clouds = map[string]any{projectB.Cloud: file.Clouds[projectA.Cloud]}
		aAsB, err := yaml.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		setCloudsYAML(aAsB)
		n := waitForConditionIn(ctx, t, other.nc, teamB, "b", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonCredentialsUnavailable)
		if msg := readyCondition(n).Message; !strings.Contains(msg, projectA.ProjectID) || !strings.Contains(msg, projectB.ProjectID) {
			t.Errorf("the message %q does not name both projects", msg)
		}
		inProject(ctx, t, n, projectB.ProjectID)
		page, err := networks.List(stack.Neutron.Client, networks.ListOpts{ProjectID: projectA.ProjectID}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inA, err := networks.ExtractNetworks(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, net := range inA {
			if strings.Contains(net.Name, string(b.UID)) {
				t.Errorf("b got a second network, %s, in project A", net.ID)
			}
		}
		setCloudsYAML(cloudsYAMLOf(t, projectB, ""))
		if n := waitForConditionIn(ctx, t, other.nc, teamB, "b", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned); n.Status.NetworkID != b.Status.NetworkID {
			t.Errorf("b's network went from %s to %s", b.Status.NetworkID, n.Status.NetworkID)
		}
	})

	t.Run("a Network whose Secret went is still deleted from its project", func(t *testing.T) {
		if err := kc.CoreV1().Secrets(teamA).Delete(ctx, "cloud", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// a2, over quota, is retried: once it says its Secret is gone, the
		// controller has read that, and a's delete cannot be served from
		// the reading before.
		waitForConditionIn(ctx, t, other.nc, teamA, "a2", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonCredentialsUnavailable)
		if err := other.nc.SamplecrdV1().Networks(teamA).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
			_, err := networks.Get(ctx, stack.Neutron.Client, a.Status.NetworkID).Extract()
			return err != nil && strings.Contains(err.Error(), "404"), "a's network is still in project A", nil
		})
	})
}
