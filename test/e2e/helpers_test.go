package e2e

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/samplecrd/network-controller/test/framework"
)

var networksResource = schema.GroupVersionResource{Group: "samplecrd.k8s.io", Version: "v1", Resource: "networks"}

// newNamespace creates a namespace of its own for the test, named after it.
func newNamespace(ctx context.Context, t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(ctx, t, kubeClient(t), nil)
}

func kubeClient(t *testing.T) kubernetes.Interface { return stack.ControlPlane.KubeClient(t) }

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(stack.ControlPlane.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func httpRequest(ctx context.Context, url string) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
}

// stopNeutronServer stops the neutron-server behind Keystone, the
// controllers' way in, for an outage and returns what starts it again. If
// the test ends first, a cleanup starts it — before the test's own earlier
// cleanups, which need Neutron to delete Networks.
func stopNeutronServer(t *testing.T) (start func(context.Context) error) {
	t.Helper()
	if err := stack.Neutron.StopKeystoneServer(); err != nil {
		t.Fatal(err)
	}
	started := false
	t.Cleanup(func() {
		if !started {
			_ = stack.Neutron.StartKeystoneServer(context.Background())
		}
	})
	return func(ctx context.Context) error {
		started = true
		return stack.Neutron.StartKeystoneServer(ctx)
	}
}

// freezeNeutronServer freezes the neutron-server behind Keystone, the
// controllers' way in (SIGSTOP), and returns what thaws it; a cleanup
// thaws it if the test ends first.
func freezeNeutronServer(t *testing.T) (thaw func()) {
	t.Helper()
	server := stack.Neutron.KeystoneServer
	if err := server.Freeze(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			if err := server.Thaw(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}
