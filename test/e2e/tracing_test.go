package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestATraceFollowsANetworkIntoNeutronsLog is issue 36's trace on the
// real stack. The controller runs with a tracing configuration whose
// endpoint is an OTLP receiver of the test's own. A Network's sync arrives
// there as a span with its Neutron requests as children — the create of
// its network among them, with Neutron's own ID of it — and
// neutron-server's log has that create under that ID. A Network whose
// network Neutron refuses (an MTU too big for geneve) names Neutron's ID
// of the refused request in its condition and its Warning Event, and
// Neutron's log has the refusal under it. A Network whose router is not
// there names the sync's global request ID, under which Neutron logged
// the read that found none (neutron-server 21 keeps a global request ID
// on reads, and drops it on writes).
func TestATraceFollowsANetworkIntoNeutronsLog(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	receiver := startOTLPReceiver(t)
	config := filepath.Join(t.TempDir(), "tracing.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: %s\nsamplingRatePerMillion: 1000000\n", receiver.addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	startController(t, ns, "--tracing-config-file="+config)
	cleanupNetworks(t, ns)

	createNetwork(ctx, t, ns, "traced", "10.137.0.0/24", "")
	waitForReady(ctx, t, ns, "traced", time.Minute)
	made, create := receiver.waitForRequest(ctx, t, ns+"/traced", "POST", "/v2.0/networks", "")
	if made.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("the sync that made traced has status %v", made.Status)
	}
	if id := attribute(create, "openstack.request_id"); id == "" || !hasLogLine(stack.Neutron.FullServerLog(), id, `"POST /v2.0/networks HTTP/1.1" status: 201`) {
		t.Errorf("neutron-server's log has no create of a network under %q, the ID its span records", id)
	}

	// A refusal names Neutron's own ID of the request it refused, and
	// Neutron's log has the refusal under it; the Warning says it too.
	tooBig := createNetworkWith(ctx, t, ns, "too-big", samplecrdv1.NetworkSpec{CIDR: "10.138.0.0/24", MTU: ptr.To(int32(9000))})
	named := waitForNamedRequest(ctx, t, ns, tooBig.Name, samplecrdv1.ReasonNeutronRejected)
	if !hasLogLine(stack.Neutron.FullServerLog(), named, `"POST /v2.0/networks HTTP/1.1" status: 400`) {
		t.Errorf("neutron-server's log has no refused network create under %s", named)
	}
	waitForWarningNaming(ctx, t, ns, tooBig.Name, samplecrdv1.ReasonNeutronRejected, named)

	// A router that is not there: what names it is the answer to a read,
	// under the sync's global request ID, which Neutron keeps on reads.
	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{Routers: []string{"missing-" + ns}})
	unrouted := createNetworkWith(ctx, t, ns, "unrouted", samplecrdv1.NetworkSpec{CIDR: "10.139.0.0/24", Router: &samplecrdv1.RouterReference{Name: "missing-" + ns}})
	named = waitForNamedRequest(ctx, t, ns, unrouted.Name, samplecrdv1.ReasonRouterNotFound)
	if !hasLogLine(stack.Neutron.FullServerLog(), named, "GET /v2.0/routers?") {
		t.Errorf("neutron-server's log has no read of routers under %s", named)
	}
	sync, _ := receiver.waitForRequest(ctx, t, ns+"/unrouted", "GET", "/v2.0/routers", "")
	if sync.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("the sync that found no router has status %v, want an error", sync.Status)
	}
	if global := "req-" + uuid.UUID(sync.TraceId).String(); global != named {
		t.Errorf("the condition names %s, but the sync that read the routers was trace %s", named, global)
	}
}

// createNetworkWith creates the Network name of ns with spec.
func createNetworkWith(ctx context.Context, t *testing.T, ns, name string, spec samplecrdv1.NetworkSpec) *samplecrdv1.Network {
	t.Helper()
	n, err := networkClient(t).SamplecrdV1().Networks(ns).Create(ctx, &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Network %s: %v", name, err)
	}
	return n
}

// waitForNamedRequest waits for name's Ready condition to be False with
// reason, and returns the request its message names.
func waitForNamedRequest(ctx context.Context, t *testing.T, ns, name, reason string) string {
	t.Helper()
	n := waitForCondition(ctx, t, ns, name, time.Minute, metav1.ConditionFalse, reason)
	named := regexp.MustCompile(`\(Neutron request (req-[0-9a-f-]{36})\)$`).FindStringSubmatch(readyCondition(n).Message)
	if named == nil {
		t.Fatalf("the %s condition of %s names no request: %q", reason, name, readyCondition(n).Message)
	}
	return named[1]
}

// waitForWarningNaming waits for a Warning Event of reason on name that
// names request.
func waitForWarningNaming(ctx context.Context, t *testing.T, ns, name, reason, request string) {
	t.Helper()
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		events, err := kubeClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
		if err != nil {
			return false, "", err
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, request) {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d %s Events of %s, none names %s", len(events.Items), reason, name, request), nil
	})
}

// hasLogLine reports whether one line of log holds all of parts.
func hasLogLine(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		found := true
		for _, p := range parts {
			found = found && strings.Contains(line, p)
		}
		if found {
			return true
		}
	}
	return false
}

// otlpReceiver is an OTLP trace receiver over gRPC, as a collector is,
// that keeps every span it is sent.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []*tracepb.Span
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpReceiver{addr: ln.Addr().String()}
	server := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(server, r)
	go func() { _ = server.Serve(ln) }()
	t.Cleanup(server.Stop)
	return r
}

// Export implements the OTLP trace service.
func (r *otlpReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// waitForRequest waits for the span of a sync of network (namespace/name)
// and its child span, in its trace, of a request of method to a URL
// ending in path (whose service answered with its own request ID
// answered, unless that is ""), and returns both.
func (r *otlpReceiver) waitForRequest(ctx context.Context, t *testing.T, network, method, path, answered string) (sync, request *tracepb.Span) {
	t.Helper()
	framework.Eventually(ctx, t, time.Minute, func(context.Context) (bool, string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range r.spans {
			if s.Name != "Sync Network" || attribute(s, "network") != network {
				continue
			}
			for _, c := range r.spans {
				if bytes.Equal(c.ParentSpanId, s.SpanId) && bytes.Equal(c.TraceId, s.TraceId) && strings.Contains(c.Name, method) &&
					strings.HasSuffix(urlOf(c), path) && (answered == "" || attribute(c, "openstack.request_id") == answered) {
					sync, request = s, c
					return true, "", nil
				}
			}
		}
		return false, fmt.Sprintf("%d spans received, none a %s %s of a sync of %s", len(r.spans), method, path, network), nil
	})
	return sync, request
}

// attribute is span's string attribute key, "" if it has none.
func attribute(span *tracepb.Span, key string) string {
	for _, a := range span.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// urlOf is the URL a request's span records (otelhttp's url.full, or
// http.url in older conventions), without its query.
func urlOf(span *tracepb.Span) string {
	u := attribute(span, "url.full")
	if u == "" {
		u = attribute(span, "http.url")
	}
	u, _, _ = strings.Cut(u, "?")
	return u
}
