package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// The door to Neutron's routers. The inventory lists the routers the
// controller made (spec.router's externalNetwork) with the networks and
// subnets, and writes only those. It does not list router interfaces:
// only a Network with spec.router has any, and its pass reads them from
// its own network. A router interface is the controller's only when the
// port is on a network the store holds for the owner and carries the mark
// and the owner's name; a router someone else made is never written, and
// only the controller's own ports are ever attached to or detached from
// one.

// RouterPortsOf reads the router interface ports owner made on its
// network networkID: the ports there that carry the mark and owner's
// name. Other ports on the network are not returned.
func (inv *Inventory) RouterPortsOf(ctx context.Context, owner neutron.Owner, networkID string) ([]neutron.Port, error) {
	if !inv.ownsNetwork(owner, networkID) {
		return nil, notOurs("network", networkID)
	}
	marked, err := inv.PortsOf(ctx, networkID, inv.mark.Description())
	if err != nil {
		return nil, err
	}
	var out []neutron.Port
	for _, p := range marked {
		if inv.ownsPort(owner, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// FindRouter reads a router by name or ID.
func (inv *Inventory) FindRouter(ctx context.Context, nameOrID string) (neutron.Router, error) {
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return neutron.Router{}, err
	}
	r, err := inv.client.FindRouter(ctx, nameOrID)
	return r, inv.afterFailedRead(err)
}

// CreateRouterPort makes a router interface port of owner's on address of
// its subnet, marked in the create request, and not yet on any router.
func (inv *Inventory) CreateRouterPort(ctx context.Context, owner neutron.Owner, subnet neutron.Subnet, address string) (neutron.Port, error) {
	if !inv.ownsSubnet(owner, subnet.ID) {
		return neutron.Port{}, notOurs("subnet", subnet.ID)
	}
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return neutron.Port{}, err
	}
	p, err := inv.client.CreatePort(ctx, neutron.PortRequest{NetworkID: subnet.NetworkID, SubnetID: subnet.ID, Address: address,
		Name: inv.mark.ResourceName(owner), Description: inv.mark.Description()})
	if err != nil {
		return neutron.Port{}, inv.afterFailedWrite(owner, err)
	}
	inv.breaker.succeed()
	return p, nil
}

// AttachRouterPort attaches owner's port to routerID.
func (inv *Inventory) AttachRouterPort(ctx context.Context, owner neutron.Owner, routerID string, port neutron.Port) error {
	return inv.writePort(ctx, owner, port, func(ctx context.Context) error { return inv.client.AddRouterInterface(ctx, routerID, port.ID) })
}

// DetachRouterPort removes owner's port from the router it is on, which
// deletes it, or deletes it when it is on none.
func (inv *Inventory) DetachRouterPort(ctx context.Context, owner neutron.Owner, port neutron.Port) error {
	return inv.writePort(ctx, owner, port, func(ctx context.Context) error {
		if port.DeviceID == "" {
			return inv.client.DeletePort(ctx, port.ID)
		}
		return inv.client.RemoveRouterInterface(ctx, port.DeviceID, port.ID)
	})
}

// ReleaseRouterPort gives up owner's port without detaching it
// (deletionPolicy: Orphan): the mark is replaced, so the router keeps its
// interface and no controller recognises the port again.
func (inv *Inventory) ReleaseRouterPort(ctx context.Context, owner neutron.Owner, port neutron.Port) error {
	return inv.writePort(ctx, owner, port, func(ctx context.Context) error {
		_, err := inv.client.UpdatePortMark(ctx, port.ID, port.Name, inv.mark.Released(owner))
		return err
	})
}

// writePort does write to owner's port, with the ctx the door's checks
// return.
func (inv *Inventory) writePort(ctx context.Context, owner neutron.Owner, port neutron.Port, write func(context.Context) error) error {
	if !inv.ownsPort(owner, port) {
		return notOurs("port", port.ID)
	}
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return err
	}
	if err := write(ctx); err != nil {
		return inv.afterFailedWrite(owner, err)
	}
	inv.breaker.succeed()
	return nil
}

// ownsPort reports whether port is owner's: on a network the store holds
// for owner, with the mark and owner's UID in its name.
func (inv *Inventory) ownsPort(owner neutron.Owner, port neutron.Port) bool {
	o, ok := inv.mark.OwnerOf(port.Name, port.Description)
	return ok && o.UID == owner.UID && inv.ownsNetwork(owner, port.NetworkID)
}

// FindExternalNetwork reads an external network by name or ID.
func (inv *Inventory) FindExternalNetwork(ctx context.Context, nameOrID string) (neutron.Network, error) {
	ctx, err := inv.allowRead(ctx)
	if err != nil {
		return neutron.Network{}, err
	}
	n, err := inv.client.FindExternalNetwork(ctx, nameOrID)
	return n, inv.afterFailedRead(err)
}

// CreateRouter creates a router of owner's, marked in the create request,
// with its gateway on the external network gatewayNetworkID.
func (inv *Inventory) CreateRouter(ctx context.Context, owner neutron.Owner, gatewayNetworkID string) (neutron.Router, error) {
	ctx, err := inv.allowWrite(ctx, owner)
	if err != nil {
		return neutron.Router{}, err
	}
	r, err := inv.client.CreateRouter(ctx, inv.mark.ResourceName(owner), inv.mark.Description(), gatewayNetworkID)
	if err != nil {
		return neutron.Router{}, inv.afterFailedWrite(owner, err)
	}
	inv.breaker.succeed()
	inv.store.AddRouter(listedAt(ctx), owner, r)
	return r, nil
}

// UpdateRouterGateway moves the gateway of owner's router id to the
// external network gatewayNetworkID.
func (inv *Inventory) UpdateRouterGateway(ctx context.Context, owner neutron.Owner, id, gatewayNetworkID string) (neutron.Router, error) {
	r, _, err := inv.updateRouter(ctx, owner, id, &gatewayNetworkID, nil)
	return r, err
}

// ReleaseRouter gives up owner's router id without deleting it
// (deletionPolicy: Orphan), as ReleaseNetwork does a network; one that is
// gone counts as released.
func (inv *Inventory) ReleaseRouter(ctx context.Context, owner neutron.Owner, id string) error {
	_, in, err := inv.updateRouter(ctx, owner, id, nil, ptr.To(inv.mark.Released(owner)))
	if err != nil && !gone(err) {
		return err
	}
	inv.store.RemoveRouter(in, owner, id)
	return nil
}

// updateRouter changes owner's router id once a read has shown it still
// carries owner's mark (routerMarked), and returns the place it went to.
func (inv *Inventory) updateRouter(ctx context.Context, owner neutron.Owner, id string, gatewayNetworkID, description *string) (neutron.Router, neutron.Place, error) {
	if !inv.ownsRouter(owner, id) {
		return neutron.Router{}, neutron.Place{}, notOurs("router", id)
	}
	var r neutron.Router
	in, err := inv.writeOwned(ctx, owner, nil, inv.routerMarked(owner, id), func(ctx context.Context, revision int) (err error) {
		r, err = inv.client.UpdateRouter(ctx, id, gatewayNetworkID, description, revision)
		return err
	})
	if err != nil {
		return neutron.Router{}, in, err
	}
	inv.store.AddRouter(in, owner, r)
	return r, in, nil
}

// DeleteRouter deletes owner's router id once a read has shown it still
// carries owner's mark (routerMarked); one that is gone counts as
// deleted.
func (inv *Inventory) DeleteRouter(ctx context.Context, owner neutron.Owner, id string) error {
	if !inv.ownsRouter(owner, id) {
		return notOurs("router", id)
	}
	in, err := inv.writeOwned(ctx, owner, nil, inv.routerMarked(owner, id), func(ctx context.Context, revision int) error {
		return inv.client.DeleteRouter(ctx, id, revision)
	})
	if err != nil && !gone(err) {
		return err
	}
	inv.store.RemoveRouter(in, owner, id)
	return nil
}

// routerMarked reads router id for a write of owner's, as
// networkRevision reads a network: the store is as old as its latest
// list, and a person may have taken the router out of management since
// (TestARouterWriteLeavesWhatChangedHandsSinceTheList). A router's
// revision rises with its interfaces, so it is read, not the store's.
func (inv *Inventory) routerMarked(owner neutron.Owner, id string) revisionReader {
	return func(ctx context.Context) (int, error) {
		r, err := inv.client.FindRouter(ctx, id)
		var rejected *neutron.RejectedError
		switch {
		case errors.As(err, &rejected) && rejected.Type == neutron.TypeRouterNotFound:
			return 0, inv.goneFromNeutron(err)
		case err == nil && r.ID != id: // a router named as the ID: ours is gone
			return 0, inv.goneFromNeutron(fmt.Errorf("router %s could not be found", id))
		}
		if err = inv.afterFailedRead(err); err != nil {
			return 0, err
		}
		return inv.markedFor(owner, "router", id, r.Name, r.Description, r.RevisionNumber)
	}
}

func (inv *Inventory) ownsRouter(owner neutron.Owner, id string) bool {
	return slices.ContainsFunc(inv.store.Get(owner.UID).Routers, func(r neutron.Router) bool { return r.ID == id })
}
