package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// The router step of the ladder (spec.router). The controller makes a port
// of its own on the subnet's gateway address, marked as the Network's in
// the create request, and attaches that port to the router, so the
// interface is provably its own from the moment it exists. It removes only
// such ports; an interface another tool made on the subnet is never
// touched. The router is an existing one (name or ID), which is never
// written, or one of the Network's own (externalNetwork), marked and
// listed like its network, and deleted once the spec no longer wants it.
//
// The step is in two halves around the subnet's update, because Neutron
// refuses to move a gateway that a router interface holds: interfaces the
// spec no longer wants go first (detachUnwanted), the wanted one is made
// after (attachWanted).

// routerPlan is what detachUnwanted found: the router the spec names, and
// the Network's port to keep on each subnet (on that router, or not yet on
// any), keep[i] being subnets[i]'s, nil where there is none.
type routerPlan struct {
	router neutron.Router
	// owned says the router is the Network's own.
	owned bool
	keep  []*neutron.Port
}

// detachUnwanted removes the Network's router interfaces that are not on
// the router the spec names, and the routers of its own that the spec no
// longer wants, and returns the plan for attachWanted. A Network that has
// never had a router reads nothing: its step is free.
func (p *pass) detachUnwanted(ctx context.Context, net neutron.Network, subnets []neutron.Subnet) (routerPlan, error) {
	spec := p.network.Spec.Router
	ownRouters := p.inv.Get(p.owner.UID).Routers
	if spec == nil && p.router == nil && len(ownRouters) == 0 {
		return routerPlan{}, nil
	}
	ports, err := p.inv.RouterPortsOf(ctx, p.owner, net.ID)
	if err != nil {
		return routerPlan{}, err
	}
	var plan routerPlan
	switch {
	case spec != nil && spec.ExternalNetwork != "":
		plan.owned = true
		if plan.router, err = p.ensureOwnRouter(ctx, spec.ExternalNetwork); err != nil {
			return routerPlan{}, err
		}
	case spec != nil:
		if plan.router, err = p.findRouter(ctx, cmp.Or(spec.ID, spec.Name)); err != nil {
			return routerPlan{}, err
		}
	}
	if spec != nil {
		plan.keep = make([]*neutron.Port, len(subnets))
		for i, s := range subnets {
			on := slices.DeleteFunc(slices.Clone(ports), func(port neutron.Port) bool {
				return !slices.ContainsFunc(port.Addresses, func(a string) bool { return inRange(s.CIDR, a) })
			})
			plan.keep[i] = choosePort(on, plan.router.ID, s.GatewayIP)
		}
	}
	for _, port := range ports {
		if slices.ContainsFunc(plan.keep, func(k *neutron.Port) bool { return k != nil && k.ID == port.ID }) {
			continue
		}
		if err := p.detach(ctx, port); err != nil {
			return routerPlan{}, err
		}
	}
	// Routers of its own go once no interface of ours is on them; one
	// that another tool attached to refuses, and waits.
	for _, r := range ownRouters {
		if plan.owned && r.ID == plan.router.ID {
			continue
		}
		if err := p.inv.DeleteRouter(ctx, p.owner, r.ID); err != nil {
			return routerPlan{}, err
		}
		p.eventf(corev1.EventTypeNormal, eventDeleted, "Deleted Neutron router %s", r.ID)
	}
	return plan, nil
}

// findRouter finds the existing router nameOrID of the Network's project,
// which its namespace's policy granted (pkg/controller/tenancy). A router that carries
// an ownership mark is refused whoever granted it: network-controller
// made it for a Network of its own, which deletes it, and an interface of
// another Network's on it would block that delete for ever and give the
// other Network's subnet the owner's reach. The refusal names no owner.
func (p *pass) findRouter(ctx context.Context, nameOrID string) (neutron.Router, error) {
	r, err := p.inv.FindRouter(ctx, nameOrID)
	if err != nil {
		return neutron.Router{}, err
	}
	if neutron.IsMark(r.Description) {
		return neutron.Router{}, &NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: fmt.Sprintf(
			"spec.router: router %s was made by a network-controller for a Network of its own, and is no other Network's to attach to; nothing was attached", nameOrID)}
	}
	return r, nil
}

// ensureOwnRouter returns the Network's own router, with its gateway on
// the external network the spec names (which the namespace's policy
// granted, pkg/controller/tenancy), making it when there is none and
// moving its gateway when it is elsewhere. Other routers of its own (a
// duplicate of a create whose answer was lost, or one for an earlier
// spec) are left to detachUnwanted, which deletes them once they carry no
// interface of ours.
func (p *pass) ensureOwnRouter(ctx context.Context, externalNetwork string) (neutron.Router, error) {
	ext, err := p.inv.FindExternalNetwork(ctx, externalNetwork)
	if rejected := (*neutron.RejectedError)(nil); errors.As(err, &rejected) && rejected.Type == neutron.TypeExternalNetworkNotFound {
		return neutron.Router{}, externalNetworkRefused("spec.router.externalNetwork: %s", rejected.Message)
	}
	if err != nil {
		return neutron.Router{}, err
	}
	own := p.inv.Get(p.owner.UID).Routers
	if len(own) == 0 {
		r, err := p.inv.CreateRouter(ctx, p.owner, ext.ID)
		if err != nil {
			return neutron.Router{}, err
		}
		klog.FromContext(ctx).Info("Created Neutron router", "routerID", r.ID, "externalNetworkID", ext.ID)
		p.eventf(corev1.EventTypeNormal, eventCreated, "Created Neutron router %s with its gateway on external network %s", r.ID, describe(ext.Name, ext.ID))
		return r, nil
	}
	keep := chooseRouter(own, p.router)
	if keep.GatewayNetworkID == ext.ID {
		return keep, nil
	}
	updated, err := p.inv.UpdateRouterGateway(ctx, p.owner, keep.ID, ext.ID)
	if err != nil {
		return neutron.Router{}, err
	}
	p.eventf(corev1.EventTypeNormal, eventUpdated, "Moved the gateway of Neutron router %s to external network %s", keep.ID, describe(ext.Name, ext.ID))
	return updated, nil
}

// chooseRouter is the router of its own a Network keeps: the one status
// names, else the oldest.
func chooseRouter(own []neutron.Router, last *samplecrdv1.RouterStatus) neutron.Router {
	if last != nil {
		if i := slices.IndexFunc(own, func(r neutron.Router) bool { return r.ID == last.ID }); i >= 0 {
			return own[i]
		}
	}
	return slices.MinFunc(own, func(a, b neutron.Router) int { return a.CreatedAt.Compare(b.CreatedAt) })
}

// describe is a router or network for an Event: its name and ID.
func describe(name, id string) string {
	if name == "" {
		return id
	}
	return name + " (" + id + ")"
}

// choosePort is the port to keep: the one already on routerID, else one
// on no router yet that holds the gateway (made by a pass that did not
// get to attach it).
func choosePort(ports []neutron.Port, routerID, gateway string) *neutron.Port {
	if i := slices.IndexFunc(ports, func(p neutron.Port) bool { return p.DeviceID == routerID }); i >= 0 {
		return &ports[i]
	}
	if i := slices.IndexFunc(ports, func(p neutron.Port) bool { return p.DeviceID == "" && slices.Contains(p.Addresses, gateway) }); i >= 0 {
		return &ports[i]
	}
	return nil
}

// attachWanted makes the plan's router interface on each subnet's
// gateway, when there is none, and attaches it: one interface per subnet.
func (p *pass) attachWanted(ctx context.Context, plan routerPlan, subnets []neutron.Subnet) error {
	if p.network.Spec.Router == nil {
		return nil
	}
	for i, subnet := range subnets {
		port := plan.keep[i]
		if port == nil {
			if subnet.GatewayIP == "" {
				// The API refuses router with noGateway; a subnet from a pool
				// always has one. Neutron's own edit could still take it.
				return &desired.InvalidSpecError{Message: fmt.Sprintf("spec.router needs a gateway to attach the router on, and subnet %s has none", subnet.ID)}
			}
			created, err := p.inv.CreateRouterPort(ctx, p.owner, subnet, subnet.GatewayIP)
			if err != nil {
				return err
			}
			port = &created
		}
		if port.DeviceID == "" {
			if err := p.inv.AttachRouterPort(ctx, p.owner, plan.router.ID, *port); err != nil {
				return err
			}
			klog.FromContext(ctx).Info("Attached the subnet to a router", "routerID", plan.router.ID, "portID", port.ID)
			p.eventf(corev1.EventTypeNormal, eventAttached, "Attached subnet %s to router %s on %s (port %s)",
				subnet.ID, describe(plan.router.Name, plan.router.ID), subnet.GatewayIP, port.ID)
		}
		iface := samplecrdv2.RouterInterfaceStatus{PortID: port.ID, Address: firstOr(port.Addresses, subnet.GatewayIP)}
		p.interfaces[subnet.ID] = iface
		if i == 0 {
			// v1's status names the first subnet's interface.
			p.router = &samplecrdv1.RouterStatus{ID: plan.router.ID, InterfacePortID: iface.PortID, InterfaceAddress: iface.Address}
			if plan.owned {
				p.router.ExternalNetworkID = plan.router.GatewayNetworkID
			}
		}
	}
	return nil
}

// detach removes one of the Network's router interfaces, and says so.
func (p *pass) detach(ctx context.Context, port neutron.Port) error {
	if err := detachPort(ctx, p.inv, p.owner, port); err != nil {
		return err
	}
	if p.router != nil && p.router.InterfacePortID == port.ID {
		p.router = nil
	}
	for id, iface := range p.interfaces {
		if iface.PortID == port.ID {
			delete(p.interfaces, id)
		}
	}
	if port.DeviceID != "" {
		p.eventf(corev1.EventTypeNormal, eventDetached, "Detached the subnet from router %s (deleted port %s)", port.DeviceID, port.ID)
	}
	return nil
}

// detachPort removes owner's router interface port through inv, from its
// router if it is on one.
func detachPort(ctx context.Context, inv *inventory.Inventory, owner neutron.Owner, port neutron.Port) error {
	if err := inv.DetachRouterPort(ctx, owner, port); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Detached a router interface", "owner", owner.Key(), "routerID", port.DeviceID, "portID", port.ID)
	return nil
}

// detachAll removes every router interface owner made on its networks.
// A Network with spec.router does it before its network goes; anything
// else only once Neutron refused to delete its network (or a subnet) as
// in use, so that a delete costs no read where no router ever was.
// It returns how many it removed.
func detachAll(ctx context.Context, inv *inventory.Inventory, owned inventory.Owned) (int, error) {
	detached := 0
	for _, n := range owned.Networks {
		ports, err := inv.RouterPortsOf(ctx, owned.Owner, n.ID)
		if err != nil {
			return detached, err
		}
		for _, port := range ports {
			if err := detachPort(ctx, inv, owned.Owner, port); err != nil {
				return detached, err
			}
			detached++
		}
	}
	return detached, nil
}

// releaseRouters leaves owner's router interfaces on their routers, and
// its own routers in place, without the mark (deletionPolicy: Orphan):
// connectivity stays, and nothing recognises them as ours again.
func (p *pass) releaseRouters(ctx context.Context, owned inventory.Owned) error {
	for _, r := range owned.Routers {
		if err := p.inv.ReleaseRouter(ctx, p.owner, r.ID); err != nil {
			return err
		}
	}
	if p.network.Spec.Router == nil && p.network.Status.Router == nil {
		return nil
	}
	for _, n := range owned.Networks {
		ports, err := p.inv.RouterPortsOf(ctx, p.owner, n.ID)
		if err != nil {
			return err
		}
		for _, port := range ports {
			if err := p.inv.ReleaseRouterPort(ctx, p.owner, port); err != nil {
				return err
			}
		}
	}
	return nil
}

// inUse reports whether err is Neutron refusing a delete because ports
// still use the resource.
func inUse(err error) bool {
	var rejected *neutron.RejectedError
	return errors.As(err, &rejected) && rejected.InUse()
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
