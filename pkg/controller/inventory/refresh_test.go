package inventory

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// requests records the refresh requests of an Inventory.
type requests struct {
	workqueue.TypedDelayingInterface[string]
	after []time.Duration
}

func (r *requests) AddAfter(key string, d time.Duration) {
	r.after = append(r.after, d)
	r.TypedDelayingInterface.AddAfter(key, d)
}

// lostAnswerParties are the mark and the owner of the lost-answer tests.
func lostAnswerParties(t *testing.T) (neutron.Mark, neutron.Owner) {
	t.Helper()
	mark, err := neutron.NewMark("prod", "c1c1c1c1-0000-4000-8000-0000000000c1")
	if err != nil {
		t.Fatal(err)
	}
	return mark, neutron.Owner{Namespace: "ns", Name: "a", UID: "0a0a0a0a-0000-4000-8000-00000000000a"}
}

// TestALostAnswerAsksForAListAfterTheGrace: a write whose answer was lost
// may still complete, so it asks for a list a LateCompletionGrace later; a
// refusal, which Neutron sends only for what it did not do, asks for none,
// and neither does a read.
func TestALostAnswerAsksForAListAfterTheGrace(t *testing.T) {
	ctx := context.Background()
	mark, owner := lostAnswerParties(t)
	tests := []struct {
		name string
		fail func(f *fake.Neutron)
		call func(inv *Inventory) error
		want []time.Duration
	}{
		{"a refused create", func(f *fake.Neutron) {
			f.FailOn(fake.CreateNetwork, neutron.ErrorForResponse("creating network", 400, "InvalidInput", "no"))
		}, func(inv *Inventory) error { _, err := inv.CreateNetwork(ctx, owner, 0); return err }, nil},
		{"a create whose answer was lost", func(f *fake.Neutron) { f.CompleteLate(fake.CreateNetwork) },
			func(inv *Inventory) error { _, err := inv.CreateNetwork(ctx, owner, 0); return err }, []time.Duration{time.Minute}},
		{"a create without an answer", func(f *fake.Neutron) { f.FailOn(fake.CreateNetwork, errors.New("connection refused")) },
			func(inv *Inventory) error { _, err := inv.CreateNetwork(ctx, owner, 0); return err }, []time.Duration{time.Minute}},
		{"a read without an answer", func(f *fake.Neutron) { f.FailOn(fake.GetNetwork, errors.New("connection refused")) },
			func(inv *Inventory) error { _, err := inv.GetNetwork(ctx, "net-1"); return err }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fake.New()
			inv := New(f, mark, Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Minute})
			rec := &requests{TypedDelayingInterface: inv.refresh}
			inv.refresh = rec
			tc.fail(f)
			if err := tc.call(inv); err == nil {
				t.Fatal("the request succeeded")
			}
			if !slices.Equal(rec.after, tc.want) {
				t.Errorf("lists asked for after %v, want %v", rec.after, tc.want)
			}
		})
	}
}

// TestAListWithinTheGraceAsksForOneAtItsEnd: a list begun within the
// grace of a lost answer (the periodic one, or one asked for sooner, which
// took the place of the lost write's own request: requests coalesce) does
// not settle its owner, and asks for the list that will, when the grace
// ends.
func TestAListWithinTheGraceAsksForOneAtItsEnd(t *testing.T) {
	ctx := context.Background()
	mark, owner := lostAnswerParties(t)
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	f := fake.New()
	inv := New(f, mark, Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Minute, Clock: clk})
	rec := &requests{TypedDelayingInterface: inv.refresh}
	inv.refresh = rec
	f.CompleteLate(fake.CreateNetwork)
	if _, err := inv.CreateNetwork(ctx, owner, 0); err == nil {
		t.Fatal("the create whose answer was lost succeeded")
	}
	clk.Step(10 * time.Second)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{time.Minute, 50 * time.Second}; !slices.Equal(rec.after, want) {
		t.Errorf("lists asked for after %v, want %v: the lost write's, then the grace's end", rec.after, want)
	}
	if _, err := inv.Settled(owner.UID); !errors.Is(err, ErrListPending) {
		t.Errorf("Settled after a list within the grace = %v, want ErrListPending", err)
	}
	clk.Step(50 * time.Second)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Settled(owner.UID); err != nil {
		t.Errorf("Settled after the list at the grace's end: %v", err)
	}
	if len(rec.after) != 2 {
		t.Errorf("lists asked for after %v: a settled owner asks for no more", rec.after)
	}
}
