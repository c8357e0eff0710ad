package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/test/framework"
)

// The controller of docs/learn/13-build-your-own.md, its final step, on
// the real API server: the chapter's CRD, RBAC and example as a learner
// applies them, and the controller as the ServiceAccount the RBAC binds,
// so that a rule missing from config/rbac.yaml fails here. It is a module
// of its own: built with go build, driven through the dynamic client.

// greetings is the Greeting resource of the chapter's CRD.
var greetings = schema.GroupVersionResource{Group: "tutorial.samplecrd.k8s.io", Version: "v1", Resource: "greetings"}

// TestBuildYourOwnGreetingController: the example Greeting becomes Ready
// with its ConfigMap; a hand edit of the ConfigMap is repaired; a deleted
// Greeting goes once the controller has released its finalizer.
func TestBuildYourOwnGreetingController(t *testing.T) {
	ctx := framework.TestContext(t, 5*time.Minute)
	chapter := filepath.Join(stack.RepoRoot, "docs", "learn", "build-your-own")
	admin := stack.ControlPlane.AdminConfig
	kube := stack.ControlPlane.KubeClient(t)

	if err := framework.InstallCRDs(ctx, admin, filepath.Join(chapter, "step-01", "config", "crd")); err != nil {
		t.Fatal(err)
	}
	applyRBAC(ctx, t, filepath.Join(chapter, "step-09", "config", "rbac.yaml"))
	config, err := stack.ControlPlane.ServiceAccountConfig(ctx, "greeting-system", "greeting-controller")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := framework.WriteKubeconfig(config, "greeting-controller", kubeconfig); err != nil {
		t.Fatal(err)
	}

	binary := filepath.Join(t.TempDir(), "greeting-controller")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Dir = filepath.Join(chapter, "step-09")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building step-09: %v\n%s", err, out)
	}
	p := &framework.Process{
		Name:    "greeting-controller",
		Path:    binary,
		Args:    []string{"--kubeconfig=" + kubeconfig, "-v=2"},
		Dir:     stack.Dir,
		LogPath: filepath.Join(stack.Dir, fmt.Sprintf("greeting-controller-%d.log", time.Now().UnixNano())),
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("greeting-controller log (tail):\n%s", p.Tail(6000))
		}
	})

	ns := framework.NewNamespace(ctx, t, kube, nil)
	data, err := os.ReadFile(filepath.Join(chapter, "step-01", "config", "example", "greeting.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	example := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &example.Object); err != nil {
		t.Fatal(err)
	}
	client := dynamic.NewForConfigOrDie(admin).Resource(greetings).Namespace(ns)
	if _, err := client.Create(ctx, example, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := example.GetName()
	message, _, _ := unstructured.NestedString(example.Object, "spec", "message")

	// Ready at the generation it has, and the ConfigMap holds the message.
	published := func(ctx context.Context) (bool, string, error) {
		g, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		observed, _, _ := unstructured.NestedInt64(g.Object, "status", "observedGeneration")
		conditions, _, _ := unstructured.NestedSlice(g.Object, "status", "conditions")
		ready := ""
		for _, c := range conditions {
			if c, ok := c.(map[string]any); ok && c["type"] == "Ready" {
				ready = fmt.Sprint(c["status"])
			}
		}
		if ready != "True" || observed != g.GetGeneration() {
			return false, fmt.Sprintf("Ready %q at observed generation %d of %d", ready, observed, g.GetGeneration()), nil
		}
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "Ready, but no ConfigMap", nil
		}
		if err != nil {
			return false, "", err
		}
		if cm.Data["message"] != message || !metav1.IsControlledBy(cm, g) {
			return false, fmt.Sprintf("ConfigMap holds %q, owners %v", cm.Data["message"], cm.OwnerReferences), nil
		}
		return true, "", nil
	}
	framework.Eventually(ctx, t, time.Minute, published)

	// A hand edit of the owned ConfigMap queues its Greeting (handleObject).
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["message"] = "edited by hand"
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, time.Minute, published)

	// Deleted: the finalizer holds it until the controller releases it.
	if err := client.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		g, err := client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return false, fmt.Sprintf("still there, finalizers %v", g.GetFinalizers()), nil
	})
}

// applyRBAC creates (or updates) the ClusterRole and ClusterRoleBinding of
// path, a two-document YAML file.
func applyRBAC(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(data, []byte("\n---\n"))
	if len(docs) != 2 {
		t.Fatalf("%s: %d documents, want a ClusterRole and a ClusterRoleBinding", path, len(docs))
	}
	role, binding := &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}
	if err := yaml.UnmarshalStrict(docs[0], role); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(docs[1], binding); err != nil {
		t.Fatal(err)
	}
	rbac := stack.ControlPlane.KubeClient(t).RbacV1()
	_ = rbac.ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
	_ = rbac.ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
