package neutron

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/subnetpools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"k8s.io/utils/ptr"
)

// Network is the part of a Neutron network the controller reads.
type Network struct {
	ID          string
	Name        string
	Description string
	// CreatedAt orders duplicates: the oldest is kept.
	CreatedAt time.Time
	MTU       int
	// Status is Neutron's own, e.g. ACTIVE or DOWN.
	Status string
	// ProjectID is the project that holds the network.
	ProjectID string
	// Shared says every project may use it; External that it is an
	// external network (router:external), the cloud's way out.
	Shared, External bool
	// RevisionNumber is Neutron's revision_number as read: every change
	// raises it, a change of one of the network's subnets included. An
	// update conditional on it (NetworkUpdate.IfRevision) is made only
	// onto what was read.
	RevisionNumber int
	// SubnetIDs are the IDs of every subnet on the network, whoever made
	// it and in whichever project (Neutron's "subnets"): what a delete of
	// the network takes with it.
	SubnetIDs []string
}

// Subnet is the part of a Neutron subnet the controller reads.
type Subnet struct {
	ID          string
	NetworkID   string
	Name        string
	Description string
	CIDR        string
	// GatewayIP is empty when the subnet has no gateway.
	GatewayIP       string
	DNSNameservers  []string
	HostRoutes      []HostRoute
	AllocationPools []AllocationPool
	EnableDHCP      bool
	IPv6AddressMode string
	IPv6RAMode      string
	// RevisionNumber is Neutron's revision_number as read (see
	// Network.RevisionNumber and SubnetUpdate.IfRevision).
	RevisionNumber int
}

// HostRoute is a route a subnet's DHCP hands out. The JSON names are
// Neutron's, for a plan's output.
type HostRoute struct {
	Destination string `json:"destination"`
	NextHop     string `json:"nexthop"`
}

// AllocationPool is a range of addresses, both ends included.
type AllocationPool struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// SubnetPool is the part of a Neutron subnet pool the controller reads.
type SubnetPool struct {
	ID        string
	Name      string
	IPVersion int
}

// Port is the part of a Neutron port the controller reads: enough to say
// what blocks a delete, and to recognise a router interface of its own.
type Port struct {
	ID          string
	NetworkID   string
	Name        string
	Description string
	// DeviceOwner is e.g. "network:router_interface"; DeviceID is then
	// the router's ID, empty while the port is attached to none.
	DeviceOwner string
	DeviceID    string
	// Addresses are the port's fixed IPs.
	Addresses []string
	// ProjectID is the project that holds the port: a VM's, which may
	// not be the network's (a shared network, or an administrator's
	// port); empty for some of Neutron's own (a router's gateway).
	ProjectID string
}

// DeletedWithNetwork reports whether p is one of the ports Neutron makes
// for a network and deletes with it, and with its subnets: a DHCP port
// (network:dhcp), OVN's metadata port (network:distributed), a DVR
// agent's gateway (network:floatingip_agent_gateway). The match is exact,
// as neutron-server's is (AUTO_DELETE_PORT_OWNERS, compared with SQL IN
// by _ensure_network_not_in_use): a project member may give a port of
// their own any device_owner, and a look-alike such as
// "network:dhcp-cache" blocks the delete like any other port. Neutron
// refuses to delete a network or a subnet while any other port is on it
// (409 NetworkInUse, SubnetInUse), a router interface
// (RouterInterfaceOwner) and a VM's port alike.
func (p Port) DeletedWithNetwork() bool {
	switch p.DeviceOwner {
	case "network:dhcp", "network:distributed", "network:floatingip_agent_gateway":
		return true
	}
	return false
}

// Router is the part of a Neutron router the controller reads.
type Router struct {
	ID          string
	Name        string
	Description string
	// CreatedAt orders duplicates: the oldest is kept.
	CreatedAt time.Time
	// GatewayNetworkID is the external network of the router's gateway;
	// empty when it has none.
	GatewayNetworkID string
	// RevisionNumber is Neutron's revision_number, which a write names
	// (If-Match) as for a network.
	RevisionNumber int
}

// NetworkIPs is how many addresses of one network's subnets are in use,
// as Neutron's network-ip-availabilities API counts them
// (GET /v2.0/network-ip-availabilities): Neutron's default policy grants it
// to administrators only, so under a project member's credentials the
// list is refused (403), and a Neutron without the extension answers 404.
type NetworkIPs struct {
	NetworkID string
	Subnets   []SubnetIPs
}

// SubnetIPs is one subnet's count of addresses. The counts are big
// integers: an IPv6 /64 has 2^64 addresses, past int64, and Neutron sends
// them as JSON numbers of that size.
type SubnetIPs struct {
	SubnetID string
	// Total is how many addresses Neutron may allocate: the sum of the
	// subnet's allocation pools.
	Total *big.Int
	// Used is how many addresses ports hold, in the pools or not (a
	// router interface on the gateway address).
	Used *big.Int
}

// Free is Total less Used, never below zero: a port on an address
// outside the pools (the gateway) counts in Used, not in Total.
func (s SubnetIPs) Free() *big.Int {
	free := new(big.Int).Sub(s.Total, s.Used)
	if free.Sign() < 0 {
		free.SetInt64(0)
	}
	return free
}

// Equal reports whether s and o count the same subnet the same way.
func (s SubnetIPs) Equal(o SubnetIPs) bool {
	return s.SubnetID == o.SubnetID && s.Total.Cmp(o.Total) == 0 && s.Used.Cmp(o.Used) == 0
}

// PortRequest is a port the controller asks for: a router interface on
// one address of a subnet, not yet attached.
type PortRequest struct {
	NetworkID, SubnetID, Address string
	Name, Description            string
}

// Routers is what the controller asks of Neutron's L3 API: finding a
// router someone else made and attaching to it a port it made (by port,
// not by subnet, so that the interface is provably its own from the
// moment it exists) and removing that port again; and, for a Network that
// asks for one, making, changing and deleting a router of its own, marked
// as its networks are.
type Routers interface {
	// FindRouter finds a router of the client's project by ID or, failing
	// that, by name. None, or more than one of that name, is a
	// *RejectedError of type RouterNotFound.
	FindRouter(ctx context.Context, nameOrID string) (Router, error)
	// ListRouters is ListNetworks for routers. A Neutron without the L3
	// API has none.
	ListRouters(ctx context.Context, description string, visit func([]Router) error) error
	// FindExternalNetwork finds an external network (router:external) by
	// ID or, failing that, by name, in any project. None, or more than
	// one of that name, is a *RejectedError of type
	// ExternalNetworkNotFound.
	FindExternalNetwork(ctx context.Context, nameOrID string) (Network, error)
	// CreateRouter creates a router with its gateway on the external
	// network gatewayNetworkID, with the name and description (the
	// ownership mark) in the request.
	CreateRouter(ctx context.Context, name, description, gatewayNetworkID string) (Router, error)
	// UpdateRouter changes a router's gateway network or its description
	// (nil: unchanged), only while its revision is still ifRevision
	// (If-Match), as DeleteNetwork does.
	UpdateRouter(ctx context.Context, id string, gatewayNetworkID, description *string, ifRevision int) (Router, error)
	// DeleteRouter deletes a router while its revision is ifRevision; one
	// already gone counts as deleted.
	DeleteRouter(ctx context.Context, id string, ifRevision int) error
	// CreatePort creates a router interface port, unattached, with the
	// name and description (the ownership mark) in the request.
	CreatePort(ctx context.Context, req PortRequest) (Port, error)
	// UpdatePortMark replaces a port's name and description.
	UpdatePortMark(ctx context.Context, id, name, description string) (Port, error)
	// DeletePort deletes a port; one already gone counts as deleted.
	DeletePort(ctx context.Context, id string) error
	// AddRouterInterface attaches a port to a router.
	AddRouterInterface(ctx context.Context, routerID, portID string) error
	// RemoveRouterInterface detaches a port from a router, which deletes
	// the port; a router or an interface already gone counts as removed.
	RemoveRouterInterface(ctx context.Context, routerID, portID string) error
}

// SubnetRequest is what the controller asks of a new subnet.
type SubnetRequest struct {
	NetworkID   string
	Name        string
	Description string
	// CIDR is the range; empty when SubnetPoolID allocates it.
	CIDR string
	// SubnetPoolID and PrefixLength (0: the pool's default) allocate the
	// range from a pool; IPVersion is then the pool's.
	SubnetPoolID string
	PrefixLength int
	IPVersion    int
	// Gateway is the gateway's address; "" asks for no gateway, nil for
	// Neutron's choice (the first host).
	Gateway        *string
	DNSNameservers []string
	HostRoutes     []HostRoute
	// AllocationPools, when empty, leaves them to Neutron: every host
	// address but the gateway.
	AllocationPools []AllocationPool
	EnableDHCP      bool
	IPv6AddressMode string
	IPv6RAMode      string
}

// SubnetUpdate is a change to a subnet; nil fields stay as they are. It is
// sent as one request, so that Neutron checks the new gateway against the
// new pools, not the old ones.
type SubnetUpdate struct {
	// Gateway is the new gateway; a pointer to "" removes it.
	Gateway         *string
	DNSNameservers  *[]string
	HostRoutes      *[]HostRoute
	AllocationPools *[]AllocationPool
	EnableDHCP      *bool
	// Name and Description replace the name and the description, and with
	// them the ownership mark (see Mark).
	Name, Description *string
	// IfRevision, when set, makes the update conditional: Neutron makes it
	// only while the subnet's revision_number is still this one (If-Match:
	// revision_number=N), and otherwise refuses it with a 412 (IsStale).
	// It is a condition, not a change: IsZero does not look at it.
	IfRevision *int
}

// IsZero reports whether the update changes nothing.
func (u SubnetUpdate) IsZero() bool {
	return u.Gateway == nil && u.DNSNameservers == nil && u.HostRoutes == nil && u.AllocationPools == nil &&
		u.EnableDHCP == nil && u.Name == nil && u.Description == nil
}

// NetworkUpdate is a change to a network; nil fields stay as they are.
type NetworkUpdate struct {
	MTU *int
	// Name and Description replace the name and the description, and with
	// them the ownership mark (see Mark).
	Name, Description *string
	// IfRevision is SubnetUpdate.IfRevision for a network.
	IfRevision *int
}

// Interface is everything the controller asks of Neutron: a thin layer over
// its API that knows nothing of ownership (see Mark). Deletes of resources
// that are already gone succeed. Errors are classified: a *RejectedError is
// a refusal that retrying unchanged will not fix; anything else may be.
type Interface interface {
	// ListNetworks and ListSubnets list the resources whose description is
	// exactly description (Neutron does the filtering), every one of the
	// client's project for "" (only to import them), and hand them to
	// visit a page at a time, as Neutron answers: a list of 100,000 holds
	// one page of them, not all. An error from visit ends the list and is
	// returned. visit may be handed a resource twice (a page read again
	// after a new token, or an item that moved between two pages) and must
	// keep the last it was handed.
	ListNetworks(ctx context.Context, description string, visit func([]Network) error) error
	ListSubnets(ctx context.Context, description string, visit func([]Subnet) error) error
	// ListIPAvailabilities lists the address counts of every network of
	// the client's project (ipavailability.go), a page at a time as
	// ListNetworks does. It is an administrator's API by Neutron's default
	// policy: a member's credentials are refused (IsForbidden), and a
	// Neutron without the extension answers 404 (IsNotFound).
	ListIPAvailabilities(ctx context.Context, visit func([]NetworkIPs) error) error
	// FindSubnetPool finds a subnet pool by ID or, failing that, by name,
	// among the client's project's own and the shared ones. None, or more
	// than one of that name, is a *RejectedError.
	FindSubnetPool(ctx context.Context, nameOrID string) (SubnetPool, error)
	// GetNetwork reads one network of the client's project, whatever made
	// it: only to adopt it. Another project's is a 404, as a missing one.
	GetNetwork(ctx context.Context, id string) (Network, error)
	// SubnetsOf lists every subnet of a network in the client's project,
	// whatever made it.
	SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error)
	// CreateNetwork and CreateSubnet create in one request each, with the
	// name and description (the ownership mark) in the request itself. An
	// mtu of 0 leaves the MTU to Neutron.
	CreateNetwork(ctx context.Context, name, description string, mtu int) (Network, error)
	CreateSubnet(ctx context.Context, req SubnetRequest) (Subnet, error)
	// UpdateNetwork changes a network in one request; one whose
	// revision is no longer update.IfRevision (when set) is refused, an
	// error for which IsStale holds.
	UpdateNetwork(ctx context.Context, id string, update NetworkUpdate) (Network, error)
	// UpdateSubnet changes a subnet in one request, conditionally as
	// UpdateNetwork does.
	UpdateSubnet(ctx context.Context, id string, update SubnetUpdate) (Subnet, error)
	// DeleteSubnet deletes a subnet only while its revision is still
	// ifRevision (If-Match), as DeleteNetwork does.
	DeleteSubnet(ctx context.Context, id string, ifRevision int) error
	// DeleteNetwork deletes a network, and Neutron every subnet on it
	// with it, in one request, only while the network's revision is
	// still ifRevision (If-Match: revision_number=N): a subnet added
	// since the network was read raises it, and the delete is then
	// refused with a 412 (IsStale) instead of taking that subnet.
	DeleteNetwork(ctx context.Context, id string, ifRevision int) error
	// PortsOf lists the ports of a network, or with a description only
	// those whose description is exactly that (Neutron filters): read to
	// say what blocks a delete, to find the router interfaces the
	// controller made, and to refuse adopting a network another project
	// has ports on. The network's owner sees every port on it.
	PortsOf(ctx context.Context, networkID, description string) ([]Port, error)
	// Routers (routers.go): finding a router, interfaces on it, and
	// routers of a Network's own.
	Routers
	// Place is where the client lists and creates (place.go): its
	// token's project, in the region and interface of its endpoint, which
	// a Session may have to authenticate to learn; zero for a noauth
	// server.
	Place(ctx context.Context) (Place, error)
	// Probe asks for one network's ID: the cheapest request that Neutron
	// answers only when it serves its API and reaches its database, where
	// a list of every marked network costs a request per page.
	Probe(ctx context.Context) error
}

// Gophercloud implements Interface with gophercloud against a real Neutron.
type Gophercloud struct {
	client *gophercloud.ServiceClient
	// projectID, when set, narrows the lists of marked resources to the
	// project the controller works in: an admin credential sees every
	// project, and another project's resources are never ours to touch.
	projectID string
	// place is where the client's token reaches (place.go).
	place Place
	// pageSize bounds the size of one list response.
	pageSize int
}

var _ Interface = &Gophercloud{}

// NewGophercloud returns an Interface over client, which reaches place,
// and whose lists of marked resources see only place's project (every
// project the credential sees for the zero Place: a noauth server's
// single one).
func NewGophercloud(client *gophercloud.ServiceClient, place Place) *Gophercloud {
	return &Gophercloud{client: client, projectID: place.ProjectID, place: place, pageSize: 1000}
}

// ListNetworks lists the networks whose description is exactly description.
func (g *Gophercloud) ListNetworks(ctx context.Context, description string, visit func([]Network) error) error {
	err := eachPage(ctx, g.client, networks.List(g.client, networks.ListOpts{Description: description, ProjectID: g.projectID, Limit: g.pageSize}),
		func(page pagination.Page) error {
			var ns []networkWithMTU
			if err := networks.ExtractNetworksInto(page, &ns); err != nil {
				return err
			}
			out := make([]Network, 0, len(ns))
			for _, n := range ns {
				out = append(out, networkFrom(n))
			}
			return visit(out)
		})
	if err != nil {
		return classify("listing networks", err)
	}
	return nil
}

// networkWithMTU is a network as Neutron sends it with the net-mtu
// extension, which every ML2 deployment has.
type networkWithMTU struct {
	networks.Network
	mtu.NetworkMTUExt
	external.NetworkExternalExt
}

// ListSubnets lists the subnets whose description is exactly description.
func (g *Gophercloud) ListSubnets(ctx context.Context, description string, visit func([]Subnet) error) error {
	return g.eachSubnetPage(ctx, "listing subnets", subnets.ListOpts{Description: description, ProjectID: g.projectID, Limit: g.pageSize}, visit)
}

// SubnetsOf lists every subnet of a network in the client's project.
func (g *Gophercloud) SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error) {
	var out []Subnet
	err := g.eachSubnetPage(ctx, "listing the subnets of network "+networkID, subnets.ListOpts{NetworkID: networkID, ProjectID: g.projectID, Limit: g.pageSize},
		func(page []Subnet) error {
			out = append(out, page...)
			return nil
		})
	return out, err
}

func (g *Gophercloud) eachSubnetPage(ctx context.Context, op string, opts subnets.ListOpts, visit func([]Subnet) error) error {
	err := eachPage(ctx, g.client, subnets.List(g.client, opts), func(page pagination.Page) error {
		ss, err := subnets.ExtractSubnets(page)
		if err != nil {
			return err
		}
		out := make([]Subnet, 0, len(ss))
		for _, s := range ss {
			out = append(out, subnetFrom(s))
		}
		return visit(out)
	})
	if err != nil {
		return classify(op, err)
	}
	return nil
}

// FindSubnetPool finds a subnet pool by ID, else by name, among those
// the client's project may allocate from: its own, and the pools shared
// with every project. Another project's pool is not found, even by an
// admin credential that sees it.
func (g *Gophercloud) FindSubnetPool(ctx context.Context, nameOrID string) (SubnetPool, error) {
	p, err := findOne(ctx, "finding subnet pool "+nameOrID, "subnet pools of the project or shared", "SubnetPoolNotFound", nameOrID,
		func(ctx context.Context, byID bool) ([]subnetpools.SubnetPool, error) {
			opts := subnetpools.ListOpts{Name: nameOrID}
			if byID {
				opts = subnetpools.ListOpts{ID: nameOrID}
			}
			if g.projectID == "" {
				return g.listPools(ctx, opts)
			}
			own, shared := opts, opts
			own.ProjectID, shared.Shared = g.projectID, ptr.To(true)
			found, err := g.listPools(ctx, own)
			if err != nil {
				return nil, err
			}
			others, err := g.listPools(ctx, shared)
			for _, p := range others {
				if p.ProjectID != g.projectID {
					found = append(found, p)
				}
			}
			return found, err
		})
	return SubnetPool{ID: p.ID, Name: p.Name, IPVersion: p.IPversion}, err
}

func (g *Gophercloud) listPools(ctx context.Context, opts subnetpools.ListOpts) ([]subnetpools.SubnetPool, error) {
	var out []subnetpools.SubnetPool
	err := eachPage(ctx, g.client, subnetpools.List(g.client, opts), func(page pagination.Page) error {
		ps, err := subnetpools.ExtractSubnetPools(page)
		out = append(out, ps...)
		return err
	})
	return out, err
}

// findOne finds the one resource that has the ID nameOrID or, failing
// that, its name; list lists by ID (byID) or by name. None, or several of
// that name, is a *RejectedError of type notFound, the message counting
// what (kind) it found.
func findOne[T any](ctx context.Context, op, kind, notFound, nameOrID string, list func(ctx context.Context, byID bool) ([]T, error)) (T, error) {
	var (
		zero  T
		found []T
	)
	for _, byID := range []bool{true, false} {
		if byID && !isCanonicalUUID(nameOrID) {
			continue
		}
		var err error
		if found, err = list(ctx, byID); err != nil {
			return zero, classify(op, err)
		}
		if len(found) > 0 {
			break
		}
	}
	if len(found) != 1 {
		return zero, &RejectedError{Op: op, StatusCode: 404, Type: notFound,
			Message: fmt.Sprintf("%d %s are named or have the ID %q; name exactly one, by ID if names repeat", len(found), kind, nameOrID)}
	}
	return found[0], nil
}

// GetNetwork reads one network of the client's project. It lists by ID
// and project rather than GET by ID: an admin credential reads any
// project's network by ID, and another project's is answered as Neutron
// answers a missing one, a 404 that says nothing of what exists elsewhere.
func (g *Gophercloud) GetNetwork(ctx context.Context, id string) (Network, error) {
	op := "reading network " + id
	var ns []networkWithMTU
	err := eachPage(ctx, g.client, networks.List(g.client, networks.ListOpts{ID: id, ProjectID: g.projectID}), func(page pagination.Page) error {
		var more []networkWithMTU
		err := networks.ExtractNetworksInto(page, &more)
		ns = append(ns, more...)
		return err
	})
	if err != nil {
		return Network{}, classify(op, err)
	}
	if len(ns) != 1 || ns[0].ID != id {
		return Network{}, ErrorForResponse(op, http.StatusNotFound, "NetworkNotFound", fmt.Sprintf("Network %s could not be found.", id))
	}
	return networkFrom(ns[0]), nil
}

// CreateNetwork creates a network in one request.
func (g *Gophercloud) CreateNetwork(ctx context.Context, name, description string, mtuBytes int) (Network, error) {
	var opts networks.CreateOptsBuilder = networks.CreateOpts{Name: name, Description: description}
	if mtuBytes > 0 {
		opts = mtu.CreateOptsExt{CreateOptsBuilder: opts, MTU: mtuBytes}
	}
	var n networkWithMTU
	if err := networks.Create(ctx, g.client, opts).ExtractInto(&n); err != nil {
		return Network{}, classify("creating network "+name, err)
	}
	return networkFrom(n), nil
}

// UpdateNetwork changes a network in one request; its MTU through
// Neutron's net-mtu-writable extension.
func (g *Gophercloud) UpdateNetwork(ctx context.Context, id string, u NetworkUpdate) (Network, error) {
	base := networks.UpdateOpts{Name: u.Name, Description: u.Description, RevisionNumber: u.IfRevision}
	var opts networks.UpdateOptsBuilder = base
	if u.MTU != nil {
		opts = mtuUpdate{UpdateOptsExt: mtu.UpdateOptsExt{UpdateOptsBuilder: base, MTU: *u.MTU}, RevisionNumber: u.IfRevision}
	}
	var n networkWithMTU
	if err := networks.Update(ctx, g.client, id, opts).ExtractInto(&n); err != nil {
		return Network{}, classify("updating network "+id, err)
	}
	return networkFrom(n), nil
}

// mtuUpdate is a network update with an MTU that keeps its If-Match:
// gophercloud reads the headers of the options' own fields only, not of
// the update the net-mtu extension wraps, so the condition would be
// dropped and the update made unconditionally.
type mtuUpdate struct {
	mtu.UpdateOptsExt
	RevisionNumber *int `json:"-" h:"If-Match"`
}

// CreateSubnet creates a subnet in one request.
func (g *Gophercloud) CreateSubnet(ctx context.Context, req SubnetRequest) (Subnet, error) {
	version := gophercloud.IPVersion(req.IPVersion)
	switch {
	case strings.Contains(req.CIDR, ":"):
		version = gophercloud.IPv6
	case req.CIDR != "":
		version = gophercloud.IPv4
	}
	opts := subnets.CreateOpts{
		NetworkID:       req.NetworkID,
		Name:            req.Name,
		Description:     req.Description,
		CIDR:            req.CIDR,
		SubnetPoolID:    req.SubnetPoolID,
		Prefixlen:       req.PrefixLength,
		IPVersion:       version,
		GatewayIP:       req.Gateway, // "" is sent as null: no gateway
		DNSNameservers:  req.DNSNameservers,
		HostRoutes:      toRoutes(req.HostRoutes),
		AllocationPools: toPools(req.AllocationPools),
		EnableDHCP:      &req.EnableDHCP,
		IPv6AddressMode: req.IPv6AddressMode,
		IPv6RAMode:      req.IPv6RAMode,
	}
	s, err := subnets.Create(ctx, g.client, opts).Extract()
	if err != nil {
		return Subnet{}, classify("creating subnet "+cmp.Or(req.CIDR, "from pool "+req.SubnetPoolID)+" on network "+req.NetworkID, err)
	}
	return subnetFrom(*s), nil
}

// UpdateSubnet changes a subnet in one request.
func (g *Gophercloud) UpdateSubnet(ctx context.Context, id string, u SubnetUpdate) (Subnet, error) {
	opts := subnets.UpdateOpts{GatewayIP: u.Gateway, DNSNameservers: u.DNSNameservers, EnableDHCP: u.EnableDHCP, Name: u.Name, Description: u.Description,
		RevisionNumber: u.IfRevision}
	if u.HostRoutes != nil {
		routes := toRoutes(*u.HostRoutes)
		if routes == nil {
			routes = []subnets.HostRoute{} // sent as [], which clears them
		}
		opts.HostRoutes = &routes
	}
	if u.AllocationPools != nil {
		opts.AllocationPools = toPools(*u.AllocationPools)
	}
	s, err := subnets.Update(ctx, g.client, id, opts).Extract()
	if err != nil {
		return Subnet{}, classify("updating subnet "+id, err)
	}
	return subnetFrom(*s), nil
}

// DeleteSubnet deletes a subnet while its revision is ifRevision; one
// that is already gone counts as deleted.
func (g *Gophercloud) DeleteSubnet(ctx context.Context, id string, ifRevision int) error {
	return g.deleteIfMatch(ctx, "subnets", "subnet", id, ifRevision)
}

// DeleteNetwork deletes a network while its revision is ifRevision; one
// that is already gone counts as deleted.
func (g *Gophercloud) DeleteNetwork(ctx context.Context, id string, ifRevision int) error {
	return g.deleteIfMatch(ctx, "networks", "network", id, ifRevision)
}

// deleteIfMatch deletes the kind's id at collection while its revision is
// ifRevision. gophercloud's Delete functions send no headers, so the
// request is made here, as they make it, with the If-Match
// neutron-server checks before it deletes anything.
func (g *Gophercloud) deleteIfMatch(ctx context.Context, collection, kind, id string, ifRevision int) error {
	_, err := g.client.Delete(ctx, g.client.ServiceURL(collection, id), &gophercloud.RequestOpts{
		MoreHeaders: map[string]string{"If-Match": fmt.Sprintf("revision_number=%d", ifRevision)},
	})
	if err != nil && !IsNotFound(err) {
		return classify("deleting "+kind+" "+id, err)
	}
	return nil
}

// Place implements Interface.
func (g *Gophercloud) Place(context.Context) (Place, error) { return g.place, nil }

// Probe implements Interface: GET /v2.0/networks?limit=1&fields=id, in
// the controller's project when it knows it.
func (g *Gophercloud) Probe(ctx context.Context) error {
	q := url.Values{"limit": {"1"}, "fields": {"id"}}
	if g.projectID != "" {
		q.Set("project_id", g.projectID)
	}
	if _, err := g.client.Get(ctx, g.client.ServiceURL("networks")+"?"+q.Encode(), nil, nil); err != nil {
		return classify("probing Neutron", err)
	}
	return nil
}

// PortsOf lists the ports of a network; with a description, only those
// whose description is exactly that.
func (g *Gophercloud) PortsOf(ctx context.Context, networkID, description string) ([]Port, error) {
	var out []Port
	err := eachPage(ctx, g.client, ports.List(g.client, ports.ListOpts{NetworkID: networkID, Description: description, Limit: g.pageSize}),
		func(page pagination.Page) error {
			ps, err := ports.ExtractPorts(page)
			for _, p := range ps {
				out = append(out, portFrom(p))
			}
			return err
		})
	if err != nil {
		return nil, classify("listing the ports of network "+networkID, err)
	}
	return out, nil
}

func networkFrom(n networkWithMTU) Network {
	return Network{ID: n.ID, Name: n.Name, Description: n.Description, CreatedAt: n.CreatedAt, MTU: n.MTU, Status: n.Status, ProjectID: n.ProjectID,
		Shared: n.Shared, External: n.External, RevisionNumber: n.RevisionNumber, SubnetIDs: n.Subnets}
}

func subnetFrom(s subnets.Subnet) Subnet {
	out := Subnet{ID: s.ID, NetworkID: s.NetworkID, Name: s.Name, Description: s.Description, CIDR: s.CIDR, GatewayIP: s.GatewayIP,
		DNSNameservers: s.DNSNameservers, EnableDHCP: s.EnableDHCP, IPv6AddressMode: s.IPv6AddressMode, IPv6RAMode: s.IPv6RAMode,
		RevisionNumber: s.RevisionNumber}
	for _, r := range s.HostRoutes {
		out.HostRoutes = append(out.HostRoutes, HostRoute{Destination: r.DestinationCIDR, NextHop: r.NextHop})
	}
	for _, p := range s.AllocationPools {
		out.AllocationPools = append(out.AllocationPools, AllocationPool{Start: p.Start, End: p.End})
	}
	return out
}

func toRoutes(rs []HostRoute) []subnets.HostRoute {
	var out []subnets.HostRoute
	for _, r := range rs {
		out = append(out, subnets.HostRoute{DestinationCIDR: r.Destination, NextHop: r.NextHop})
	}
	return out
}

func toPools(ps []AllocationPool) []subnets.AllocationPool {
	var out []subnets.AllocationPool
	for _, p := range ps {
		out = append(out, subnets.AllocationPool{Start: p.Start, End: p.End})
	}
	return out
}

func portFrom(p ports.Port) Port {
	out := Port{ID: p.ID, NetworkID: p.NetworkID, Name: p.Name, Description: p.Description, DeviceOwner: p.DeviceOwner, DeviceID: p.DeviceID,
		ProjectID: cmp.Or(p.ProjectID, p.TenantID)}
	for _, ip := range p.FixedIPs {
		out.Addresses = append(out.Addresses, ip.IPAddress)
	}
	return out
}
