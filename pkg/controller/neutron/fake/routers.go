package fake

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// The fake's routers behave as Neutron's L3 API does where the controller
// can tell: an address is held by one port at a time, a router interface
// cannot be deleted through the port API, a port already on a router
// cannot be attached again, and removing an interface deletes its port.

var _ neutron.Routers = &Neutron{}

// AddRouter stores a router as if someone had made it before the test,
// and returns its ID.
func (f *Neutron) AddRouter(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID("router")
	f.routers[id] = neutron.Router{ID: id, Name: name}
	return id
}

// PutPort stores a port as given, as if someone had made it before the
// test (a router interface another tool made by subnet has no name and
// no description), and returns its ID.
func (f *Neutron) PutPort(p neutron.Port) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p.ID = f.newID("port")
	f.ports[p.NetworkID] = append(f.ports[p.NetworkID], p)
	return p.ID
}

// Ports returns the ports of networkID.
func (f *Neutron) Ports(networkID string) []neutron.Port {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ports[networkID])
}

// FindRouter finds a router by ID, else by name.
func (f *Neutron) FindRouter(ctx context.Context, nameOrID string) (neutron.Router, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, FindRouter); err != nil {
		return neutron.Router{}, err
	}
	own := map[string]neutron.Router{}
	for id, r := range f.routers {
		if f.visible(id) {
			own[id] = r
		}
	}
	return findOne(own, nameOrID, func(r neutron.Router) string { return r.Name }, FindRouter, neutron.TypeRouterNotFound, "routers of the project")
}

// CreatePort creates an unattached router interface port; an address
// another port holds is refused with Neutron's 409.
func (f *Neutron) CreatePort(ctx context.Context, req neutron.PortRequest) (neutron.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, CreatePort); err != nil {
		return neutron.Port{}, err
	}
	if _, ok := f.subnets[req.SubnetID]; !ok {
		return neutron.Port{}, neutron.ErrorForResponse(CreatePort, 404, "SubnetNotFound", fmt.Sprintf("Subnet %s could not be found.", req.SubnetID))
	}
	for _, p := range f.ports[req.NetworkID] {
		if slices.Contains(p.Addresses, req.Address) {
			return neutron.Port{}, neutron.ErrorForResponse(CreatePort, 409, "IpAddressAlreadyAllocated",
				fmt.Sprintf("IP address %s already allocated in subnet %s", req.Address, req.SubnetID))
		}
	}
	p := neutron.Port{ID: f.newID("port"), NetworkID: req.NetworkID, Name: req.Name, Description: req.Description,
		DeviceOwner: neutron.RouterInterfaceOwner, Addresses: []string{req.Address}, ProjectID: f.project}
	f.ports[req.NetworkID] = append(f.ports[req.NetworkID], p)
	return p, f.answer(CreatePort)
}

// UpdatePortMark replaces a port's name and description.
func (f *Neutron) UpdatePortMark(ctx context.Context, id, name, description string) (neutron.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, UpdatePort); err != nil {
		return neutron.Port{}, err
	}
	p, ok := f.port(id)
	if !ok {
		return neutron.Port{}, neutron.ErrorForResponse(UpdatePort, 404, "PortNotFound", fmt.Sprintf("Port %s could not be found.", id))
	}
	p.Name, p.Description = name, description
	f.putPort(p)
	return p, nil
}

// DeletePort deletes a port that is on no router; Neutron refuses to
// delete a router's interface through the port API.
func (f *Neutron) DeletePort(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, DeletePort); err != nil {
		return err
	}
	p, ok := f.port(id)
	if !ok {
		return nil
	}
	if p.DeviceID != "" {
		return neutron.ErrorForResponse(DeletePort, 409, "ServicePortInUse",
			fmt.Sprintf("Port %s cannot be deleted directly via the port API: has device owner %s.", id, p.DeviceOwner))
	}
	f.dropPort(p)
	return nil
}

// AddRouterInterface attaches a port that is on no router.
func (f *Neutron) AddRouterInterface(ctx context.Context, routerID, portID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, AddRouterInterface); err != nil {
		return err
	}
	if _, ok := f.routers[routerID]; !ok {
		return neutron.ErrorForResponse(AddRouterInterface, 404, "RouterNotFound", fmt.Sprintf("Router %s could not be found", routerID))
	}
	p, ok := f.port(portID)
	if !ok {
		return neutron.ErrorForResponse(AddRouterInterface, 404, "PortNotFound", fmt.Sprintf("Port %s could not be found.", portID))
	}
	if p.DeviceID != "" {
		return neutron.ErrorForResponse(AddRouterInterface, 409, "PortInUse",
			fmt.Sprintf("Unable to complete operation on port %s for network %s. Port already has an attached device %s.", portID, p.NetworkID, p.DeviceID))
	}
	if err := f.routerOverlap(routerID, p); err != nil {
		return err
	}
	p.DeviceID = routerID
	f.putPort(p)
	return f.answer(AddRouterInterface)
}

// routerOverlap refuses, as neutron-server 21 does (l3_db's
// _check_for_dup_router_subnets), a port whose subnet (by its address)
// overlaps a subnet already on the router. Neutron's message names both
// subnets, IDs and ranges: the other one too, whoever's it is.
func (f *Neutron) routerOverlap(routerID string, p neutron.Port) error {
	subnets := sortedValues(f.subnets)
	for _, ps := range f.ports {
		for _, on := range ps {
			if on.DeviceID != routerID || on.ID == p.ID {
				continue
			}
			for _, mine := range subnets {
				for _, theirs := range subnets {
					if mine.NetworkID != p.NetworkID || theirs.NetworkID != on.NetworkID || !usesSubnet(p, mine.CIDR) || !usesSubnet(on, theirs.CIDR) {
						continue
					}
					a, errA := netip.ParsePrefix(mine.CIDR)
					b, errB := netip.ParsePrefix(theirs.CIDR)
					if errA == nil && errB == nil && a.Overlaps(b) {
						return neutron.ErrorForResponse(AddRouterInterface, 400, "BadRequest", fmt.Sprintf(
							"Bad router request: Cidr %s of subnet %s overlaps with cidr %s of subnet %s.", mine.CIDR, mine.ID, theirs.CIDR, theirs.ID))
					}
				}
			}
		}
	}
	return nil
}

// RemoveRouterInterface detaches a port from its router and deletes it;
// a port not on that router is Neutron's 404, which the client takes as
// removed.
func (f *Neutron) RemoveRouterInterface(ctx context.Context, routerID, portID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, RemoveRouterInterface); err != nil {
		return err
	}
	if p, ok := f.port(portID); ok && p.DeviceID == routerID {
		f.dropPort(p)
	}
	return f.answer(RemoveRouterInterface)
}

func (f *Neutron) port(id string) (neutron.Port, bool) {
	for _, ps := range f.ports {
		if i := slices.IndexFunc(ps, func(p neutron.Port) bool { return p.ID == id }); i >= 0 {
			return ps[i], true
		}
	}
	return neutron.Port{}, false
}

func (f *Neutron) putPort(p neutron.Port) {
	ps := f.ports[p.NetworkID]
	ps[slices.IndexFunc(ps, func(q neutron.Port) bool { return q.ID == p.ID })] = p
}

func (f *Neutron) dropPort(p neutron.Port) {
	f.ports[p.NetworkID] = slices.DeleteFunc(f.ports[p.NetworkID], func(q neutron.Port) bool { return q.ID == p.ID })
	if len(f.ports[p.NetworkID]) == 0 {
		delete(f.ports, p.NetworkID)
	}
}

// AddExternalNetwork stores an external network, as an administrator
// makes one, and returns its ID.
func (f *Neutron) AddExternalNetwork(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID("external")
	f.externals[id] = neutron.Network{ID: id, Name: name, Status: "ACTIVE"}
	return id
}

// Routers returns every router.
func (f *Neutron) Routers() []neutron.Router {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedValues(f.routers)
}

// ListRouters lists the routers whose description is exactly description.
func (f *Neutron) ListRouters(ctx context.Context, description string, visit func([]neutron.Router) error) error {
	f.mu.Lock()
	if err := f.request(ctx, ListRouters); err != nil {
		f.mu.Unlock()
		return err
	}
	rs := filter(sortedValues(f.routers), func(r neutron.Router) bool { return r.Description == description && f.visible(r.ID) })
	f.mu.Unlock()
	return inPages(rs, visit)
}

// FindExternalNetwork finds an external network by ID, else by name.
func (f *Neutron) FindExternalNetwork(ctx context.Context, nameOrID string) (neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, FindExternalNetwork); err != nil {
		return neutron.Network{}, err
	}
	return findOne(f.externals, nameOrID, func(n neutron.Network) string { return n.Name }, FindExternalNetwork,
		neutron.TypeExternalNetworkNotFound, "external networks")
}

// CreateRouter creates a router whose gateway is on an external network.
func (f *Neutron) CreateRouter(ctx context.Context, name, description, gatewayNetworkID string) (neutron.Router, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, CreateRouter); err != nil {
		return neutron.Router{}, err
	}
	if _, ok := f.externals[gatewayNetworkID]; !ok {
		return neutron.Router{}, neutron.ErrorForResponse(CreateRouter, 400, "BadRequest",
			fmt.Sprintf("Bad router request: Network %s is not a valid external network.", gatewayNetworkID))
	}
	f.clock = f.clock.Add(time.Second)
	r := neutron.Router{ID: f.newID("router"), Name: name, Description: description, CreatedAt: f.clock, GatewayNetworkID: gatewayNetworkID}
	f.routers[r.ID] = r
	return r, f.answer(CreateRouter)
}

// UpdateRouter changes a router's gateway or description, only at the
// revision named (revisions.go).
func (f *Neutron) UpdateRouter(ctx context.Context, id string, gatewayNetworkID, description *string, ifRevision int) (neutron.Router, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, UpdateRouter); err != nil {
		return neutron.Router{}, err
	}
	r, ok := f.routers[id]
	if !ok {
		return neutron.Router{}, neutron.ErrorForResponse(UpdateRouter, 404, "RouterNotFound", fmt.Sprintf("Router %s could not be found", id))
	}
	if gatewayNetworkID != nil {
		if _, ok := f.externals[*gatewayNetworkID]; !ok {
			return neutron.Router{}, neutron.ErrorForResponse(UpdateRouter, 400, "BadRequest",
				fmt.Sprintf("Bad router request: Network %s is not a valid external network.", *gatewayNetworkID))
		}
		r.GatewayNetworkID = *gatewayNetworkID
	}
	if description != nil {
		r.Description = *description
	}
	if err := ifMatch(UpdateRouter, &ifRevision, r.RevisionNumber); err != nil {
		return neutron.Router{}, err
	}
	r.RevisionNumber++
	f.routers[id] = r
	return r, nil
}

// DeleteRouter deletes a router that has no interfaces, as Neutron does,
// only at the revision named.
func (f *Neutron) DeleteRouter(ctx context.Context, id string, ifRevision int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, DeleteRouter); err != nil {
		return err
	}
	if r, ok := f.routers[id]; ok {
		if err := ifMatch(DeleteRouter, &ifRevision, r.RevisionNumber); err != nil {
			return err
		}
	}
	for _, ps := range f.ports {
		for _, p := range ps {
			if p.DeviceID == id {
				return neutron.ErrorForResponse(DeleteRouter, 409, "RouterInUse",
					fmt.Sprintf("Router %s has ports still attached: %s", id, p.ID))
			}
		}
	}
	delete(f.routers, id)
	return nil
}
