package reconcile

import (
	"fmt"
	"strings"
	"testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestARemovalBlockedByManyPortsSaysABoundedReason: another namespace's
// workloads (or a person) put many ports on a subnet this Network removes
// from spec.subnets, each with a long device_owner of their choosing, with
// a newline in it. The removal waits for them, as it must; but the reason
// is written on every pass, to the condition and to the log (the pass's
// error), and neither may grow with what someone else put in Neutron:
// the ports are listed as far as boundList lists, and their text is
// escaped.
func TestARemovalBlockedByManyPortsSaysABoundedReason(t *testing.T) {
	f := newFixture(t, withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet)), func(f *neutronfake.Neutron) {
		withV6Subnet(f)
		for i := range 500 {
			f.AddPortWithAddresses(seededNet, fmt.Sprintf("port-%03d", i), "compute:nova\nI1126 forged log line "+strings.Repeat("x", 200), fmt.Sprintf("fd00:10::%x", i+10))
		}
	})
	out := f.sync("net")
	if out.Condition == nil || out.Condition.Reason != samplecrdv1.ReasonSubnetRemovalBlocked {
		t.Fatalf("condition = %+v (%v), want %s", out.Condition, out.Err, samplecrdv1.ReasonSubnetRemovalBlocked)
	}
	if len(out.Condition.Message) > MaxMessageLength {
		t.Errorf("the condition's message is %d bytes, more than %d", len(out.Condition.Message), MaxMessageLength)
	}
	logged := out.Err.Error()
	if strings.Contains(logged, "\n") {
		t.Errorf("the logged error holds a newline from a port's device_owner")
	}
	if len(logged) > 8*1024 {
		t.Errorf("the logged error is %d bytes: it grows with the ports someone else put on the subnet", len(logged))
	}
	if !strings.Contains(logged, "more") {
		t.Errorf("the logged error does not say how many ports it left out: %.300s", logged)
	}
}
