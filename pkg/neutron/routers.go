package neutron

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
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
	op := "finding router " + nameOrID
	tries := []routers.ListOpts{{Name: nameOrID, ProjectID: g.projectID}}
	if isCanonicalUUID(nameOrID) {
		tries = append([]routers.ListOpts{{ID: nameOrID, ProjectID: g.projectID}}, tries...)
	}
	var found []routers.Router
	for _, opts := range tries {
		page, err := routers.List(g.client, opts).AllPages(ctx)
		if err != nil {
			return Router{}, classify(op, err)
		}
		if found, err = routers.ExtractRouters(page); err != nil {
			return Router{}, classify(op, err)
		}
		if len(found) > 0 {
			break
		}
	}
	if len(found) != 1 {
		return Router{}, &RejectedError{Op: op, StatusCode: http.StatusNotFound, Type: TypeRouterNotFound,
			Message: fmt.Sprintf("%d routers of the project are named or have the ID %q; name exactly one, by ID if names repeat", len(found), nameOrID)}
	}
	r := found[0]
	return Router{ID: r.ID, Name: r.Name, ProjectID: r.ProjectID}, nil
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
	if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
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
	if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
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
