package inventory_test

import (
	"context"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAPauseInTheWritesListsWhatTheyDid: the writes of a burst are listed
// once they pause for WritesQuiet, and the network a create made is then
// deleted in one request, onto the revision that list read. Another burst
// soon after waits for its turn: writes pausing ask for at most
// quietListsPerPeriod (10) lists per ResyncPeriod, here one per 6
// minutes. Nothing written, nothing listed. (When a tick finds a list
// due: TestAListIsDueOnceTheWritesPause.)
func TestAPauseInTheWritesListsWhatTheyDid(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	f := fake.New()
	const quiet = 2 * time.Second
	inv := inventory.New(f, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour,
		WritesQuiet: quiet, Clock: clk})
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	l := runLoop(ctx, t, inv, clk)

	// A burst: a write every second, under the quiet period.
	var made []string
	for range 6 {
		n, err := inv.CreateNetwork(ctx, ownerA, 0)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, n.ID)
		clk.Step(time.Second)
	}
	lastWrite := clk.Now().Add(-time.Second)
	first := l.next("once the writes pause", 500*time.Millisecond, time.Minute)
	if first.Started.Before(lastWrite) {
		t.Errorf("a list began %v before the burst's last write", lastWrite.Sub(first.Started))
	}
	if after := first.Started.Sub(lastWrite); after > 2*quiet+inventory.MinListGap {
		t.Errorf("listed %v after the last write, want within two quiet periods and the pace's gap", after)
	}

	f.ClearRequests()
	if err := inv.DeleteNetwork(ctx, ownerA, made[0]); err != nil {
		t.Fatal(err)
	}
	if got := f.Requests(); !slices.Equal(got, []string{fake.DeleteNetwork}) {
		t.Errorf("requests %q, want one %s onto the revision the list read", got, fake.DeleteNetwork)
	}

	// That delete is a write too: its list waits until 6 minutes after
	// the one before was asked for.
	second := l.next("a tenth of the resync period after the last", quiet, 8*time.Minute)
	if gap := second.Started.Sub(first.Started); gap < 6*time.Minute-quiet {
		t.Errorf("the second list began %v after the first, want a tenth of the resync period (6m)", gap)
	}

	// Nothing written since: nothing more until the period.
	for range 60 {
		clk.Step(quiet)
	}
	l.none("with nothing written since the last list")
	if !slices.ContainsFunc(f.Networks(), func(n neutron.Network) bool { return n.ID == made[1] }) {
		t.Fatal("the network not deleted is gone")
	}
}
