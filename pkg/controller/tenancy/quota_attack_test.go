package tenancy

import (
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
)

// TestAnotherNamespacesQuotaListQueuesNothingOfOurs: team-a has two
// Networks, one on the controller's cloud and one on its own credentials
// (Secret "cloud", cloud "team"); team-b names a Secret and cloud of the
// same names in its own namespace, reaching the same OpenStack project or
// another. However often team-b's lists report the quota changed (team-b
// fills or empties the project, or Neutron recovers for it), none of
// team-a's Networks is queued: only team-a's own lists, each of its own
// credential, queue them, one credential's list its own Networks only.
//
// Holds if onNeutronListed queues by the list's own Key.
func TestAnotherNamespacesQuotaListQueuesNothingOfOurs(t *testing.T) {
	onOwn := setNetwork("on-own", "1c2d3e4f-0000-0000-0000-0000000000a1", false)
	onOwn.Namespace = "team-a"
	onCreds := setNetwork("on-creds", "1c2d3e4f-0000-0000-0000-0000000000a2", true)
	onCreds.Namespace = "team-a"
	ofB := setNetwork("b", "1c2d3e4f-0000-0000-0000-0000000000b1", true)
	ofB.Namespace = "team-b"
	f := newSetFixture(t, onOwn, onCreds, ofB)
	_, ctx := ktesting.NewTestContext(t)
	own := f.set.Own()
	project := func(key Key) *Project {
		return &Project{Key: key, Inventory: own.Inventory, Reconciler: own.Reconciler, Orphans: own.Orphans}
	}
	teamA, teamB := project(KeyOf(onCreds)), project(KeyOf(ofB))

	for _, listed := range []inventory.Listed{{QuotaChanged: true}, {QuotaChanged: true, Recovered: true}} {
		for range 100 {
			f.set.onNeutronListed(ctx, teamB, listed)
		}
		if got := f.drain(); len(got) != 100 || got[0] != "team-b/b" || got[99] != "team-b/b" {
			t.Errorf("100 of team-b's lists (%+v) queued %d: %q..., want team-b/b 100 times, nothing of team-a's", listed, len(got), got[:min(len(got), 3)])
		}
		f.set.onNeutronListed(ctx, teamA, listed)
		if got := f.drain(); len(got) != 1 || got[0] != "team-a/on-creds" {
			t.Errorf("team-a's credential's list (%+v) queued %q, want team-a/on-creds", listed, got)
		}
		f.set.onNeutronListed(ctx, own, listed)
		if got := f.drain(); len(got) != 1 || got[0] != "team-a/on-own" {
			t.Errorf("the controller's cloud's list (%+v) queued %q, want team-a/on-own", listed, got)
		}
	}
}
