package inventory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// listed returns an Inventory over f, listed once, with LateCompletionGrace
// grace on clk.
func listed(t *testing.T, f *fake.Neutron, grace time.Duration, clk *clocktesting.FakeClock) *inventory.Inventory {
	t.Helper()
	inv := inventory.New(f, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: grace, Clock: clk})
	if _, err := inv.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.ClearRequests()
	return inv
}

// TestTheDoorWritesOnlyWhatTheStoreHoldsForTheOwner: every write to an
// existing resource is refused, before any request, unless the store
// holds it for that owner: another owner's resource, another cluster's,
// a person's.
func TestTheDoorWritesOnlyWhatTheStoreHoldsForTheOwner(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	ours, theirs := mark(t, "prod"), mark(t, "staging")
	netA, subA := seed(f, ours, ownerA, "10.0.0.0/24")
	netOther, subOther := seed(f, theirs, ownerB, "10.1.0.0/24")
	handmade := f.AddNetwork("handmade", "")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))

	writes := map[string]func(owner neutron.Owner, networkID, subnetID string) error{
		"UpdateNetwork": func(o neutron.Owner, n, _ string) error {
			_, err := inv.UpdateNetwork(ctx, o, n, neutron.NetworkUpdate{MTU: ptr.To(1400)})
			return err
		},
		"UpdateSubnet": func(o neutron.Owner, _, s string) error {
			_, err := inv.UpdateSubnet(ctx, o, s, neutron.SubnetUpdate{Gateway: ptr.To("")})
			return err
		},
		"DeleteSubnet":   func(o neutron.Owner, _, s string) error { return inv.DeleteSubnet(ctx, o, s) },
		"DeleteNetwork":  func(o neutron.Owner, n, _ string) error { return inv.DeleteNetwork(ctx, o, n) },
		"ReleaseSubnet":  func(o neutron.Owner, _, s string) error { return inv.ReleaseSubnet(ctx, o, s, nil) },
		"ReleaseNetwork": func(o neutron.Owner, n, _ string) error { return inv.ReleaseNetwork(ctx, o, n, nil) },
	}
	targets := []struct {
		name            string
		owner           neutron.Owner
		network, subnet string
	}{
		{"another owner's (A's resources, asked for B)", ownerB, netA, subA},
		{"another cluster's", ownerB, netOther, subOther},
		{"a person's", ownerA, handmade, "subnet-none"},
	}
	for verb, write := range writes {
		for _, tc := range targets {
			t.Run(verb+" of "+tc.name, func(t *testing.T) {
				if err := write(tc.owner, tc.network, tc.subnet); !errors.Is(err, inventory.ErrNotOurs) {
					t.Errorf("%s = %v, want ErrNotOurs", verb, err)
				}
				if got := f.Requests(); len(got) != 0 {
					t.Errorf("requests %q", got)
				}
			})
		}
	}
	if err := inv.DeleteSubnet(ctx, ownerA, subA); err != nil {
		t.Errorf("deleting A's own subnet: %v", err)
	}
}

// TestTheOpenBreakerRefusesEveryRequest: three requests in a row without
// an answer open the breaker; then nothing goes to Neutron, reads
// included, until a list that began after the last failure succeeds.
func TestTheOpenBreakerRefusesEveryRequest(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
	f.FailOn(fake.CreateNetwork, errors.New("connection refused"))
	for _, o := range []neutron.Owner{ownerA, ownerB, ownerC} {
		if _, err := inv.CreateNetwork(ctx, o, 0); err == nil {
			t.Fatal("the create succeeded")
		}
	}
	f.ClearRequests()
	if _, err := inv.GetNetwork(ctx, "net-1"); !errors.Is(err, inventory.ErrNeutronDown) {
		t.Errorf("a read with the breaker open = %v", err)
	}
	if _, err := inv.CreateNetwork(ctx, ownerD, 0); !errors.Is(err, inventory.ErrNeutronDown) {
		t.Errorf("a write with the breaker open = %v", err)
	}
	if got := f.Requests(); len(got) != 0 {
		t.Errorf("requests %q with the breaker open", got)
	}
	if inv.Health().Down == nil {
		t.Error("Health does not say the breaker is open")
	}
	l, err := inv.Refresh(ctx)
	if err != nil || !l.Recovered || inv.Health().Down != nil {
		t.Errorf("the list after the failures: %+v, %v; Health %+v", l, err, inv.Health())
	}
}

// TestAProjectAnsweredWithoutARequestKeepsTheBreakerCounting: the client
// answers Place from its token, so asking it between unanswered writes
// (as every new Network's first pass does) is no answer from Neutron, and
// three unanswered writes still open the breaker.
func TestAProjectAnsweredWithoutARequestKeepsTheBreakerCounting(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	f.SetProject("project-a")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
	f.FailOn(fake.CreateNetwork, errors.New("connection refused"))
	for _, o := range []neutron.Owner{ownerA, ownerB, ownerC} {
		if _, err := inv.Place(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := inv.CreateNetwork(ctx, o, 0); err == nil {
			t.Fatal("the create succeeded")
		}
	}
	if inv.Health().Down == nil {
		t.Error("three unanswered writes, with the project asked between them, left the breaker closed")
	}
}

// TestARebuiltCredentialInheritsTheLostAnswers: a credential rebuilt (its
// Secret changed) gets a new inventory; a write the old one sent whose
// answer was lost may still complete, so its owner's writes wait in the
// new one too, and only its.
func TestARebuiltCredentialInheritsTheLostAnswers(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	f := fake.New()
	old := listed(t, f, time.Hour, clk)
	f.CompleteLate(fake.CreateNetwork)
	if _, err := old.CreateNetwork(ctx, ownerA, 0); err == nil {
		t.Fatal("the create whose answer was lost succeeded")
	}
	rebuilt := listed(t, f, time.Hour, clk)
	rebuilt.Inherit(old)
	if _, err := rebuilt.CreateNetwork(ctx, ownerA, 0); !errors.Is(err, inventory.ErrListPending) {
		t.Errorf("the owner of the lost create wrote again through the rebuilt inventory: %v", err)
	}
	if _, err := rebuilt.CreateNetwork(ctx, ownerB, 0); err != nil {
		t.Errorf("another owner waits too: %v", err)
	}
}

// TestMarkingTwiceWritesOnce: MarkNetwork and MarkSubnet of a resource the
// store already holds for the owner (an adoption's pass after the one
// that marked it) send nothing. The network is read after the subnet's
// mark, which raised its revision, as adoption reads it.
func TestMarkingTwiceWritesOnce(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	netID := f.AddNetwork("handmade", "")
	subID := f.AddSubnet(netID, "handmade", "", "10.1.0.0/24", "10.1.0.1")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
	sub := f.Subnets()[0]
	for range 2 {
		if err := inv.MarkSubnet(ctx, ownerA, sub); err != nil {
			t.Fatal(err)
		}
		net := f.Networks()[0]
		if net.ID != netID || sub.ID != subID {
			t.Fatalf("seeded %s/%s, found %s/%s", netID, subID, net.ID, sub.ID)
		}
		if _, err := inv.MarkNetwork(ctx, ownerA, net); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.Requests(); len(got) != 2 {
		t.Errorf("requests %q, want one update of each", got)
	}
}

// TestAMarkIsWrittenOnlyOntoTheRevisionRead: MarkSubnet and MarkNetwork
// of a resource changed since the caller read it (another Network's
// adoption marked it meanwhile) leave it as it is, with Neutron's 412; the
// refusal is an answer, so the owner's next mark, of a fresh read, goes
// out at once.
func TestAMarkIsWrittenOnlyOntoTheRevisionRead(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	netID := f.AddNetwork("handmade", "")
	f.AddSubnet(netID, "handmade", "", "10.1.0.0/24", "10.1.0.1")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
	net, sub := f.Networks()[0], f.Subnets()[0]
	theirs := ptr.To("theirs")
	if _, err := f.UpdateSubnet(ctx, sub.ID, neutron.SubnetUpdate{Name: theirs}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.UpdateNetwork(ctx, net.ID, neutron.NetworkUpdate{Name: theirs}); err != nil {
		t.Fatal(err)
	}
	if err := inv.MarkSubnet(ctx, ownerA, sub); !neutron.IsStale(err) {
		t.Errorf("marking a subnet changed since its read: %v, want Neutron's 412", err)
	}
	if _, err := inv.MarkNetwork(ctx, ownerA, net); !neutron.IsStale(err) {
		t.Errorf("marking a network changed since its read: %v, want Neutron's 412", err)
	}
	if n, s := f.Networks()[0], f.Subnets()[0]; n.Name != *theirs || s.Name != *theirs {
		t.Errorf("marked over the change made since the read: network %q, subnet %q", n.Name, s.Name)
	}
	if err := inv.MarkSubnet(ctx, ownerA, f.Subnets()[0]); err != nil {
		t.Errorf("marking the subnet as read again: %v", err)
	}
}

// TestALostAnswerHoldsBackItsOwnerOnly: a write whose answer was lost may
// have been done, so its Network's writes wait for a list begun after it,
// which shows what happened; other Networks' writes go on, and one failure
// does not open the breaker.
func TestALostAnswerHoldsBackItsOwnerOnly(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	f := fake.New()
	inv := listed(t, f, time.Hour, clk)
	f.CompleteLate(fake.CreateNetwork)
	if _, err := inv.CreateNetwork(ctx, ownerA, 0); err == nil {
		t.Fatal("the create whose answer was lost succeeded")
	}
	if _, err := inv.CreateNetwork(ctx, ownerA, 0); !errors.Is(err, inventory.ErrListPending) {
		t.Errorf("A's next write = %v, want ErrListPending", err)
	}
	if _, err := inv.CreateNetwork(ctx, ownerB, 0); err != nil {
		t.Errorf("B's write after A's lost answer: %v", err)
	}
	if inv.Health().Down != nil {
		t.Error("one lost answer opened the breaker")
	}
	// A list begun within the grace may miss a write neutron-server is
	// still carrying out: it does not settle A.
	clk.Step(time.Second)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := inv.Get(ownerA.UID).Networks; len(got) != 1 {
		t.Fatalf("the list shows %d networks of A, want the one the lost create made", len(got))
	}
	if _, err := inv.UpdateNetwork(ctx, ownerA, inv.Get(ownerA.UID).Networks[0].ID, neutron.NetworkUpdate{MTU: ptr.To(1400)}); !errors.Is(err, inventory.ErrListPending) {
		t.Errorf("A's write after a list begun within the grace = %v, want ErrListPending", err)
	}
	clk.Step(time.Hour)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := inv.UpdateNetwork(ctx, ownerA, inv.Get(ownerA.UID).Networks[0].ID, neutron.NetworkUpdate{MTU: ptr.To(1400)}); err != nil {
		t.Errorf("A's write after a list begun after the grace: %v", err)
	}
}

// TestHealthSaysWhyNeutronIsNotTrusted: one Health, from every source.
func TestHealthSaysWhyNeutronIsNotTrusted(t *testing.T) {
	f := fake.New()
	inv := inventory.New(f, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour})
	if err := inv.Health().Err(); !errors.Is(err, inventory.ErrNotSynced) {
		t.Errorf("before a list: %v", err)
	}
	auth := &neutron.AuthError{Op: "connecting to the cloud", Err: errors.New("401")}
	f.FailOn(fake.ListNetworks, auth)
	if _, err := inv.Refresh(context.Background()); err == nil {
		t.Fatal("the list succeeded")
	}
	if h := inv.Health(); !h.AuthFailed() || h.Err() == nil || h.Down != nil {
		t.Errorf("after a refused credential: %+v (a refusal is an answer: no breaker)", h)
	}
	f.FailOn(fake.ListNetworks, nil)
	if _, err := inv.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := inv.Health().Err(); err != nil {
		t.Errorf("after a list: %v", err)
	}
}

// TestRunListsAtStartOnRequestAndOnThePeriod: the loop lists a
// LateCompletionGrace after start, when asked, and every ResyncPeriod, and
// hands each list to its handler. (While no list has succeeded it lists
// every few seconds instead.)
func TestRunListsAtStartOnRequestAndOnThePeriod(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	f := fake.New()
	inv := inventory.New(f, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Minute, Clock: clk})
	// The controller lists once before it runs the loop.
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	l := runLoop(ctx, t, inv, clk)
	l.next("a grace after start", time.Second, 2*time.Minute)
	if since := clk.Since(time.Unix(1e9, 0)); since < time.Minute {
		t.Errorf("listed %v after start, before the grace", since)
	}
	inv.RequestRefresh(0)
	l.next("on request (once the pace allows)", 100*time.Millisecond, 2*inventory.MinListGap)
	l.next("a period later", time.Minute, 2*time.Hour)
	l.none("extra")
}

// TestAFencedReplicaSendsNoWrite: while the fence refuses (this replica
// may no longer lead), no write of any kind reaches Neutron, the breaker
// and the owner's hold are untouched, and writes go out again once the
// fence opens (the Lease was renewed after all).
func TestAFencedReplicaSendsNoWrite(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	netA, subA := seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
	refusal := errors.New("the Lease was last renewed 12s ago")
	inv := inventory.New(f, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour,
		Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0)), Fence: func() error { return refusal }})
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	f.ClearRequests()

	writes := map[string]func() error{
		"CreateNetwork": func() error { _, err := inv.CreateNetwork(ctx, ownerB, 0); return err },
		"CreateSubnet": func() error {
			_, err := inv.CreateSubnet(ctx, ownerA, neutron.SubnetRequest{NetworkID: netA, CIDR: "10.0.1.0/24"})
			return err
		},
		"UpdateNetwork": func() error {
			_, err := inv.UpdateNetwork(ctx, ownerA, netA, neutron.NetworkUpdate{MTU: ptr.To(1400)})
			return err
		},
		"DeleteSubnet":  func() error { return inv.DeleteSubnet(ctx, ownerA, subA) },
		"DeleteNetwork": func() error { return inv.DeleteNetwork(ctx, ownerA, netA) },
		"ReleaseSubnet": func() error { return inv.ReleaseSubnet(ctx, ownerA, subA, nil) },
	}
	for verb, write := range writes {
		if err := write(); !errors.Is(err, inventory.ErrFenced) {
			t.Errorf("%s while fenced = %v, want ErrFenced", verb, err)
		}
	}
	if got := f.Requests(); len(got) != 0 {
		t.Errorf("requests sent while fenced: %q", got)
	}
	if h := inv.Health(); h.Down != nil {
		t.Errorf("the fence opened the breaker: %v", h.Down)
	}

	refusal = nil
	if err := inv.DeleteSubnet(ctx, ownerA, subA); err != nil {
		t.Errorf("deleting once the fence opened: %v", err)
	}
}

// TestAProbeClosesTheBreakerWhileListsStillFail: Neutron answers its
// cheapest question again while a full list still fails (a page times
// out): writes go again at once, and the next list that succeeds reports
// the recovery, which queues every Network.
func TestAProbeClosesTheBreakerWhileListsStillFail(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
	down := errors.New("connection refused")
	f.FailOn(fake.CreateNetwork, down)
	for _, o := range []neutron.Owner{ownerA, ownerB, ownerC} {
		_, _ = inv.CreateNetwork(ctx, o, 0)
	}
	f.FailOn(fake.CreateNetwork, nil)
	f.FailOn(fake.ListNetworks, down)

	f.FailOn(fake.Probe, down)
	if err := inv.Probe(ctx); err == nil || inv.Health().Down == nil {
		t.Fatalf("an unanswered probe: %v, breaker %v; want an error and the breaker open", err, inv.Health().Down)
	}
	f.FailOn(fake.Probe, nil)
	if err := inv.Probe(ctx); err != nil || inv.Health().Down != nil {
		t.Fatalf("an answered probe: %v, breaker %v; want the breaker closed", err, inv.Health().Down)
	}
	if _, err := inv.CreateNetwork(ctx, ownerD, 0); err != nil {
		t.Errorf("a write after the probe: %v", err)
	}
	if _, err := inv.Refresh(ctx); err == nil {
		t.Fatal("the list succeeded")
	}
	f.FailOn(fake.ListNetworks, nil)
	if l, err := inv.Refresh(ctx); err != nil || !l.Recovered {
		t.Errorf("the first list that succeeded: %+v, %v; want Recovered", l, err)
	}
	if l, _ := inv.Refresh(ctx); l.Recovered {
		t.Error("a second list reported the recovery again")
	}
}

// TestRunOnlyProbesWhileTheBreakerIsOpen: while Neutron is down, the loop
// sends one small request every few seconds, never a list.
func TestRunOnlyProbesWhileTheBreakerIsOpen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	f := fake.New()
	inv := listed(t, f, time.Hour, clk)
	down := errors.New("connection refused")
	f.FailOn(fake.CreateNetwork, down)
	for _, o := range []neutron.Owner{ownerA, ownerB, ownerC} {
		_, _ = inv.CreateNetwork(ctx, o, 0)
	}
	f.FailOn(fake.Probe, down)
	f.ClearRequests()
	go inv.Run(ctx, func(context.Context, inventory.Listed) {})

	probes := func() (n int) {
		for _, r := range f.Requests() {
			if r != fake.Probe {
				t.Fatalf("requests %q while the breaker is open, want only probes", f.Requests())
			}
			n++
		}
		return n
	}
	// The loop's timers fire on its own goroutine: move the clock a little
	// at a time until three probes went out.
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		if probes() >= 3 {
			return true, nil
		}
		clk.Step(100 * time.Millisecond)
		return false, nil
	}); err != nil {
		t.Fatalf("%d probes after %v", probes(), clk.Since(time.Unix(1e9, 0)))
	}
}

// TestADeletedNetworkIsForgottenWithItsSubnets: Neutron deletes a
// network's subnets with it, in the one request, so the store forgets
// them with it; the owner's subnet on another network stays held.
func TestADeletedNetworkIsForgottenWithItsSubnets(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	m := mark(t, "prod")
	netA, _ := seed(f, m, ownerA, "10.0.0.0/24")
	elsewhere := f.AddSubnet(f.AddNetwork("handmade", ""), m.ResourceName(ownerA), m.Description(), "10.9.0.0/24", "")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))

	if err := inv.DeleteNetwork(ctx, ownerA, netA); err != nil {
		t.Fatal(err)
	}
	if got := f.Requests(); !slices.Equal(got, []string{fake.DeleteNetwork}) {
		t.Errorf("requests %q, want one %s, onto the revision the list read", got, fake.DeleteNetwork)
	}
	held := inv.Get(ownerA.UID)
	if len(held.Networks) != 0 || len(held.Subnets) != 1 || held.Subnets[0].ID != elsewhere {
		t.Errorf("the store holds %+v, want only subnet %s on the network that is not A's", held, elsewhere)
	}
}
