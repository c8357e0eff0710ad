package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Writes onto a revision seen as the owner's. The store is as old as its
// latest list: since, a person may have taken a resource out of
// management (its mark removed), and another Network may have adopted it
// (its mark written). So every write to a resource the store holds for an
// owner (an update, a release, a delete) is sent onto a revision at which
// the resource was seen carrying the owner's mark (If-Match:
// revision_number=N), and Neutron refuses it (412) if anything changed
// the resource since, rather than let it undo someone else's change. A
// refusal is met by reading the resource again: still the owner's, the
// write goes once more, onto the revision just read; no longer the
// owner's, it is left as it is, a list is asked for, and the error wraps
// ErrMarkGone.
//
// Where the revision comes from is the one thing that differs:
//   - a subnet's is the store's: its latest list, or the owner's own last
//     write, recorded it, and only a change of the subnet raises it;
//   - a network's is read first, because a change of any subnet on it,
//     the owner's own included, raises it too, so the store's is seldom
//     current; a network delete reads its subnets' marks as well
//     (onlyOwners), because Neutron deletes them with it, unless the
//     store holds the network and its subnets as the latest list read
//     them: then the list's revision proves as much as the reads would
//     (Store.ListedRevision), and the DELETE goes onto it at once;
//   - a router's is read first too (routerMarked): its interfaces raise
//     it.

// ErrMarkGone is what a write to a resource of the owner's returns when
// Neutron's answer to a read no longer carries the owner's mark: someone
// took it out of management, or another Network adopted it, after the
// latest list. Nothing more is sent; the list asked for drops it from
// the store, and the next pass sees it is not the Network's.
var ErrMarkGone = errors.New("the ownership mark is gone")

// errGone is what a read before a write returns for a resource no longer
// in Neutron: a delete or a release of it is done, and an update waits
// for a list, as for a mark that is gone.
var errGone = fmt.Errorf("no longer in Neutron: %w", ErrMarkGone)

// revisionReader reads a resource from Neutron and returns the revision
// it is at, or an error that wraps ErrMarkGone (errGone when it is gone)
// if it no longer carries the owner's mark.
type revisionReader func(ctx context.Context) (revision int, err error)

// writeOwned sends write, a write of owner's, onto known (nil: onto what
// read returns), and onto what read returns once more if Neutron refuses
// it as stale, each with the ctx the door's checks return. The fence is
// asked again after each read, at the last moment. It returns the place
// the requests went to (listedAt), in which the caller records what they
// did.
func (inv *Inventory) writeOwned(ctx context.Context, owner neutron.Owner, known *int, read revisionReader, write func(ctx context.Context, revision int) error) (neutron.Place, error) {
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return neutron.Place{}, err
	}
	return listedAt(ctx), inv.writeAllowed(ctx, owner, known, read, write)
}

// writeAllowed is writeOwned once the door has allowed the write (ctx).
func (inv *Inventory) writeAllowed(ctx context.Context, owner neutron.Owner, known *int, read revisionReader, write func(ctx context.Context, revision int) error) error {
	revision := known
	for try := 0; ; try++ {
		if revision == nil {
			r, err := read(ctx)
			if err != nil {
				return err
			}
			if err := inv.fence(); err != nil {
				return err
			}
			revision = &r
		}
		err := write(ctx, *revision)
		switch {
		case err == nil:
			inv.breaker.succeed()
			return nil
		case neutron.IsStale(err) && try == 0:
			inv.breaker.succeed() // an answer: read, and send once more
			revision = nil
		case neutron.IsNotFound(err): // an answer too: nothing was done
			return inv.goneFromNeutron(err)
		default:
			return inv.afterFailedWrite(owner, err)
		}
	}
}

// markedFor returns the revision of a resource just read, as name,
// description and revision, if it carries owner's mark; else it asks for
// a list, which drops it from the store, and returns ErrMarkGone.
func (inv *Inventory) markedFor(owner neutron.Owner, kind, id, name, description string, revision int) (int, error) {
	if o, ok := inv.mark.OwnerOf(name, description); ok && o.UID == owner.UID {
		return revision, nil
	}
	inv.RequestRefresh(0)
	return 0, fmt.Errorf("%s %s no longer carries this Network's mark; waiting for a list of Neutron: %w", kind, id, ErrMarkGone)
}

// networkRevision reads network id for a write of owner's.
func (inv *Inventory) networkRevision(owner neutron.Owner, id string) revisionReader {
	return func(ctx context.Context) (int, error) {
		n, err := inv.readNetwork(ctx, id)
		if err != nil {
			return 0, err
		}
		return inv.markedFor(owner, "network", id, n.Name, n.Description, n.RevisionNumber)
	}
}

// readNetwork reads network id, errGone if it is gone.
func (inv *Inventory) readNetwork(ctx context.Context, id string) (neutron.Network, error) {
	n, err := inv.client.GetNetwork(ctx, id)
	if neutron.IsNotFound(err) {
		return neutron.Network{}, inv.goneFromNeutron(err)
	}
	return n, inv.afterFailedRead(err)
}

// goneFromNeutron is errGone for a resource Neutron answered it does not
// hold (notFound, its 404, or the error a read makes of an absence): an
// answer, and a list is asked for, which drops it from the store.
func (inv *Inventory) goneFromNeutron(notFound error) error {
	inv.breaker.succeed()
	inv.RequestRefresh(0)
	return fmt.Errorf("%w (%v)", errGone, notFound)
}

// subnetRevision reads subnet s (as the store holds it) for a write of
// owner's. Neutron has no read of one subnet that the client makes, so
// it reads those on its network.
func (inv *Inventory) subnetRevision(owner neutron.Owner, s neutron.Subnet) revisionReader {
	return func(ctx context.Context) (int, error) {
		subs, err := inv.client.SubnetsOf(ctx, s.NetworkID)
		if err = inv.afterFailedRead(err); err != nil {
			return 0, err
		}
		i := slices.IndexFunc(subs, func(x neutron.Subnet) bool { return x.ID == s.ID })
		if i < 0 {
			return 0, inv.goneFromNeutron(fmt.Errorf("subnet %s is not on network %s", s.ID, s.NetworkID))
		}
		return inv.markedFor(owner, "subnet", s.ID, subs[i].Name, subs[i].Description, subs[i].RevisionNumber)
	}
}

// gone reports whether err says the resource written to is no longer in
// Neutron.
func gone(err error) bool { return errors.Is(err, errGone) }
