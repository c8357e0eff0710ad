package reconcile

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// inTrace is a context whose span has the trace ID of 16 times b.
func inTrace(b byte) context.Context {
	var id trace.TraceID
	for i := range id {
		id[i] = b
	}
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: id, SpanID: trace.SpanID{1}}))
}

// TestAConditionNeutronCausedNamesItsRequest: the failing condition that
// Neutron's refusal caused names the sync's global request ID, which
// Neutron's log has; one the controller found itself names none; and a
// retry refused for the same reason under another ID writes no status.
func TestAConditionNeutronCausedNamesItsRequest(t *testing.T) {
	network := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "a", Generation: 1}}
	overlap := neutron.ErrorForResponse("creating subnet", 400, "InvalidInput", "Requested subnet with cidr: 10.1.0.0/24 overlaps with another subnet")
	first := (&Reconciler{}).newPass(inTrace(0xab), toV2(t, network)).failed(phaseSyncing, overlap, Observed{})
	const id = "req-abababab-abab-abab-abab-abababababab"
	if !strings.HasSuffix(first.Condition.Message, "(Neutron request "+id+")") {
		t.Errorf("condition %q does not name request %s", first.Condition.Message, id)
	}
	answered := &neutron.RejectedError{Op: "creating subnet", StatusCode: 400, Type: "InvalidInput", Message: "overlaps", RequestID: "req-0e0e0e0e-0e0e-4e0e-8e0e-0e0e0e0e0e0e"}
	if out := (&Reconciler{}).newPass(inTrace(0xab), toV2(t, network)).failed(phaseSyncing, answered, Observed{}); !strings.HasSuffix(out.Condition.Message, "(Neutron request "+answered.RequestID+")") {
		t.Errorf("condition %q does not name Neutron's own ID of the request it refused, %s", out.Condition.Message, answered.RequestID)
	}
	long := neutron.ErrorForResponse("creating subnet", 400, "InvalidInput", strings.Repeat("x", 2*MaxMessageLength))
	if out := (&Reconciler{}).newPass(inTrace(0xab), toV2(t, network)).failed(phaseSyncing, long, Observed{}); len(out.Condition.Message) > MaxMessageLength ||
		!strings.HasSuffix(out.Condition.Message, "(Neutron request "+id+")") || !strings.Contains(out.Condition.Message, "more characters") {
		t.Errorf("a long refusal's condition is %d bytes, ending %q: want at most %d, cut before the request it names", len(out.Condition.Message),
			out.Condition.Message[max(0, len(out.Condition.Message)-80):], MaxMessageLength)
	}
	own := (&Reconciler{}).newPass(inTrace(0xab), toV2(t, network)).failed(phaseSyncing, &desired.InvalidSpecError{Message: "allocationPools overlap"}, Observed{})
	if strings.Contains(own.Condition.Message, "req-") {
		t.Errorf("condition %q names a request, but no request caused it", own.Condition.Message)
	}

	ac, _ := StatusApply(toV2(t, network), *first.Condition, first.Observed)
	if ac == nil {
		t.Fatal("the first refusal wrote no status")
	}
	data, err := json.Marshal(ac.Status)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &network.Status); err != nil { // as the API server stores it
		t.Fatal(err)
	}
	retry := (&Reconciler{}).newPass(inTrace(0xcd), toV2(t, network)).failed(phaseSyncing, overlap, Observed{})
	if ac, changed := StatusApply(toV2(t, network), *retry.Condition, retry.Observed); ac != nil || changed {
		t.Errorf("a retry refused for the same reason under another request wrote status (changed %v)", changed)
	}
}
