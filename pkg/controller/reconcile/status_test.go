package reconcile

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
)

// TestStatusSubnetsOfADualStackNetwork: a pass over a dual-stack Network
// reports both subnets, each with its range, ID, gateway and pools, in
// v2's status.subnets; applied once, the same Outcome applies nothing.
func TestStatusSubnetsOfADualStackNetwork(t *testing.T) {
	f := newFixture(t, withSubnets(newNetwork(v4CIDR, v4GW), samplecrdv2.SubnetSpec{CIDR: v6CIDR}), nil)
	out := f.sync("net")
	if out.Condition == nil || out.Condition.Reason != samplecrdv1.ReasonProvisioned {
		t.Fatalf("outcome = %+v", out)
	}

	client := fake.NewClientset(&samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "default", Generation: 1}})
	networks := client.SamplecrdV2().Networks("default")
	read := func() *samplecrdv2.Network {
		n, err := networks.Get(f.ctx, "net", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	ac, changed := StatusApply(read(), *out.Condition, out.Observed)
	if ac == nil || !changed {
		t.Fatalf("apply = %v, changed %v: want a first status", ac, changed)
	}
	if _, err := networks.ApplyStatus(f.ctx, ac, metav1.ApplyOptions{FieldManager: statusManager, Force: true}); err != nil {
		t.Fatal(err)
	}
	st := read().Status
	byCIDR := map[string]samplecrdv2.SubnetStatus{}
	for _, s := range st.Subnets {
		byCIDR[s.CIDR] = s
	}
	for _, s := range f.neutron.Subnets() {
		got, ok := byCIDR[s.CIDR]
		switch {
		case !ok:
			t.Errorf("status.subnets has no %s: %+v", s.CIDR, st.Subnets)
		case got.ID != s.ID || got.Gateway != s.GatewayIP || len(got.AllocationPools) != len(s.AllocationPools):
			t.Errorf("status.subnets[%s] = %+v, Neutron holds %+v", s.CIDR, got, s)
		}
	}
	if len(st.Subnets) != 2 || st.NetworkID == "" {
		t.Errorf("status = %+v, want the network and two subnets", st)
	}
	if ac, _ := StatusApply(read(), *out.Condition, out.Observed); ac != nil {
		t.Errorf("a second apply of the same Outcome: %v, want none", ac)
	}
	if got := LastObserved(st); !got.Equal(st) || got.FirstSubnet().ID != st.Subnets[0].ID {
		t.Errorf("LastObserved = %+v, does not say what status says", got)
	}
}

// TestAFailedPassKeepsStatusSubnets: an Outcome that knows no subnets (a
// pass that stopped before it read them) leaves status.subnets as they
// are, and changes only the condition.
func TestAFailedPassKeepsStatusSubnets(t *testing.T) {
	network := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "default", Generation: 1},
		Status: samplecrdv2.NetworkStatus{NetworkID: "net-1", Subnets: []samplecrdv2.SubnetStatus{
			{CIDR: v4CIDR, ID: "subnet-2", Gateway: v4GW}, {CIDR: v6CIDR, ID: "subnet-3", Gateway: "fd00:10::1"}}}}
	failed := metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: samplecrdv1.ReasonNeutronUnavailable, Message: "down"}
	ac, _ := StatusApply(network, failed, Observed{NetworkID: "net-1"})
	if ac == nil || len(ac.Status.Subnets) != 2 || *ac.Status.Subnets[1].ID != "subnet-3" {
		t.Fatalf("apply = %+v, want both subnets kept", ac)
	}
}
