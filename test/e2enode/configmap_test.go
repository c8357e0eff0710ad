package e2enode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestAPodReadsItsNetworkThroughEnvFrom: a Network publishes into a
// ConfigMap it owns; a Pod that has no right on Networks gets the values
// as environment variables through envFrom, as the kubelet resolves them
// (read in /proc on the node, from the container's process); deleting the
// Network has kube-controller-manager's garbage collector delete the
// ConfigMap through its ownerReference.
func TestAPodReadsItsNetworkThroughEnvFrom(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t, nil)
	networks := networkClient(t).SamplecrdV1().Networks(ns)
	if _, err := networks.Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: samplecrdv1.NetworkSpec{CIDR: "10.95.0.0/24", Gateway: "10.95.0.1",
			WriteConfigMapToRef: &samplecrdv1.ConfigMapReference{Name: "app-network"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := waitAllReady(ctx, t, ns, 1, 2*time.Minute)[0]

	kube := kubeClient(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "consumer"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "consumer", Image: framework.PauseImage, ImagePullPolicy: corev1.PullNever,
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "app-network"}}}},
		}}},
	}
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := waitPodsReady(ctx, t, ns, "", 1, true, 2*time.Minute)[0]
	pid, err := stack.Node.ContainerPID(ctx, running.Status.ContainerStatuses[0].ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		samplecrdv1.ConfigMapKeyNetworkID: n.Status.NetworkID,
		samplecrdv1.ConfigMapKeySubnetID:  n.Status.SubnetID,
		samplecrdv1.ConfigMapKeyCIDR:      "10.95.0.0/24",
		samplecrdv1.ConfigMapKeyGateway:   "10.95.0.1",
	} {
		if !bytes.Contains(environ, []byte("\x00"+key+"="+want+"\x00")) && !bytes.HasPrefix(environ, []byte(key+"="+want+"\x00")) {
			t.Errorf("the Pod's process has no %s=%s in its environment: %q", key, want, environ)
		}
	}

	if err := networks.Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "app-network", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the ConfigMap after its Network's deletion: %v", err), nil
	})
}
