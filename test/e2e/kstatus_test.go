package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestKstatusTellsInProgressFromStalled reads real Networks with kstatus,
// the library Flux's health checks and kpt use, and no rule of our own: a
// Network in sync is Current, one Neutron cannot be reached for is
// InProgress (the controller gets past it by itself), and one whose spec
// Neutron would refuse is Failed (someone must change it). kstatus comes
// from Flux's maintained fork, github.com/fluxcd/cli-utils, with the same
// Compute: sigs.k8s.io/cli-utils lags Kubernetes and put controller-runtime
// v0.18, kubectl and kustomize of Kubernetes 1.30 into go.mod.
func TestKstatusTellsInProgressFromStalled(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns, cutOff := newNamespace(ctx, t), newNamespace(ctx, t)
	startController(t, ns)
	startController(t, cutOff, "--neutron-endpoint=http://127.0.0.1:9/") // discard: nothing answers
	cleanupNetworks(t, ns)
	cleanupNetworks(t, cutOff)

	createNetwork(ctx, t, ns, "in-sync", "10.81.0.0/24", "10.81.0.1")
	_, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "gateway-in-its-pool"},
		Spec: samplecrdv1.NetworkSpec{CIDR: "10.81.1.0/24", Gateway: "10.81.1.1",
			AllocationPools: []samplecrdv1.AllocationPool{{Start: "10.81.1.1", End: "10.81.1.10"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createNetwork(ctx, t, cutOff, "unreachable", "10.81.2.0/24", "10.81.2.1")

	for _, want := range []struct {
		ns, name string
		status   status.Status
	}{
		{ns, "in-sync", status.CurrentStatus},
		{ns, "gateway-in-its-pool", status.FailedStatus},
		{cutOff, "unreachable", status.InProgressStatus},
	} {
		framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
			got, err := kstatusOf(ctx, t, want.ns, want.name)
			if err != nil {
				return false, "", err
			}
			return got.Status == want.status, fmt.Sprintf("%s/%s: kstatus %s (%s), want %s", want.ns, want.name, got.Status, got.Message, want.status), nil
		})
	}
}

// kstatusOf is what kstatus computes for the Network ns/name as the API
// server holds it now.
func kstatusOf(ctx context.Context, t *testing.T, ns, name string) (*status.Result, error) {
	n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	n.SetGroupVersionKind(samplecrdv1.SchemeGroupVersion.WithKind("Network"))
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
	if err != nil {
		return nil, err
	}
	return status.Compute(&unstructured.Unstructured{Object: obj})
}
