package neutron

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// RouterInterfaceOwner is the device_owner of a router's interface on a
// subnet. A port the controller makes for a router has it from its
// create on: Neutron lets only a router port take an address of an
// IPv6 subnet whose addresses are automatic (SLAAC), and a gateway is one.
const RouterInterfaceOwner = "network:router_interface"

var _ Routers = &Gophercloud{}

// FindRouter finds a router by ID, else by name, in the client's project:
// an admin credential sees every project's routers, and another project's
// is never the Network's to use.
func (g *Gophercloud) FindRouter(ctx context.Context, nameOrID string) (Router, error) {
	r, err := findOne(ctx, "finding router "+nameOrID, "routers of the project", TypeRouterNotFound, nameOrID,
		func(ctx context.Context, byID bool) ([]routers.Router, error) {
			opts := routers.ListOpts{Name: nameOrID, ProjectID: g.projectID}
			if byID {
				opts = routers.ListOpts{ID: nameOrID, ProjectID: g.projectID}
			}
			var out []routers.Router
			err := eachPage(ctx, g.client, routers.List(g.client, opts), func(page pagination.Page) error {
				rs, err := routers.ExtractRouters(page)
				out = append(out, rs...)
				return err
			})
			return out, err
		})
	return routerFrom(r), err
}

// TypeRouterNotFound is the Type of the RejectedError FindRouter returns
// when no single router matches.
const TypeRouterNotFound = "RouterNotFound"

// CreatePort creates an unattached router interface port in one request.
func (g *Gophercloud) CreatePort(ctx context.Context, req PortRequest) (Port, error) {
	opts := ports.CreateOpts{
		NetworkID:   req.NetworkID,
		Name:        req.Name,
		Description: req.Description,
		DeviceOwner: RouterInterfaceOwner,
		FixedIPs:    []ports.IP{{SubnetID: req.SubnetID, IPAddress: req.Address}},
	}
	p, err := ports.Create(ctx, g.client, opts).Extract()
	if err != nil {
		return Port{}, classify("creating a router interface port on "+req.Address+" of subnet "+req.SubnetID, err)
	}
	return portFrom(*p), nil
}

// UpdatePortMark replaces a port's name and description in one request.
func (g *Gophercloud) UpdatePortMark(ctx context.Context, id, name, description string) (Port, error) {
	p, err := ports.Update(ctx, g.client, id, ports.UpdateOpts{Name: &name, Description: &description}).Extract()
	if err != nil {
		return Port{}, classify("updating port "+id, err)
	}
	return portFrom(*p), nil
}

// DeletePort deletes a port; one already gone counts as deleted.
func (g *Gophercloud) DeletePort(ctx context.Context, id string) error {
	err := ports.Delete(ctx, g.client, id).ExtractErr()
	if err != nil && !IsNotFound(err) {
		return classify("deleting port "+id, err)
	}
	return nil
}

// AddRouterInterface attaches a port to a router.
func (g *Gophercloud) AddRouterInterface(ctx context.Context, routerID, portID string) error {
	_, err := routers.AddInterface(ctx, g.client, routerID, routers.AddInterfaceOpts{PortID: portID}).Extract()
	if err != nil {
		return classify("attaching port "+portID+" to router "+routerID, err)
	}
	return nil
}

// RemoveRouterInterface detaches a port from a router, and with it
// deletes the port.
func (g *Gophercloud) RemoveRouterInterface(ctx context.Context, routerID, portID string) error {
	_, err := routers.RemoveInterface(ctx, g.client, routerID, routers.RemoveInterfaceOpts{PortID: portID}).Extract()
	if err != nil && !IsNotFound(err) {
		return classify("detaching port "+portID+" from router "+routerID, err)
	}
	return nil
}

// FindRouter implements Routers.
func (s *Session) FindRouter(ctx context.Context, nameOrID string) (Router, error) {
	return call(ctx, s, func(g *Gophercloud) (Router, error) { return g.FindRouter(ctx, nameOrID) })
}

// CreatePort implements Routers.
func (s *Session) CreatePort(ctx context.Context, req PortRequest) (Port, error) {
	return call(ctx, s, func(g *Gophercloud) (Port, error) { return g.CreatePort(ctx, req) })
}

// UpdatePortMark implements Routers.
func (s *Session) UpdatePortMark(ctx context.Context, id, name, description string) (Port, error) {
	return call(ctx, s, func(g *Gophercloud) (Port, error) { return g.UpdatePortMark(ctx, id, name, description) })
}

// DeletePort implements Routers.
func (s *Session) DeletePort(ctx context.Context, id string) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.DeletePort(ctx, id) })
	return err
}

// AddRouterInterface implements Routers.
func (s *Session) AddRouterInterface(ctx context.Context, routerID, portID string) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.AddRouterInterface(ctx, routerID, portID) })
	return err
}

// RemoveRouterInterface implements Routers.
func (s *Session) RemoveRouterInterface(ctx context.Context, routerID, portID string) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) {
		return struct{}{}, g.RemoveRouterInterface(ctx, routerID, portID)
	})
	return err
}

// ListRouters lists the routers whose description is exactly description,
// in the client's project. A 404 is a Neutron without the L3 API: it has
// no routers, and the controller's other resources are listed as ever.
func (g *Gophercloud) ListRouters(ctx context.Context, description string, visit func([]Router) error) error {
	err := eachPage(ctx, g.client, routers.List(g.client, routers.ListOpts{Description: description, ProjectID: g.projectID, Limit: g.pageSize}),
		func(page pagination.Page) error {
			rs, err := routers.ExtractRouters(page)
			if err != nil {
				return err
			}
			out := make([]Router, 0, len(rs))
			for _, r := range rs {
				out = append(out, routerFrom(r))
			}
			return visit(out)
		})
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return classify("listing routers", err)
	}
	return nil
}

// externalNetwork is a network with the external-net extension's field.
type externalNetwork struct {
	networks.Network
	external.NetworkExternalExt
}

// FindExternalNetwork finds an external network by ID, else by name.
func (g *Gophercloud) FindExternalNetwork(ctx context.Context, nameOrID string) (Network, error) {
	n, err := findOne(ctx, "finding external network "+nameOrID, "external networks", TypeExternalNetworkNotFound, nameOrID,
		func(ctx context.Context, byID bool) ([]externalNetwork, error) {
			opts := networks.ListOpts{Name: nameOrID}
			if byID {
				opts = networks.ListOpts{ID: nameOrID}
			}
			var found []externalNetwork
			err := eachPage(ctx, g.client, networks.List(g.client, externalListOpts(opts)), func(page pagination.Page) error {
				var more []externalNetwork
				err := networks.ExtractNetworksInto(page, &more)
				found = append(found, more...)
				return err
			})
			return found, err
		})
	return Network{ID: n.ID, Name: n.Name, Description: n.Description, CreatedAt: n.CreatedAt, Status: n.Status, ProjectID: n.ProjectID}, err
}

// externalListOpts narrows opts to external networks.
func externalListOpts(opts networks.ListOpts) networks.ListOptsBuilder {
	isExternal := true
	return external.ListOptsExt{ListOptsBuilder: opts, External: &isExternal}
}

// TypeExternalNetworkNotFound is the Type of the RejectedError
// FindExternalNetwork returns when no single external network matches.
const TypeExternalNetworkNotFound = "ExternalNetworkNotFound"

// CreateRouter creates a router with its gateway in one request.
func (g *Gophercloud) CreateRouter(ctx context.Context, name, description, gatewayNetworkID string) (Router, error) {
	r, err := routers.Create(ctx, g.client, routers.CreateOpts{Name: name, Description: description,
		GatewayInfo: &routers.GatewayInfo{NetworkID: gatewayNetworkID}}).Extract()
	if err != nil {
		return Router{}, classify("creating router "+name, err)
	}
	return routerFrom(*r), nil
}

// UpdateRouter changes a router in one request.
func (g *Gophercloud) UpdateRouter(ctx context.Context, id string, gatewayNetworkID, description *string, ifRevision int) (Router, error) {
	opts := routers.UpdateOpts{Description: description, RevisionNumber: &ifRevision}
	if gatewayNetworkID != nil {
		opts.GatewayInfo = &routers.GatewayInfo{NetworkID: *gatewayNetworkID}
	}
	r, err := routers.Update(ctx, g.client, id, opts).Extract()
	if err != nil {
		return Router{}, classify("updating router "+id, err)
	}
	return routerFrom(*r), nil
}

// DeleteRouter deletes a router while its revision is ifRevision; one
// already gone counts as deleted.
func (g *Gophercloud) DeleteRouter(ctx context.Context, id string, ifRevision int) error {
	return g.deleteIfMatch(ctx, "routers", "router", id, ifRevision)
}

func routerFrom(r routers.Router) Router {
	return Router{ID: r.ID, Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt,
		GatewayNetworkID: r.GatewayInfo.NetworkID, RevisionNumber: r.RevisionNumber}
}

// ListRouters implements Routers.
func (s *Session) ListRouters(ctx context.Context, description string, visit func([]Router) error) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.ListRouters(ctx, description, visit) })
	return err
}

// FindExternalNetwork implements Routers.
func (s *Session) FindExternalNetwork(ctx context.Context, nameOrID string) (Network, error) {
	return call(ctx, s, func(g *Gophercloud) (Network, error) { return g.FindExternalNetwork(ctx, nameOrID) })
}

// CreateRouter implements Routers.
func (s *Session) CreateRouter(ctx context.Context, name, description, gatewayNetworkID string) (Router, error) {
	return call(ctx, s, func(g *Gophercloud) (Router, error) { return g.CreateRouter(ctx, name, description, gatewayNetworkID) })
}

// UpdateRouter implements Routers.
func (s *Session) UpdateRouter(ctx context.Context, id string, gatewayNetworkID, description *string, ifRevision int) (Router, error) {
	return call(ctx, s, func(g *Gophercloud) (Router, error) {
		return g.UpdateRouter(ctx, id, gatewayNetworkID, description, ifRevision)
	})
}

// DeleteRouter implements Routers.
func (s *Session) DeleteRouter(ctx context.Context, id string, ifRevision int) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.DeleteRouter(ctx, id, ifRevision) })
	return err
}
