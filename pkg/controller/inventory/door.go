package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// The door: every request the controller makes of Neutron, read or write,
// except the inventory's own lists, goes through these methods. They
//   - fail at once while Neutron is known to be down (breaker.go);
//   - act only on IDs the store holds for the owner, i.e. resources that
//     carry this cluster's mark and the owner's UID (the last guard of
//     "never touch what you cannot prove is yours"), except Mark*, which
//     take a resource the caller has proven nobody owns;
//   - write to such a resource only onto a revision at which it carried
//     the owner's mark (If-Match, revision.go): the store is as old as
//     its latest list;
//   - mark what they create in the create request itself (name and
//     description), so it is recognisable the moment Neutron holds it;
//   - record in the store what Neutron confirmed, so the next sync sees it
//     without a list;
//   - ask for an early list when a write's answer was lost, because the
//     request may complete anyway (Options.LateCompletionGrace).

// ErrNotOurs is what a write to a resource the store does not hold for
// its owner returns. The callers write only IDs they read from the store,
// so it is a broken invariant, never an answer of Neutron's.
var ErrNotOurs = errors.New("not a resource of this controller")

func notOurs(kind, id string) error { return fmt.Errorf("%s %s: %w", kind, id, ErrNotOurs) }

// CreateNetwork creates a network of owner with mtu (0: Neutron's choice).
func (inv *Inventory) CreateNetwork(ctx context.Context, owner neutron.Owner, mtu int) (neutron.Network, error) {
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return neutron.Network{}, err
	}
	n, err := inv.client.CreateNetwork(ctx, inv.mark.ResourceName(owner), inv.mark.Description(), mtu)
	if err != nil {
		return neutron.Network{}, inv.afterFailedWrite(owner, err)
	}
	inv.breaker.succeed()
	inv.store.AddNetwork(listedAt(ctx), owner, n)
	return n, nil
}

// CreateSubnet creates the subnet req asks for, with owner's name and the
// mark.
func (inv *Inventory) CreateSubnet(ctx context.Context, owner neutron.Owner, req neutron.SubnetRequest) (neutron.Subnet, error) {
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return neutron.Subnet{}, err
	}
	req.Name, req.Description = inv.mark.ResourceName(owner), inv.mark.Description()
	s, err := inv.client.CreateSubnet(ctx, req)
	if err != nil {
		return neutron.Subnet{}, inv.afterFailedWrite(owner, err)
	}
	inv.breaker.succeed()
	inv.store.AddSubnet(listedAt(ctx), owner, s)
	return s, nil
}

// UpdateNetwork changes a network of owner's, onto the revision it reads
// first (revision.go).
func (inv *Inventory) UpdateNetwork(ctx context.Context, owner neutron.Owner, id string, u neutron.NetworkUpdate) (neutron.Network, error) {
	n, _, err := inv.updateNetwork(ctx, owner, id, u)
	return n, err
}

// updateNetwork is UpdateNetwork, and the place the update went to.
func (inv *Inventory) updateNetwork(ctx context.Context, owner neutron.Owner, id string, u neutron.NetworkUpdate) (neutron.Network, neutron.Place, error) {
	if !inv.ownsNetwork(owner, id) {
		return neutron.Network{}, neutron.Place{}, notOurs("network", id)
	}
	var updated neutron.Network
	in, err := inv.writeOwned(ctx, owner, nil, inv.networkRevision(owner, id), func(ctx context.Context, revision int) (err error) {
		u.IfRevision = &revision
		updated, err = inv.client.UpdateNetwork(ctx, id, u)
		return err
	})
	if err != nil {
		return neutron.Network{}, in, err
	}
	inv.store.AddNetwork(in, owner, updated)
	return updated, in, nil
}

// UpdateSubnet changes a subnet of owner's, onto the revision the store
// holds (revision.go).
func (inv *Inventory) UpdateSubnet(ctx context.Context, owner neutron.Owner, id string, u neutron.SubnetUpdate) (neutron.Subnet, error) {
	s, _, err := inv.updateSubnet(ctx, owner, id, u)
	return s, err
}

// updateSubnet is UpdateSubnet, and the place the update went to.
func (inv *Inventory) updateSubnet(ctx context.Context, owner neutron.Owner, id string, u neutron.SubnetUpdate) (neutron.Subnet, neutron.Place, error) {
	held, ok := inv.heldSubnet(owner, id)
	if !ok {
		return neutron.Subnet{}, neutron.Place{}, notOurs("subnet", id)
	}
	var updated neutron.Subnet
	in, err := inv.writeOwned(ctx, owner, &held.RevisionNumber, inv.subnetRevision(owner, held), func(ctx context.Context, revision int) (err error) {
		u.IfRevision = &revision
		updated, err = inv.client.UpdateSubnet(ctx, id, u)
		return err
	})
	if err != nil {
		return neutron.Subnet{}, in, err
	}
	inv.store.AddSubnet(in, owner, updated)
	return updated, in, nil
}

// DeleteSubnet deletes a subnet of owner's, onto the revision the store
// holds (revision.go). One that is gone counts as deleted.
func (inv *Inventory) DeleteSubnet(ctx context.Context, owner neutron.Owner, id string) error {
	held, ok := inv.heldSubnet(owner, id)
	if !ok {
		return notOurs("subnet", id)
	}
	in, err := inv.writeOwned(ctx, owner, &held.RevisionNumber, inv.subnetRevision(owner, held), func(ctx context.Context, revision int) error {
		return inv.client.DeleteSubnet(ctx, id, revision)
	})
	if err != nil && !gone(err) {
		return err
	}
	inv.store.RemoveSubnet(in, owner, id)
	return nil
}

// DeleteNetwork deletes a network of owner's. Neutron deletes every
// subnet on it with it, in the one request, whoever made the subnet, so
// the delete is sent only onto a revision at which Neutron showed the
// network and every subnet on it carrying owner's mark (If-Match): a
// subnet added or changed since raises it, and Neutron refuses the
// delete (412) rather than take the subnet. That revision is the latest
// list's, where the store still holds the network and its subnets as
// that list read them (Store.ListedRevision): one request. Otherwise (a
// write since the list, the controller's own subnet create included),
// and after a 412, it is read just now (onlyOwners: the network read,
// then its subnets), and the delete sent onto that (revision.go). The
// store forgets the network and its subnets with it
// (Store.RemoveNetwork): a caller deletes no subnet of the network first.
// One that is gone counts as deleted.
func (inv *Inventory) DeleteNetwork(ctx context.Context, owner neutron.Owner, id string) error {
	if !inv.ownsNetwork(owner, id) {
		return notOurs("network", id)
	}
	onlyOwners := func(ctx context.Context) (int, error) {
		n, err := inv.readNetwork(ctx, id)
		if err != nil {
			return 0, err
		}
		return n.RevisionNumber, inv.onlyOwners(ctx, owner, n)
	}
	in, err := inv.writeOwned(ctx, owner, inv.store.ListedRevision(owner.UID, id), onlyOwners, func(ctx context.Context, revision int) error {
		return inv.client.DeleteNetwork(ctx, id, revision)
	})
	if err != nil && !gone(err) {
		return err
	}
	inv.store.RemoveNetwork(in, owner, id)
	return nil
}

// onlyOwners returns nil when network n, as just read, carries owner's
// mark, and a read of the subnets on it finds every one of n.SubnetIDs
// marked for owner. The store is not asked: it is as old as the latest
// list, and a person may have taken a subnet out of management (its mark
// removed) or marked it for another Network since. A subnet of another
// project is not in the read (it lists the client's project), and so is
// not owner's. Where Neutron and the store disagree, a list is asked for.
func (inv *Inventory) onlyOwners(ctx context.Context, owner neutron.Owner, n neutron.Network) error {
	if _, err := inv.markedFor(owner, "network", n.ID, n.Name, n.Description, n.RevisionNumber); err != nil {
		return err
	}
	if len(n.SubnetIDs) == 0 {
		return nil // nothing on it for the DELETE to take: no second read
	}
	subs, err := inv.client.SubnetsOf(ctx, n.ID)
	if err = inv.afterFailedRead(err); err != nil {
		return err
	}
	var strangers []string
	for _, id := range n.SubnetIDs {
		i := slices.IndexFunc(subs, func(s neutron.Subnet) bool { return s.ID == id })
		if i >= 0 {
			if o, ok := inv.mark.OwnerOf(subs[i].Name, subs[i].Description); ok && o.UID == owner.UID {
				continue
			}
		}
		if inv.ownsSubnet(owner, id) {
			inv.RequestRefresh(0)
		}
		strangers = append(strangers, id)
	}
	if len(strangers) > 0 {
		return &SubnetsNotOursError{NetworkID: n.ID, SubnetIDs: strangers}
	}
	return nil
}

// NotOnlyOurs reports whether err is a write refused before anything was
// sent, because Neutron says the resource, or a subnet on a network that
// a DELETE would take, is not the owner's (*SubnetsNotOursError,
// ErrMarkGone): it waits for someone else's hand, or for a list.
func NotOnlyOurs(err error) bool {
	var strangers *SubnetsNotOursError
	return errors.As(err, &strangers) || errors.Is(err, ErrMarkGone)
}

// SubnetsNotOursError is a network delete refused before it was sent:
// Neutron would delete these subnets with the network, and they are not
// its owner's (made by hand, by another cluster's controller or another
// project, or marked for another Network). The delete waits until someone
// removes them. It names them by ID alone.
type SubnetsNotOursError struct {
	NetworkID string
	SubnetIDs []string
}

func (e *SubnetsNotOursError) Error() string {
	return fmt.Sprintf("network %s holds subnets that are not this Network's, which Neutron would delete with it: %s",
		e.NetworkID, strings.Join(e.SubnetIDs, ", "))
}

// Restored is the name and description an adopted resource gets back.
type Restored struct{ Name, Description string }

// restorable reports whether r may be written back on release. Never an
// ownership mark (any cluster's): adoption refuses every resource that
// carries one, so a record naming one was not read from Neutron but
// written by someone else (status.adopted.subnets after the first travels
// in a v1 annotation that whoever may update the Network writes), and
// writing it would hand the resource to the Network, or the cluster, the
// mark names. Such a resource gets the release mark instead.
func (r *Restored) restorable() bool {
	return r != nil && !neutron.IsMark(r.Description)
}

// ReleaseSubnet gives up a subnet without deleting it (deletionPolicy:
// Orphan): the description that carried the mark is replaced, so no
// controller will ever recognise it again, and it leaves the store. An
// adopted subnet gets back what it had (orig); one the controller made
// says where it came from. Like every write, it is sent only onto a
// revision that carries owner's mark (revision.go); one that is gone
// counts as released.
func (inv *Inventory) ReleaseSubnet(ctx context.Context, owner neutron.Owner, id string, orig *Restored) error {
	u := neutron.SubnetUpdate{Description: ptr.To(inv.mark.Released(owner))}
	if orig.restorable() {
		u.Name, u.Description = &orig.Name, &orig.Description
	}
	_, in, err := inv.updateSubnet(ctx, owner, id, u)
	if err != nil && !gone(err) {
		return err
	}
	inv.store.RemoveSubnet(in, owner, id)
	return nil
}

// ReleaseNetwork is ReleaseSubnet for a network.
func (inv *Inventory) ReleaseNetwork(ctx context.Context, owner neutron.Owner, id string, orig *Restored) error {
	u := neutron.NetworkUpdate{Description: ptr.To(inv.mark.Released(owner))}
	if orig.restorable() {
		u.Name, u.Description = &orig.Name, &orig.Description
	}
	_, in, err := inv.updateNetwork(ctx, owner, id, u)
	if err != nil && !gone(err) {
		return err
	}
	inv.store.RemoveNetwork(in, owner, id)
	return nil
}

// MarkSubnet takes a subnet under management (adoption): its name and
// description become owner's and the mark. With MarkNetwork, the only
// writes to a resource the store does not hold; the caller has checked
// that nobody else owns it, in s as it read it. The mark is written onto
// that revision only (If-Match on s.RevisionNumber): a subnet changed
// since, e.g. marked by another Network's adoption between the check and
// this write, is left as it is, and the error is Neutron's 412
// (neutron.IsStale), for the caller to read it again.
func (inv *Inventory) MarkSubnet(ctx context.Context, owner neutron.Owner, s neutron.Subnet) error {
	if inv.ownsSubnet(owner, s.ID) {
		return nil
	}
	name, desc := inv.mark.ResourceName(owner), inv.mark.Description()
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return err
	}
	marked, err := inv.client.UpdateSubnet(ctx, s.ID, neutron.SubnetUpdate{Name: &name, Description: &desc, IfRevision: &s.RevisionNumber})
	if err != nil {
		return inv.afterFailedWrite(owner, err)
	}
	inv.breaker.succeed()
	inv.store.AddSubnet(listedAt(ctx), owner, marked)
	return nil
}

// MarkNetwork is MarkSubnet for a network, written onto n's revision only;
// it returns the marked network. A change of one of its subnets raises a
// network's revision too: n must be read after the subnet's mark.
func (inv *Inventory) MarkNetwork(ctx context.Context, owner neutron.Owner, n neutron.Network) (neutron.Network, error) {
	if inv.ownsNetwork(owner, n.ID) {
		return n, nil
	}
	name, desc := inv.mark.ResourceName(owner), inv.mark.Description()
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return neutron.Network{}, err
	}
	marked, err := inv.client.UpdateNetwork(ctx, n.ID, neutron.NetworkUpdate{Name: &name, Description: &desc, IfRevision: &n.RevisionNumber})
	if err != nil {
		return neutron.Network{}, inv.afterFailedWrite(owner, err)
	}
	inv.breaker.succeed()
	inv.store.AddNetwork(listedAt(ctx), owner, marked)
	return marked, nil
}

// GetNetwork reads any network by ID (adoption reads what is not ours yet).
func (inv *Inventory) GetNetwork(ctx context.Context, id string) (neutron.Network, error) {
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return neutron.Network{}, err
	}
	n, err := inv.client.GetNetwork(ctx, id)
	return n, inv.afterFailedRead(err)
}

// SubnetsOf reads the subnets on any network.
func (inv *Inventory) SubnetsOf(ctx context.Context, networkID string) ([]neutron.Subnet, error) {
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return nil, err
	}
	subs, err := inv.client.SubnetsOf(ctx, networkID)
	return subs, inv.afterFailedRead(err)
}

// PortsOf reads the ports on a network (with a description, only those
// with exactly it): what blocks its deletion, and, before an adoption,
// whether another project has ports on it.
func (inv *Inventory) PortsOf(ctx context.Context, networkID, description string) ([]neutron.Port, error) {
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return nil, err
	}
	ports, err := inv.client.PortsOf(ctx, networkID, description)
	return ports, inv.afterFailedRead(err)
}

// Place is where the inventory lists and creates (zero for a noauth
// server). A connected client answers from its token, sending no
// request, so an answer is no sign that Neutron answers: it never closes
// the breaker, and only a connect that got no answer counts against it.
func (inv *Inventory) Place(ctx context.Context) (neutron.Place, error) {
	if err := inv.breaker.allow(); err != nil {
		return neutron.Place{}, err
	}
	place, err := inv.client.Place(ctx)
	if neutron.Unreachable(err) {
		inv.breaker.fail()
	}
	return place, err
}

// FindSubnetPool reads a subnet pool by name or ID.
func (inv *Inventory) FindSubnetPool(ctx context.Context, nameOrID string) (neutron.SubnetPool, error) {
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return neutron.SubnetPool{}, err
	}
	pool, err := inv.client.FindSubnetPool(ctx, nameOrID)
	return pool, inv.afterFailedRead(err)
}

// FindLateSubnet looks on networkID for a subnet that carries owner's
// name and the mark and that match accepts: a create of ours that
// completed after its answer was lost. It records what it finds.
func (inv *Inventory) FindLateSubnet(ctx context.Context, owner neutron.Owner, networkID string, match func(neutron.Subnet) bool) (neutron.Subnet, bool, error) {
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return neutron.Subnet{}, false, err
	}
	subs, err := inv.client.SubnetsOf(ctx, networkID)
	if err = inv.afterFailedRead(err); err != nil {
		return neutron.Subnet{}, false, err
	}
	for _, s := range subs {
		if o, ok := inv.mark.OwnerOf(s.Name, s.Description); ok && o.UID == owner.UID && match(s) {
			inv.store.AddSubnet(listedAt(ctx), owner, s)
			klog.FromContext(ctx).Info("Found our subnet, created late, on an overlap refusal", "subnetID", s.ID)
			return s, true, nil
		}
	}
	return neutron.Subnet{}, false, nil
}

func (inv *Inventory) ownsNetwork(owner neutron.Owner, id string) bool {
	return slices.ContainsFunc(inv.store.Get(owner.UID).Networks, func(n neutron.Network) bool { return n.ID == id })
}

func (inv *Inventory) ownsSubnet(owner neutron.Owner, id string) bool {
	_, ok := inv.heldSubnet(owner, id)
	return ok
}

// heldSubnet is subnet id as the store holds it for owner.
func (inv *Inventory) heldSubnet(owner neutron.Owner, id string) (neutron.Subnet, bool) {
	subs := inv.store.Get(owner.UID).Subnets
	if i := slices.IndexFunc(subs, func(s neutron.Subnet) bool { return s.ID == id }); i >= 0 {
		return subs[i], true
	}
	return neutron.Subnet{}, false
}

// Settled is Get for a decision that nothing more is left to do, such as
// a delete's finalizing: it returns ErrListPending while a write of uid's
// went unanswered and no list since has shown what it did. Neutron may
// have done that write (an adoption's mark, a create) without the store
// knowing, and a release or delete of what the store holds would leave it
// behind: marked as a Network's that is gone, for the garbage collector
// to delete, though an adopted subnet is its user's.
func (inv *Inventory) Settled(uid types.UID) (Owned, error) {
	inv.unsureMu.Lock()
	_, unsure := inv.unsure[uid]
	inv.unsureMu.Unlock()
	if unsure {
		return Owned{}, ErrListPending
	}
	return inv.store.Get(uid), nil
}
