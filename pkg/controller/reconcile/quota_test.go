package reconcile

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestQuotaNearlyFullFollowsTheProjectsQuota (issue 54): a Network says
// QuotaNearlyFull, with the project's counts, once a list reads its
// project's network quota 90% used, and no longer once a list reads room;
// each change is reported by the list (Listed.QuotaChanged, which queues
// the project's Networks), a pass that changes nothing writes nothing,
// and Ready is untouched throughout.
func TestQuotaNearlyFullFollowsTheProjectsQuota(t *testing.T) {
	f := newFixture(t, newNetwork(v4CIDR, v4GW), func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		n.SetNetworkQuota(10)
	})
	for _, step := range []struct {
		name        string
		limit       int
		wantChanged bool
		// wantMessage is in the condition's message; "" for no condition.
		wantMessage string
	}{
		{"the Network made, 1 of 10", 10, false, ""},
		{"the limit lowered to 1: full", 1, true, "networks 1 of 1"},
		{"listed again, nothing changed", 1, false, "networks 1 of 1"},
		{"the limit raised to 2: half", 2, true, ""},
		{"the limit at 1 again", 1, true, "networks 1 of 1"},
		{"no limit", -1, true, ""},
	} {
		f.neutron.SetNetworkQuota(step.limit)
		listed, err := f.inv.Refresh(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if listed.QuotaChanged != step.wantChanged {
			t.Errorf("%s: the list's QuotaChanged = %v, want %v", step.name, listed.QuotaChanged, step.wantChanged)
		}
		f.client.ClearActions()
		f.sync("net")
		st := f.stored("net").Status
		got := meta.FindStatusCondition(st.Conditions, samplecrdv1.ConditionQuotaNearlyFull)
		switch {
		case step.wantMessage == "" && got != nil:
			t.Errorf("%s: QuotaNearlyFull = %+v, want none", step.name, got)
		case step.wantMessage != "" && (got == nil || got.Status != metav1.ConditionTrue || got.Reason != samplecrdv1.QuotaNearlyFullReason ||
			!strings.Contains(got.Message, step.wantMessage)):
			t.Errorf("%s: QuotaNearlyFull = %+v, want True saying %q", step.name, got, step.wantMessage)
		}
		if !meta.IsStatusConditionTrue(st.Conditions, samplecrdv1.ConditionReady) {
			t.Errorf("%s: Ready = %+v, want True", step.name, meta.FindStatusCondition(st.Conditions, samplecrdv1.ConditionReady))
		}
		if wrote := statusWrites(f); wrote > 0 && !step.wantChanged && step.name != "the Network made, 1 of 10" {
			t.Errorf("%s: %d status writes, want none when the list changed nothing", step.name, wrote)
		}
	}
}

// TestAPassThatReadNoQuotaKeepsTheCondition: a pass whose inventory has
// read no quota yet (Observed.Quota nil), as after a restart before the
// first list, applies QuotaNearlyFull as status has it, so the API server
// does not remove it; one that read room drops it.
func TestAPassThatReadNoQuotaKeepsTheCondition(t *testing.T) {
	full := metav1.Condition{Type: samplecrdv1.ConditionQuotaNearlyFull, Status: metav1.ConditionTrue, Reason: samplecrdv1.QuotaNearlyFullReason,
		Message: "networks 5 of 5", ObservedGeneration: 1}
	ready := metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionTrue, Reason: samplecrdv1.ReasonProvisioned, ObservedGeneration: 1}
	network := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "default", Generation: 1},
		Status: samplecrdv2.NetworkStatus{ObservedGeneration: 1, NetworkID: "net-1", Conditions: []metav1.Condition{ready, full}}}
	failed := metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: samplecrdv1.ReasonNeutronUnavailable, Message: "down"}

	ac, _ := StatusApply(network, failed, Observed{NetworkID: "net-1"})
	if ac == nil || !appliesCondition(ac.Status.Conditions, samplecrdv1.ConditionQuotaNearlyFull) {
		t.Errorf("a pass that read no quota applies %+v, want QuotaNearlyFull kept", ac)
	}
	room := neutron.Unlimited
	room.Networks = neutron.Usage{Limit: 5, Used: 4}
	ac, _ = StatusApply(network, ready, Observed{NetworkID: "net-1", Quota: &room})
	if ac == nil || appliesCondition(ac.Status.Conditions, samplecrdv1.ConditionQuotaNearlyFull) {
		t.Errorf("a pass that read 4 of 5 applies %+v, want QuotaNearlyFull left out (removed)", ac)
	}
}

// appliesCondition reports whether conditions name one of type t.
func appliesCondition(conditions []metav1ac.ConditionApplyConfiguration, t string) bool {
	for _, c := range conditions {
		if c.Type != nil && *c.Type == t {
			return true
		}
	}
	return false
}
