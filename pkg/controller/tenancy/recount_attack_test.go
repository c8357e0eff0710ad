package tenancy

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
)

// TestAListQueuesOnlyItsOwnProjectsNetworks: team-b's credentials reach
// the OpenStack project team-a's Network lives in (projects are shared),
// so team-b's list sees team-a's marked network, and its counts, and
// reports team-a's UID as changed or recounted, and its quota read as
// changed when team-b fills the project. Only team-a's own list
// (the controller's credentials, here) may queue team-a's Network: a list
// of another project queues none of it, or team-b's lists would set the
// pace of team-a's syncs.
func TestAListQueuesOnlyItsOwnProjectsNetworks(t *testing.T) {
	teamA := setNetwork("net", "1c2d3e4f-0000-0000-0000-000000000001", false)
	f := newSetFixture(t, teamA)
	_, ctx := ktesting.NewTestContext(t)
	own := f.set.Own()
	teamB := &Project{Key: Key{Namespace: "team-b", Secret: "cloud", Cloud: "team"}, Inventory: own.Inventory, Reconciler: own.Reconciler, Orphans: own.Orphans}

	for _, listed := range []inventory.Listed{{Recount: []types.UID{teamA.UID}}, {Changed: []types.UID{teamA.UID}}, {QuotaChanged: true}} {
		f.set.onNeutronListed(ctx, teamB, listed)
		if got := f.drain(); len(got) != 0 {
			t.Errorf("team-b's list (%+v) queued %q, want none of team-a's", listed, got)
		}
		f.set.onNeutronListed(ctx, own, listed)
		if got := f.drain(); len(got) != 1 {
			t.Errorf("team-a's own list (%+v) queued %q, want its Network", listed, got)
		}
	}
}
