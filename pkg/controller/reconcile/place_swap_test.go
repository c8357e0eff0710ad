package reconcile

import (
	"testing"
	"time"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestACreateGoesOnlyToTheRecordedPlace: a Network records region 1 and
// has nothing in Neutron yet. Its pass checks the place (region 1); then,
// before the door's first check (its fence), the credentials move to
// region 2 and a list of region 2 completes, so the door's own checks
// agree with themselves. The create must still not be made in region 2:
// every request of the pass requires the place status records
// (neutron.InPlace), and the client checks it when it sends.
func TestACreateGoesOnlyToTheRecordedPlace(t *testing.T) {
	network := inPlace("project-a", "region-1")(newNetwork("192.168.0.0/16", "192.168.0.1"))
	network.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		n.SetRegion("region-1")
	})
	swapped := false
	swapBeforeTheDoor := func() error {
		if !swapped {
			swapped = true
			f.neutron.SetRegion("region-2")
			f.list()
		}
		return nil
	}
	f.inv = inventory.New(f.neutron, ours, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: f.clock,
		Fence: swapBeforeTheDoor})
	f.r = New(f.inv, ours, Options{Records: ApplyRecord{Client: f.client}})
	f.list()

	out := f.sync("net")
	if n := f.neutron.Networks(); len(n) != 0 {
		t.Errorf("region 2 holds %+v, made for a Network whose status.place is region 1", n)
	}
	if !swapped || !neutron.IsCredentialsError(out.Err) {
		t.Errorf("outcome %+v (swapped: %t), want a CredentialsError", out, swapped)
	}
}
