package reconcile

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// changedAfterRead is Neutron where something happens (change) just after
// each of its first `times` reads of a network, before anything else
// reaches Neutron: a person editing the DNS servers of a subnet on it, or
// anyone in the project making, changing or deleting a subnet there (each
// raises the network's revision between the door's read and its write),
// or a Lease taken over.
type changedAfterRead struct {
	neutron.Interface
	change func()
	times  int
}

func (c *changedAfterRead) GetNetwork(ctx context.Context, id string) (neutron.Network, error) {
	n, err := c.Interface.GetNetwork(ctx, id)
	if c.times > 0 {
		c.times--
		c.change()
	}
	return n, err
}

// TestANetworkChangedTwiceDuringAnUpdateIsReadAgainSoon: A's Network asks
// for a new MTU. Between the door's read of the network and its update,
// and again between the read after the 412 and the second update, a
// subnet on the network changes (each raises the network's revision):
// both updates are refused with Neutron's 412, and writeOwned returns
// the second. classify takes that for Neutron refusing an invalid
// request: Ready=False NeutronRejected, a Warning, and no retry for
// rejectedRetryInterval (5 minutes), though the request was right and
// only needs a read again. Whoever changes subnets on a network, a
// person or another project's tool, holds its Network's repairs off five
// minutes at a time, and tells its author the spec was refused.
//
// The fix should guarantee: a conditional write refused as stale
// (neutron.IsStale) is retried with backoff, as errAdoptionChanged is,
// under a reason that does not say Neutron refused the spec.
func TestANetworkChangedTwiceDuringAnUpdateIsReadAgainSoon(t *testing.T) {
	f := newFixture(t, withSpec(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
		func(s *samplecrdv1.NetworkSpec) { s.MTU = ptr.To[int32](1300) }),
		inSync("192.168.0.0/16", "192.168.0.1"))
	dns := 0
	racing := &changedAfterRead{Interface: f.neutron, times: 2, change: func() {
		dns++
		servers := []string{fmt.Sprintf("10.0.0.%d", dns)}
		if _, err := f.neutron.UpdateSubnet(f.ctx, seededSubnet, neutron.SubnetUpdate{DNSNameservers: &servers}); err != nil {
			t.Fatal(err)
		}
	}}
	f.connect(racing, defaultOptions(), nil)

	out := f.sync("net")
	if !neutron.IsStale(out.Err) {
		t.Fatalf("outcome %+v, want the second 412", out)
	}
	if out.Requeue != AddRateLimited {
		t.Errorf("requeue %v after %v, want AddRateLimited: a read again settles it", out.Requeue, out.After)
	}
	cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
	if cond != nil && cond.Reason == samplecrdv1.ReasonNeutronRejected {
		t.Errorf("Ready = %+v: the spec was not refused", cond)
	}
}
