package framework

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// The helpers of the test packages that run on a stack (test/e2e,
// test/e2enode): one TestMain, and the few things every test does.

// Main starts a stack with opts for the test package name, runs prepare
// on it (build binaries, deploy), then the tests, and stops the stack, also
// on SIGINT or SIGTERM (Ctrl-C, go test's own timeout); a killed run relies
// on the daemons' parent-death signal. The component logs are printed when
// a test failed. It returns the exit code.
func Main(m *testing.M, name string, opts Options, timeout time.Duration, prepare func(ctx context.Context, s *Stack) error) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	s, err := Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		s.Stop()
		os.Exit(1)
	}()
	defer s.Stop()
	fmt.Printf("%s: stack up in %s (%s)\n", name, time.Since(start).Round(time.Millisecond), s.Dir)

	start = time.Now()
	if err := prepare(ctx, s); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n%s", name, err, s.Logs())
		return 1
	}
	fmt.Printf("%s: prepared in %s\n", name, time.Since(start).Round(time.Millisecond))

	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "%s: failed; component logs follow\n%s", name, s.Logs())
	}
	return code
}

// TestContext is a context that ends with the test or after timeout.
func TestContext(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// Eventually polls condition every 200ms until it returns true or timeout
// passes; the test fails with the last message condition gave.
func Eventually(ctx context.Context, t testing.TB, timeout time.Duration, condition func(ctx context.Context) (done bool, msg string, err error)) {
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

// NewNamespace creates a namespace of the test's own, named after it, with
// labels.
func NewNamespace(ctx context.Context, t testing.TB, client kubernetes.Interface, labels map[string]string) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = fmt.Sprintf("%s-%d", strings.Trim(name, "-"), time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return name
}

// KubeClient is a clientset of the control plane, as its admin.
func (cp *ControlPlane) KubeClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NetworkClient is a samplecrd.k8s.io clientset of the control plane, as
// its admin.
func (cp *ControlPlane) NetworkClient(t testing.TB) clientset.Interface {
	t.Helper()
	c, err := clientset.NewForConfig(cp.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// OnePerNetwork reports whether Neutron's nets and subs are exactly one
// network and one subnet per Network of items, the ones their status names,
// and if not, what differs.
func OnePerNetwork(items []samplecrdv1.Network, nets []networks.Network, subs []subnets.Subnet) (bool, string) {
	if len(nets) != len(items) || len(subs) != len(items) {
		return false, fmt.Sprintf("%d networks and %d subnets in Neutron for %d Networks", len(nets), len(subs), len(items))
	}
	ids := map[string]bool{}
	for _, n := range nets {
		ids[n.ID] = true
	}
	for _, s := range subs {
		ids[s.ID] = true
	}
	for _, n := range items {
		if !ids[n.Status.NetworkID] || !ids[n.Status.SubnetID] {
			return false, fmt.Sprintf("%s: status names %s/%s, not in Neutron", n.Name, n.Status.NetworkID, n.Status.SubnetID)
		}
	}
	return true, ""
}
