package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/component/serving"
	"github.com/samplecrd/network-controller/pkg/injector"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestTheSidecarPassesTheRestrictedLevel: in a namespace that enforces
// the restricted Pod Security level, a Pod that meets it and asks for
// the sidecar is admitted by the API server's own PodSecurity admission
// (which runs after the mutating webhooks) with the sidecar of
// artifacts/injector/envoy-initializer.yaml in it. The same Pod with the
// template less the sidecar's securityContext is refused there first, so
// the check is the API server's and not a formality.
func TestTheSidecarPassesTheRestrictedLevel(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	// First the design documents' template without the sidecar's
	// securityContext.
	var config map[string]any
	if err := yaml.Unmarshal([]byte(designConfig(t)), &config); err != nil {
		t.Fatal(err)
	}
	delete(config["containers"].([]any)[0].(map[string]any), "securityContext")
	bare, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	f := newInjectorFixture(ctx, t, string(bare))
	ns, err := f.kube.CoreV1().Namespaces().Get(ctx, f.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := f.kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	restricted := func() *corev1.Pod {
		p := f.pod(nil)
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		return p
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

	// The API server enforces the level (once its namespace cache has the
	// label), and the sidecar without its securityContext fails it.
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		_, err := f.kube.CoreV1().Pods(f.ns).Create(ctx, restricted(), dryRun)
		refused := err != nil && strings.Contains(err.Error(), "violates PodSecurity") && strings.Contains(err.Error(), `container "envoy"`)
		return refused, fmt.Sprintf("a restricted Pod with a sidecar that has no securityContext: %v; want refused by PodSecurity for the envoy container", err), nil
	})

	// With the template as shipped, the same Pod is admitted, injected.
	f.cm.Data[injector.ConfigKey] = designConfig(t)
	if f.cm, err = f.kube.CoreV1().ConfigMaps(f.ns).Update(ctx, f.cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		p, err := f.kube.CoreV1().Pods(f.ns).Create(ctx, restricted(), dryRun)
		if err != nil {
			return false, fmt.Sprintf("a restricted Pod that asks for the sidecar was refused: %v", err), nil
		}
		if len(p.Spec.Containers) != 2 || p.Spec.Containers[1].Name != "envoy" || p.Spec.Containers[1].SecurityContext == nil {
			return false, fmt.Sprintf("containers %v: want web, then the injected envoy with its securityContext", p.Spec.Containers), nil
		}
		_, ok := injector.ReadStatus(p.Annotations)
		return ok, fmt.Sprintf("the Pod was admitted without the injector's status: %v", p.Annotations), nil
	})
}

// TestStalledClientsStayWithinTheBudget: 200 clients each open a TLS
// connection to the webhook, announce a body of 3 MiB, send 384 KiB of it
// and stall, from the test's address, which is the API server's too. The
// webhook holds no more of them than one source may hold
// (serving.WaitingPerSource): each one past that takes the place of the
// idlest, which is cut. Its envoy_injector_held_bytes reaches what those
// it holds sent, and the API server's reviews are answered meanwhile.
// 100 more, each from an address of its own, that would send 200 MiB
// beyond the budget are refused once it is spent; what is held stays
// within the budget, and the peak RSS within the chart's memory limit
// (the budget and the program's own 96 MiB, with GOMEMLIMIT as the
// Deployment sets it). When they all go away, every byte is given back.
func TestStalledClientsStayWithinTheBudget(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	f := newInjectorFixture(ctx, t, podTemplate)
	budget := f.metric(ctx, t, "envoy_injector_memory_budget_bytes", nil)
	if budget <= 0 {
		t.Fatalf("envoy_injector_memory_budget_bytes = %v", budget)
	}
	const clients, sent = 200, 384 << 10
	part := strings.Repeat(" ", sent)
	var conns []*tls.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	for i := range clients {
		dialer := &tls.Dialer{Config: webhookTLS(f)}
		c, err := dialer.DialContext(ctx, "tcp", f.addr)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		conn := c.(*tls.Conn)
		conns = append(conns, conn)
		_ = conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
		if _, err := fmt.Fprintf(conn, "POST /mutate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			f.addr, injector.MaxRequestBytes, part); err != nil {
			t.Fatalf("client %d: the webhook did not take its %d bytes: %v", i, sent, err)
		}
	}
	framework.Eventually(ctx, t, 20*time.Second, func(ctx context.Context) (bool, string, error) {
		held := f.metric(ctx, t, "envoy_injector_held_bytes", nil)
		return held >= serving.WaitingPerSource*sent, fmt.Sprintf("envoy_injector_held_bytes = %v, below the %d bytes the %d clients it holds sent", held, serving.WaitingPerSource*sent, serving.WaitingPerSource), nil
	})

	for i := range 3 {
		p, err := f.create(ctx, f.pod(nil))
		if err != nil {
			t.Fatalf("Pod %d, created through the API server behind %d stalled clients, was refused: %v", i, clients, err)
		}
		if _, ok := injector.ReadStatus(p.Annotations); !ok {
			t.Errorf("Pod %d was admitted without the sidecar: %v", i, p.Annotations)
		}
	}

	// 100 more clients, at once, each announce 3 MiB and try to send 2
	// MiB: 200 MiB more than the budget has left. Those that find it spent
	// are refused (503, their connections closed) rather than held. Each
	// comes from an address of its own, so that the places of all that
	// wait for their clients (serving.WaitingRequests, 64), not one
	// source's cap, bound how many are held, and 64 of them would hold
	// more than the budget.
	overloaded := f.admissions(ctx, t, map[string]string{"result": injector.ResultOverloaded})
	const more, tried = 100, 2 << 20
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for i := range more {
		wg.Go(func() {
			source := &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i))}
			dialer := &tls.Dialer{NetDialer: &net.Dialer{LocalAddr: source}, Config: webhookTLS(f)}
			c, err := dialer.DialContext(ctx, "tcp", f.addr)
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c.(*tls.Conn))
			mu.Unlock()
			// The kernel's buffers may take what the webhook does not
			// read, or its refusal cut the write short: either is fine.
			_ = c.SetWriteDeadline(time.Now().Add(15 * time.Second))
			_, _ = fmt.Fprintf(c, "POST /mutate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				f.addr, injector.MaxRequestBytes, strings.Repeat(" ", tried))
		})
	}
	wg.Wait()
	framework.Eventually(ctx, t, 20*time.Second, func(ctx context.Context) (bool, string, error) {
		refused := f.admissions(ctx, t, map[string]string{"result": injector.ResultOverloaded}) - overloaded
		return refused > 0, fmt.Sprintf("none of %d clients that would hold 200 MiB more than the budget was refused as overloaded", more), nil
	})
	if held := f.metric(ctx, t, "envoy_injector_held_bytes", nil); held > budget {
		t.Errorf("envoy_injector_held_bytes = %v, over the budget of %v", held, budget)
	}
	peak, err := f.proc.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if limit := int64(budget) + 96<<20; peak > limit {
		t.Errorf("the webhook's peak RSS was %d MiB, over the budget and its own 96 MiB (%d MiB)", peak>>20, limit>>20)
	} else {
		t.Logf("the webhook's peak RSS: %d MiB (budget %d MiB)", peak>>20, int64(budget)>>20)
	}

	for _, c := range conns {
		_ = c.Close()
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		held := f.metric(ctx, t, "envoy_injector_held_bytes", nil)
		return held == 0, fmt.Sprintf("envoy_injector_held_bytes = %v after the clients went away", held), nil
	})
}
