// Package inventory is Neutron's informer: a cache of what Neutron holds
// under the controller's mark (Store), the loop that lists Neutron into it
// (Run), and the single door through which the controller reads and writes
// Neutron (door.go), guarded by ownership and by a circuit breaker
// (breaker.go). Health says, in one place, whether Neutron can be trusted.
//
// Nothing above this package talks to Neutron except through an Inventory.
package inventory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// unsyncedRefreshInterval is how often Neutron is listed while the latest
// list failed or the breaker is open (then probing before it lists).
const unsyncedRefreshInterval = 5 * time.Second

// refreshKey is the one key of the refresh queue: a delaying work queue
// with a single key is a timer that coalesces requests (the earliest
// wins) and never runs two lists at once.
const refreshKey = "list"

// Options tune an Inventory.
type Options struct {
	// ResyncPeriod is how often Neutron is listed anew, which is how drift
	// made outside the controller is noticed.
	ResyncPeriod time.Duration
	// LateCompletionGrace is how long a Neutron request whose answer was
	// lost may still complete in Neutron (a request timeout is enough).
	// Neutron is listed again this long after any such request, so a
	// create that completed late is seen then rather than at the next
	// periodic list.
	LateCompletionGrace time.Duration
	// Fence, when set, is asked before every write to Neutron and refuses
	// it with an error when this replica cannot prove it still leads
	// (pkg/component/leader's Fence.Check); nil when leader election is off.
	Fence func() error
	// Reachability, when set, is whether the latest Neutron request of
	// any kind was answered: part of Health.
	Reachability *neutron.Reachability
	// Pace spaces this inventory's lists (pace.go): pkg/controller/tenancy
	// shares one between the inventories of one namespace's credentials
	// at one project, built or built again. nil is one of its own.
	Pace *Pace
	// Share, when set, is how many namespaces list this inventory's
	// project, asked before each list: each has 1/Share() of the
	// project's list rate (pace.go). nil is 1.
	Share func() int
	// WritesQuiet, when set, lists Neutron once the controller's writes
	// have paused this long and the latest list may not show them
	// (quiet.go): DefaultWritesQuiet in the controller, 0 (never) in
	// tests that count lists.
	WritesQuiet time.Duration
	// QuotaExports, when set, is shared by every inventory that may list
	// the same project (quota.go); nil is one of its own.
	QuotaExports *QuotaExports
	// Clock is the real clock when nil.
	Clock clock.WithTicker
}

// Inventory lists Neutron into its Store, and is the controller's one way
// to read and write Neutron.
type Inventory struct {
	client  neutron.Interface
	mark    neutron.Mark
	store   *Store
	breaker breaker
	// refresh holds refreshKey until the next list is due.
	refresh workqueue.TypedDelayingInterface[string]
	clock   clock.WithTicker
	opts    Options

	// unsure holds, by owner UID, when a write of that owner went
	// unanswered: Neutron may have done it, up to LateCompletionGrace
	// later. The owner's writes and its delete wait for a list begun after
	// that, which shows what happened (door.go, Settled).
	unsureMu sync.Mutex
	unsure   map[types.UID]time.Time

	// recovered is set when a probe closed the breaker, until a list
	// reports it (Listed.Recovered).
	recovered atomic.Bool

	// pace spaces the lists of Run and ListWhenDue (pace.go).
	pace *Pace

	// quota is the project's quota, read with each list (quota.go).
	quota quotaWatch
}

// Listed is what one successful list of Neutron found.
type Listed struct {
	// Started is when the list began: what it shows is at least that recent.
	Started time.Time
	// Changed are the UIDs whose resources changed other than by the
	// controller's own recorded writes: drift, and late completions.
	Changed []types.UID
	// Recount are the UIDs whose subnets' address counts alone changed
	// (Store.IPs, Store.Recount): their status reports the counts.
	Recount []types.UID
	// Recovered is true when this list closed the breaker: whatever waited
	// on Neutron may go now.
	Recovered bool
	// QuotaChanged is true when the quota read with this list is the
	// first, or differs from the last in what is nearly full: every
	// Network of the project says it again (Inventory.Quota).
	QuotaChanged bool
}

// New returns an empty, unsynced Inventory of the resources that carry
// mark, read and written through client.
func New(client neutron.Interface, mark neutron.Mark, opts Options) *Inventory {
	clk := cmp.Or[clock.WithTicker](opts.Clock, clock.RealClock{})
	inv := &Inventory{
		client: client,
		mark:   mark,
		store:  NewStore(client, mark),
		refresh: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{
			Name: "neutron-refresh", Clock: clk,
		}),
		clock:  clk,
		opts:   opts,
		unsure: map[types.UID]time.Time{},
		pace:   opts.Pace,
	}
	if inv.pace == nil {
		inv.pace = &Pace{}
	}
	inv.quota.exports = cmp.Or(opts.QuotaExports, &QuotaExports{})
	inv.breaker.clock = clk
	inv.breaker.threshold = breakerThreshold
	return inv
}

// Get returns a copy of what Neutron holds for uid.
func (inv *Inventory) Get(uid types.UID) Owned { return inv.store.Get(uid) }

// IPs returns the address counts of the subnets of owner's network id as
// the latest list read them, and whether it read any (Store.IPs).
func (inv *Inventory) IPs(owner types.UID, networkID string) ([]neutron.SubnetIPs, bool) {
	return inv.store.IPs(owner, networkID)
}

// UIDs returns every UID that owns something in Neutron.
func (inv *Inventory) UIDs() []types.UID { return inv.store.UIDs() }

// Quota returns the quota of the project a Network recorded in place
// lives in, as the latest list read it: nil before the first read, and
// always for a client that reads none (a plan's, a noauth Neutron's); a
// quota that limits nothing when place is not where the credentials
// reach now (quota.go).
func (inv *Inventory) Quota(place neutron.Place) *neutron.Quota { return inv.quota.quotaOf(place) }

// Synced reports whether a list of Neutron has ever succeeded.
func (inv *Inventory) Synced() bool { return inv.store.Status().Synced }

// ListWhenDue lists Neutron once, as soon as the pace allows (pace.go), or
// returns ctx's error: a project's first list, which must wait for its
// namespace's part of the project like any other, when its credential was
// built again.
func (inv *Inventory) ListWhenDue(ctx context.Context) (Listed, error) {
	for {
		wait := inv.pace.claim(inv.clock.Now(), inv.share())
		if wait == 0 {
			return inv.Refresh(ctx)
		}
		select {
		case <-ctx.Done():
			return Listed{}, ctx.Err()
		case <-inv.clock.After(wait):
		}
	}
}

// Refresh lists Neutron once, now, and paces the next list by it
// (pace.go): whoever lists, the pace's next waits for it. A list that
// succeeds reads the project's quota too: one request per list, none
// per Network.
func (inv *Inventory) Refresh(ctx context.Context) (Listed, error) {
	started := inv.clock.Now()
	changed, err := inv.store.Refresh(ctx)
	inv.pace.listed(started, inv.clock.Now())
	metrics.ObserveRefresh(err, inv.store.Status().Unrecognised)
	if err != nil {
		if neutron.Unreachable(err) {
			inv.breaker.fail()
		}
		return Listed{}, err
	}
	inv.breaker.succeed()
	inv.settle(started)
	recovered := inv.breaker.resetAfter(started)
	quotaChanged := inv.quota.update(ctx, inv.client)
	return Listed{Started: started, Changed: changed, Recount: inv.store.Recount(), Recovered: inv.recovered.Swap(false) || recovered, QuotaChanged: quotaChanged}, nil
}

// Probe asks Neutron its cheapest question (one network's ID), and closes
// the breaker if Neutron answers and was asked after the last failure.
// Writes may then go again at once, whether or not a full list can finish
// (a list costs a request per page of 1,000): each Network whose write
// went unanswered still waits for a list of its own (door.go), and the
// next list that succeeds reports Recovered, which queues every Network.
// Run probes before it lists while the breaker is open, so a Neutron that
// is down costs one small request every few seconds.
func (inv *Inventory) Probe(ctx context.Context) error {
	started := inv.clock.Now()
	if err := inv.client.Probe(ctx); err != nil {
		if neutron.Unreachable(err) {
			inv.breaker.fail()
		}
		return err
	}
	inv.breaker.succeed()
	if inv.breaker.resetAfter(started) {
		inv.recovered.Store(true)
	}
	return nil
}

// Run lists Neutron every ResyncPeriod, every few seconds while the latest
// list failed or the breaker is open, and when RequestRefresh asks, until
// ctx ends, never sooner than the pace allows (pace.go). It hands every
// successful list to handle. One list comes a LateCompletionGrace after
// start: a predecessor that died may have left a create in flight.
func (inv *Inventory) Run(ctx context.Context, handle func(context.Context, Listed)) {
	go func() {
		<-ctx.Done()
		inv.refresh.ShutDown()
		inv.breaker.release()
	}()
	inv.RequestRefresh(inv.opts.LateCompletionGrace)
	go inv.listWhenWritesPause(ctx)
	defer inv.quota.forget()
	for {
		inv.refresh.AddAfter(refreshKey, inv.nextInterval())
		key, shutdown := inv.refresh.Get()
		if shutdown {
			return
		}
		if wait := inv.pace.claim(inv.clock.Now(), inv.share()); wait > 0 {
			// Asked for sooner than the pace allows: the same list, later.
			inv.refresh.Done(key)
			inv.RequestRefresh(wait)
			continue
		}
		if inv.breaker.isOpen() {
			if err := inv.Probe(ctx); err != nil {
				inv.pace.unclaim() // a probe is no list
				inv.refresh.Done(key)
				utilruntime.HandleErrorWithContext(ctx, err, "Neutron does not answer its probe; will probe again")
				continue
			}
		}
		listed, err := inv.Refresh(ctx)
		inv.refresh.Done(key)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Listing Neutron failed; will retry")
			continue
		}
		handle(ctx, listed)
	}
}

// listWhenWritesPause asks for one list once the writes recorded in the
// store have paused for WritesQuiet, when some of them were recorded after
// the latest list began (Store.Unlisted; when: pauseWatch, quiet.go). A burst of creates is then
// listed seconds after its last write instead of up to a ResyncPeriod
// later, which buys two things a list alone gives: the subnets' address
// counts in their Networks' status, and the proof a network DELETE is
// sent onto in one request (Store.ListedRevision), which a network
// written to since the list has not. A create storm is never listed in
// the middle: its writes do not pause.
func (inv *Inventory) listWhenWritesPause(ctx context.Context) {
	if inv.opts.WritesQuiet <= 0 {
		return
	}
	w := pauseWatch{gap: inv.opts.ResyncPeriod / quietListsPerPeriod}
	tick := inv.clock.NewTicker(inv.opts.WritesQuiet)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
		writes, unlisted := inv.store.Unlisted()
		if w.due(inv.clock.Now(), writes, unlisted) {
			inv.RequestRefresh(0)
		}
	}
}

// share is Options.Share's answer, 1 without one.
func (inv *Inventory) share() int {
	if inv.opts.Share == nil {
		return 1
	}
	return inv.opts.Share()
}

// Inherit takes on the writes of old, an inventory of the same
// credential that this one replaces, whose answers were lost: they may
// still complete in Neutron, so their owners' writes wait here too for a
// list that shows what they did, and one is asked for a grace period on.
func (inv *Inventory) Inherit(old *Inventory) {
	old.unsureMu.Lock()
	unsure := maps.Clone(old.unsure)
	old.unsureMu.Unlock()
	if len(unsure) == 0 {
		return
	}
	inv.unsureMu.Lock()
	maps.Copy(inv.unsure, unsure)
	inv.unsureMu.Unlock()
	inv.RequestRefresh(inv.opts.LateCompletionGrace)
}

// settle clears the owners whose unanswered write went unanswered at
// least LateCompletionGrace before a list that began at started: that
// list shows what the write did. A list begun sooner (the periodic one,
// or one asked for at once) may miss a write that neutron-server was
// still carrying out, and would let the owner's delete finalize from a
// view without it (TestAReleaseWaitsOutTheGraceOfALostMark). Such a list
// may have taken the place of the one the lost write asked for (requests
// coalesce), so it asks again for the earliest owner still waiting.
func (inv *Inventory) settle(started time.Time) {
	inv.unsureMu.Lock()
	defer inv.unsureMu.Unlock()
	var next *time.Time
	for uid, at := range inv.unsure {
		due := at.Add(inv.opts.LateCompletionGrace)
		if !started.Before(due) {
			delete(inv.unsure, uid)
		} else if next == nil || due.Before(*next) {
			next = &due
		}
	}
	if next != nil {
		inv.RequestRefresh(max(0, next.Sub(inv.clock.Now())))
	}
}

// nextInterval is how long until the next periodic list.
func (inv *Inventory) nextInterval() time.Duration {
	if st := inv.store.Status(); !st.Synced || st.Err != nil || inv.breaker.isOpen() {
		return min(inv.opts.ResyncPeriod, unsyncedRefreshInterval)
	}
	return inv.opts.ResyncPeriod
}

// RequestRefresh asks for one extra list of Neutron after d. Requests
// coalesce: the earliest pending one wins, once the pace allows (pace.go).
func (inv *Inventory) RequestRefresh(d time.Duration) {
	inv.refresh.AddAfter(refreshKey, d)
}

// ListDue reports whether a list has been asked for and is due now, not
// yet begun: what tests look at to see that a request cost no list.
func (inv *Inventory) ListDue() bool { return inv.refresh.Len() > 0 }

// Health is everything known of Neutron's health, in one place.
type Health struct {
	// Synced is true once a list has succeeded.
	Synced bool
	// ListErr is the error of the latest list, nil when it succeeded.
	ListErr error
	// Down is the open breaker's refusal, nil when it is closed.
	Down error
	// Unreachable is why the latest request of any kind got no answer.
	Unreachable error
	// Unrecognised counts resources that carry the mark but whose name
	// does not parse as ours: left alone, reported for an operator.
	Unrecognised int
}

// Health returns the inventory's view of Neutron now.
func (inv *Inventory) Health() Health {
	st := inv.store.Status()
	h := Health{Synced: st.Synced, ListErr: st.Err, Down: inv.breaker.allow(), Unrecognised: st.Unrecognised}
	if inv.opts.Reachability != nil {
		h.Unreachable = inv.opts.Reachability.Err()
	}
	return h
}

// Err is what readiness reports: nil when Neutron has been listed, the
// latest list succeeded and the latest request was answered.
func (h Health) Err() error {
	switch {
	case h.ListErr != nil:
		return fmt.Errorf("listing Neutron: %w", h.ListErr)
	case !h.Synced:
		return ErrNotSynced
	}
	return h.Unreachable
}

// AuthFailed reports whether Neutron is out of reach because the
// controller's credentials were refused.
func (h Health) AuthFailed() bool { return neutron.IsAuthError(h.ListErr) }
