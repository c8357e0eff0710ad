package inventory_test

import (
	"context"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// scriptedQuota is the fake Neutron whose quota reads answer what the
// test sets: what other tenants of a shared project make it read.
type scriptedQuota struct {
	*fake.Neutron
	mu    sync.Mutex
	quota neutron.Quota
	err   error
}

func (s *scriptedQuota) Quota(context.Context) (neutron.Quota, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quota, s.err
}

func (s *scriptedQuota) set(q neutron.Quota, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota, s.err = q, err
}

func portsInUse(used, reserved, limit int) neutron.Quota {
	q := neutron.Unlimited
	q.Ports = neutron.Usage{Limit: limit, Used: used, Reserved: reserved}
	return q
}

// TestAReservationThatSettlesQueuesNoNetwork: in a shared project at 95
// of 100 ports, another tenant boots a VM: Neutron reserves its port
// (used 94, reserved 1), then commits it (used 95, reserved 0). What a
// Network says, "ports 95 of 100", is the same at both reads (the message
// counts used and reserved together), so the list must not report
// QuotaChanged, which queues every Network of the project for a pass that
// writes nothing. Another tenant's VMs booting would otherwise queue all
// of this namespace's Networks at every list while the project is nearly
// full.
//
// FAILS if QuotaChanged compares Used and Reserved apart.
func TestAReservationThatSettlesQueuesNoNetwork(t *testing.T) {
	f := fake.New()
	f.SetProject("shared-project")
	client := &scriptedQuota{Neutron: f, quota: portsInUse(95, 0, 100)}
	inv := inventory.New(client, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour, Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
	ctx := t.Context()
	if listed, err := inv.Refresh(ctx); err != nil || !listed.QuotaChanged {
		t.Fatalf("first list: %+v, %v; want QuotaChanged", listed, err)
	}
	for _, step := range []struct {
		name        string
		quota       neutron.Quota
		wantChanged bool
	}{
		{"a port reserved, one deleted: 94+1 of 100", portsInUse(94, 1, 100), false},
		{"the reservation committed: 95+0 of 100", portsInUse(95, 0, 100), false},
		{"one more: 96 of 100", portsInUse(96, 0, 100), true},
		{"room: 50 of 100", portsInUse(50, 0, 100), true},
		{"still room, other counts: 60 of 100", portsInUse(60, 0, 100), false},
	} {
		client.set(step.quota, nil)
		listed, err := inv.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if listed.QuotaChanged != step.wantChanged {
			t.Errorf("%s: QuotaChanged = %t, want %t (the Networks' message is the same: %t)", step.name, listed.QuotaChanged, step.wantChanged, !step.wantChanged)
		}
	}
}
