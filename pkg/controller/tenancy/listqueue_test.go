package tenancy

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
)

// TestAListQueuesOnlyItsOwnProjectsNetworks: team-b's credentials reach
// the OpenStack project team-a's Network lives in (projects are shared),
// so team-b's list sees team-a's marked network and reports team-a's UID
// as changed. Only team-a's own list (the controller's credentials, here)
// may queue team-a's Network: a list of another namespace's credentials
// queues none of it, or team-b's lists would set the pace of team-a's
// syncs and spend team-a's share of the queue.
func TestAListQueuesOnlyItsOwnProjectsNetworks(t *testing.T) {
	teamA := setNetwork("net", "1c2d3e4f-0000-0000-0000-000000000001", false)
	f := newSetFixture(t, teamA)
	_, ctx := ktesting.NewTestContext(t)
	own := f.set.Own()
	teamB := &Project{Key: Key{Namespace: "team-b", Secret: "cloud", Cloud: "team"}, Inventory: own.Inventory, Reconciler: own.Reconciler, Orphans: own.Orphans}
	listed := inventory.Listed{Changed: []types.UID{teamA.UID}}

	f.set.onNeutronListed(ctx, teamB, listed)
	if got := f.drain(); len(got) != 0 {
		t.Errorf("team-b's list queued %q, want none of team-a's", got)
	}
	f.set.onNeutronListed(ctx, own, listed)
	if got := f.drain(); len(got) != 1 {
		t.Errorf("team-a's own list queued %q, want its Network", got)
	}
}
