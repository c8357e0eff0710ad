package collector

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

const uidA, uidB = types.UID("a"), types.UID("b")

var t0 = time.Unix(1e9, 0)

func TestAnOrphanIsDueOnlyAfterTwoSightingsAGracePeriodApart(t *testing.T) {
	tr := newTracker(time.Minute, 10)
	if first := tr.NewList(t0, []types.UID{uidA}); len(first) != 1 || first[0] != uidA {
		t.Fatalf("first sightings = %v, want [a]", first)
	}
	if tr.Due(uidA) || !tr.Sighted(uidA) {
		t.Errorf("after one sighting: due %v, sighted %v; want not due, sighted", tr.Due(uidA), tr.Sighted(uidA))
	}
	if first := tr.NewList(t0.Add(59*time.Second), []types.UID{uidA}); len(first) != 0 {
		t.Errorf("a second sighting counted as first: %v", first)
	}
	if tr.Due(uidA) {
		t.Error("due after two sightings less than the grace period apart")
	}
	tr.NewList(t0.Add(time.Minute), []types.UID{uidA})
	if !tr.Due(uidA) {
		t.Error("not due after two sightings the grace period apart")
	}
	if tr.Due(uidB) || tr.Sighted(uidB) {
		t.Error("a UID never sighted is due or sighted")
	}
}

func TestAListThatDoesNotShowAnOrphanStartsItsCountAgain(t *testing.T) {
	tr := newTracker(time.Minute, 10)
	tr.NewList(t0, []types.UID{uidA})
	tr.NewList(t0.Add(30*time.Second), nil) // its Network came back into view
	tr.NewList(t0.Add(2*time.Minute), []types.UID{uidA})
	if tr.Due(uidA) {
		t.Error("due although a list in between did not find it orphaned")
	}
	tr.NewList(t0.Add(3*time.Minute), []types.UID{uidA})
	if !tr.Due(uidA) {
		t.Error("not due a grace period after it was sighted again")
	}
	tr.Forget(uidA)
	if tr.Due(uidA) {
		t.Error("due after Forget")
	}
}

func TestEachListAllowsAtMostItsBudgetAndWarnsOnce(t *testing.T) {
	tr := newTracker(0, 2)
	tr.NewList(t0, nil)
	for i := range 2 {
		if ok, _ := tr.Take(); !ok {
			t.Fatalf("deletion %d of 2 refused", i+1)
		}
	}
	if ok, first := tr.Take(); ok || !first {
		t.Errorf("third deletion: ok=%v first refusal=%v, want refused, first", ok, first)
	}
	if ok, first := tr.Take(); ok || first {
		t.Errorf("fourth deletion: ok=%v first refusal=%v, want refused, not first", ok, first)
	}
	tr.NewList(t0.Add(time.Second), nil)
	if ok, _ := tr.Take(); !ok {
		t.Error("a new list did not renew the budget")
	}
}
