package inventory

import (
	"context"
	"errors"
	"fmt"

	"github.com/samplecrd/network-controller/pkg/component/leader"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// The door's checks, asked before every request it makes (door.go,
// revision.go, routers.go), and what it does after one that failed.

// ErrListPending is what a write returns for an owner whose previous write
// went unanswered, until a list of Neutron begun after it succeeds: Neutron
// may have done that write, and only a list says whether.
var ErrListPending = errors.New("a request of this Network went unanswered; waiting for a list of Neutron to show what it did")

// ErrFenced is what a write returns while this replica cannot prove it
// still leads (Options.Fence): another replica may have taken over while
// this one was frozen or cut off, and acts on a fresher view of Neutron.
// It is the API server's refusal too (leader.WrapTransport).
var ErrFenced = leader.ErrFenced

// allowWrite returns ctx for a write of owner's that may go to Neutron
// (allowRead's), else why not: this replica may no longer lead, the
// breaker is open, the credentials reach another place than the store was
// listed in, or a write of owner's went unanswered and no list since has
// shown what became of it. The fence comes first and is asked at the
// last moment before the request: a process resumed after a freeze runs
// its queued syncs on a cache from before it, at once, while its renewal
// is still on the wire.
func (inv *Inventory) allowWrite(ctx context.Context, owner neutron.Owner) (context.Context, error) {
	if err := inv.fence(); err != nil {
		return ctx, err
	}
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return ctx, err
	}
	if err := inv.samePlace(ctx); err != nil {
		return ctx, err
	}
	inv.unsureMu.Lock()
	defer inv.unsureMu.Unlock()
	if _, ok := inv.unsure[owner.UID]; ok {
		return ctx, ErrListPending
	}
	return ctx, nil
}

// allowRead returns ctx for a request of the door's, unless the breaker
// is open: ctx requires that the request go to the place the store was
// listed in (neutron.InPlace). samePlace refuses a write earlier, with a
// message that says why, but only the client that sends the request can
// tell, at that moment, where it goes: a clouds.yaml swapped in between
// would send a create to a place nothing lists, and answer a read with
// another place's 404, which a delete takes for done.
func (inv *Inventory) allowRead(ctx context.Context) (context.Context, error) {
	if err := inv.breaker.allow(); err != nil {
		return ctx, err
	}
	listed := inv.store.Status().Place
	return context.WithValue(neutron.InPlace(ctx, listed), listedKey{}, listed), nil
}

// listedKey is the context key of the place the store was listed in when
// the door allowed a request (allowRead): the place the request goes to,
// and so the only one whose store may record what it did.
type listedKey struct{}

// listedAt is the place the door allowed the request made with ctx in.
func listedAt(ctx context.Context) neutron.Place {
	place, _ := ctx.Value(listedKey{}).(neutron.Place)
	return place
}

// fence returns ErrFenced while this replica cannot prove it still leads
// (Options.Fence): asked last before every write, and again before a
// write that reads first.
func (inv *Inventory) fence() error {
	if inv.opts.Fence == nil {
		return nil
	}
	if err := inv.opts.Fence(); err != nil {
		metrics.WritesFenced.WithLabelValues(metrics.FencedNeutron).Inc()
		return fmt.Errorf("%w: %v", ErrFenced, err)
	}
	return nil
}

// samePlace refuses a write while the credentials reach another place
// (Keystone, region, interface or project) than the one the store was
// listed in: a clouds.yaml changed in place (the controller's, or a
// namespace's Secret) swaps the client, not the store. Every ID the store
// holds is the old place's, so a delete would be answered 404 by the new
// one and counted as done, and the Network's resources would be left for
// good where nothing lists them again. A list of the new place, asked for
// at once, ends the refusal; from then on the ladder's own check
// (status.place) keeps each Network from being made again elsewhere. It
// costs no request: the client knows its token's place.
func (inv *Inventory) samePlace(ctx context.Context) error {
	now, err := inv.client.Place(ctx)
	if err != nil {
		return err
	}
	return inv.ListedIn(now)
}

// ListedIn returns nil when the store was last listed in place, else a
// *neutron.CredentialsError that names both places, and asks for a list:
// what the store holds, or does not, says nothing of another place.
func (inv *Inventory) ListedIn(place neutron.Place) error {
	listed := inv.store.Status().Place
	if listed == place {
		return nil
	}
	inv.RequestRefresh(0)
	return &neutron.CredentialsError{Reason: fmt.Sprintf(
		"Neutron was last listed in %s, not in %s that the credentials now reach or this Network is in; "+
			"nothing is done until it is listed again", listed, place)}
}

// afterFailedWrite handles a write of owner's that failed. Anything but a
// refusal, which Neutron sends only for what it did not do, or a request
// the client would not send to another place, leaves the write's outcome
// unknown: owner's writes wait for a list begun after now, and one is
// asked for LateCompletionGrace later. A request with no answer at all
// counts towards the breaker.
func (inv *Inventory) afterFailedWrite(owner neutron.Owner, err error) error {
	var rejected *neutron.RejectedError
	if errors.As(err, &rejected) || neutron.IsAuthError(err) {
		inv.breaker.succeed() // an answer
		return err
	}
	if neutron.IsCredentialsError(err) {
		// Refused before it was sent, by a client of another place
		// (neutron.InPlace): nothing to wait for but a list of it.
		inv.RequestRefresh(0)
		return err
	}
	inv.unsureMu.Lock()
	inv.unsure[owner.UID] = inv.clock.Now()
	inv.unsureMu.Unlock()
	inv.RequestRefresh(inv.opts.LateCompletionGrace)
	if neutron.Unreachable(err) {
		inv.breaker.fail()
	}
	return err
}

// afterFailedRead counts a read that got no answer at all towards the
// breaker. A read changes nothing in Neutron, so, unlike a write, it
// leaves no outcome for a list to find.
func (inv *Inventory) afterFailedRead(err error) error {
	switch {
	case err == nil:
		inv.breaker.succeed()
	case neutron.Unreachable(err):
		inv.breaker.fail()
	}
	return err
}
