package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

var networksResource = schema.GroupVersionResource{Group: "samplecrd.k8s.io", Version: "v1", Resource: "networks"}

// testContext is a context that ends with the test or after timeout.
func testContext(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace of its own for the test, named after it.
func newNamespace(ctx context.Context, t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = fmt.Sprintf("%s-%d", strings.Trim(name, "-"), time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kubeClient(t).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return name
}

func kubeClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(stack.ControlPlane.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(stack.ControlPlane.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls condition every 200ms until it returns true or timeout
// passes; the test fails with the last message condition gave.
func eventually(ctx context.Context, t *testing.T, timeout time.Duration, condition func(ctx context.Context) (done bool, msg string, err error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		done, msg, err := condition(ctx)
		last = msg
		return done, err
	})
	if err != nil {
		t.Fatalf("not true within %s: %s (%v)", timeout, last, err)
	}
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
