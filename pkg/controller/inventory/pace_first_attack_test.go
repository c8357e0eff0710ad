package inventory_test

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAListBeforeRunPacesRunsNext: a project's first list is made with
// Refresh, beside the worker that asked, before its Run loop starts
// (tenancy's Set.start), and every credential built, rebuilt after a
// Secret rotation, or named again after it was let go, makes one. Run's
// next list, which the project's own syncs ask for at once (a 412, an
// orphan to confirm), waits for the pace as after any list of Run's own:
// else each build lists its project twice back to back, whatever its
// share of the project.
func TestAListBeforeRunPacesRunsNext(t *testing.T) {
	for _, tc := range []struct {
		name  string
		took  time.Duration
		share int
		want  time.Duration
	}{
		{"a quick list, alone at its project: the gap", 0, 1, inventory.MinListGap},
		{"a quick list, one of 4 namespaces at its project: 4 gaps", 0, 4, 4 * inventory.MinListGap},
		{"a list of 10 s, one of 2: two cycles of 20 s from its start", 10 * time.Second, 2, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
			slow := &slowNeutron{Neutron: fake.New(), clk: clk, took: tc.took}
			inv := inventory.New(slow, mark(t, "prod"), inventory.Options{
				ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: clk,
				Share: func() int { return tc.share },
			})
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			ended := clk.Now()
			l := runLoop(ctx, t, inv, clk)
			inv.RequestRefresh(0)
			next := l.next("on request", 100*time.Millisecond, 2*tc.want+time.Second)
			if gap := next.Started.Sub(ended); gap < tc.want {
				t.Errorf("Run's first list started %v after the first list ended, want at least %v", gap, tc.want)
			}
		})
	}
}
