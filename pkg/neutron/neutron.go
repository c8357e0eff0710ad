package neutron

import (
	"context"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// Network is the part of a Neutron network the controller reads.
type Network struct {
	ID          string
	Name        string
	Description string
	// CreatedAt orders duplicates: the oldest is kept.
	CreatedAt time.Time
}

// Subnet is the part of a Neutron subnet the controller reads.
type Subnet struct {
	ID          string
	NetworkID   string
	Name        string
	Description string
	CIDR        string
	GatewayIP   string
}

// Port is the part of a Neutron port the controller reads: enough to say
// what blocks a delete.
type Port struct {
	ID          string
	DeviceOwner string
}

// SubnetRequest is what the controller asks of a new subnet.
type SubnetRequest struct {
	NetworkID   string
	Name        string
	Description string
	CIDR        string
	Gateway     string
}

// Interface is everything the controller asks of Neutron: a thin layer over
// its API that knows nothing of ownership (see Mark). Deletes of resources
// that are already gone succeed. Errors are classified: a *RejectedError is
// a refusal that retrying unchanged will not fix; anything else may be.
type Interface interface {
	// ListNetworks and ListSubnets list, page by page, the resources whose
	// description is exactly description; Neutron does the filtering.
	ListNetworks(ctx context.Context, description string) ([]Network, error)
	ListSubnets(ctx context.Context, description string) ([]Subnet, error)
	// SubnetsOf lists every subnet of a network, whatever made it.
	SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error)
	// CreateNetwork and CreateSubnet create in one request each, with the
	// name and description (the ownership mark) in the request itself.
	CreateNetwork(ctx context.Context, name, description string) (Network, error)
	CreateSubnet(ctx context.Context, req SubnetRequest) (Subnet, error)
	// UpdateSubnetGateway moves the gateway of subnet id, whose range is
	// cidr, and its allocation pools with it.
	UpdateSubnetGateway(ctx context.Context, id, cidr, gateway string) (Subnet, error)
	DeleteSubnet(ctx context.Context, id string) error
	DeleteNetwork(ctx context.Context, id string) error
	// PortsOf lists the ports of a network: read only when Neutron refuses
	// a delete because the network or its subnet is in use.
	PortsOf(ctx context.Context, networkID string) ([]Port, error)
}

// Gophercloud implements Interface with gophercloud against a real Neutron.
type Gophercloud struct {
	client *gophercloud.ServiceClient
	// pageSize bounds the size of one list response.
	pageSize int
}

var _ Interface = &Gophercloud{}

// NewGophercloud returns an Interface over client.
func NewGophercloud(client *gophercloud.ServiceClient) *Gophercloud {
	return &Gophercloud{client: client, pageSize: 1000}
}

// ListNetworks lists the networks whose description is exactly description.
func (g *Gophercloud) ListNetworks(ctx context.Context, description string) ([]Network, error) {
	var out []Network
	err := networks.List(g.client, networks.ListOpts{Description: description, Limit: g.pageSize}).
		EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
			ns, err := networks.ExtractNetworks(page)
			if err != nil {
				return false, err
			}
			for _, n := range ns {
				out = append(out, networkFrom(n))
			}
			return true, nil
		})
	if err != nil {
		return nil, classify("listing networks", err)
	}
	return out, nil
}

// ListSubnets lists the subnets whose description is exactly description.
func (g *Gophercloud) ListSubnets(ctx context.Context, description string) ([]Subnet, error) {
	return g.listSubnets(ctx, "listing subnets", subnets.ListOpts{Description: description, Limit: g.pageSize})
}

// SubnetsOf lists every subnet of a network.
func (g *Gophercloud) SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error) {
	return g.listSubnets(ctx, "listing the subnets of network "+networkID, subnets.ListOpts{NetworkID: networkID, Limit: g.pageSize})
}

func (g *Gophercloud) listSubnets(ctx context.Context, op string, opts subnets.ListOpts) ([]Subnet, error) {
	var out []Subnet
	err := subnets.List(g.client, opts).EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		ss, err := subnets.ExtractSubnets(page)
		if err != nil {
			return false, err
		}
		for _, s := range ss {
			out = append(out, subnetFrom(s))
		}
		return true, nil
	})
	if err != nil {
		return nil, classify(op, err)
	}
	return out, nil
}

// CreateNetwork creates a network in one request.
func (g *Gophercloud) CreateNetwork(ctx context.Context, name, description string) (Network, error) {
	n, err := networks.Create(ctx, g.client, networks.CreateOpts{Name: name, Description: description}).Extract()
	if err != nil {
		return Network{}, classify("creating network "+name, err)
	}
	return networkFrom(*n), nil
}

// CreateSubnet creates a subnet in one request.
func (g *Gophercloud) CreateSubnet(ctx context.Context, req SubnetRequest) (Subnet, error) {
	version := gophercloud.IPv4
	if strings.Contains(req.CIDR, ":") {
		version = gophercloud.IPv6
	}
	s, err := subnets.Create(ctx, g.client, subnets.CreateOpts{
		NetworkID:   req.NetworkID,
		Name:        req.Name,
		Description: req.Description,
		CIDR:        req.CIDR,
		IPVersion:   version,
		GatewayIP:   &req.Gateway,
	}).Extract()
	if err != nil {
		return Subnet{}, classify("creating subnet "+req.CIDR+" on network "+req.NetworkID, err)
	}
	return subnetFrom(*s), nil
}

// UpdateSubnetGateway moves a subnet's gateway. Neutron carves the
// allocation pools around the gateway when it creates a subnet and refuses
// a gateway inside a pool, so the pools are rewritten with it, to what
// Neutron would have chosen for the new gateway. One request.
func (g *Gophercloud) UpdateSubnetGateway(ctx context.Context, id, cidr, gateway string) (Subnet, error) {
	opts := subnets.UpdateOpts{GatewayIP: &gateway}
	if pools, err := AllocationPools(cidr, gateway); err == nil && pools != nil {
		opts.AllocationPools = pools
	}
	s, err := subnets.Update(ctx, g.client, id, opts).Extract()
	if err != nil {
		return Subnet{}, classify("updating the gateway of subnet "+id, err)
	}
	return subnetFrom(*s), nil
}

// DeleteSubnet deletes a subnet; one that is already gone counts as deleted.
func (g *Gophercloud) DeleteSubnet(ctx context.Context, id string) error {
	err := subnets.Delete(ctx, g.client, id).ExtractErr()
	if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		return classify("deleting subnet "+id, err)
	}
	return nil
}

// DeleteNetwork deletes a network; one that is already gone counts as deleted.
func (g *Gophercloud) DeleteNetwork(ctx context.Context, id string) error {
	err := networks.Delete(ctx, g.client, id).ExtractErr()
	if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		return classify("deleting network "+id, err)
	}
	return nil
}

// PortsOf lists the ports of a network.
func (g *Gophercloud) PortsOf(ctx context.Context, networkID string) ([]Port, error) {
	var out []Port
	err := ports.List(g.client, ports.ListOpts{NetworkID: networkID, Limit: g.pageSize}).
		EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
			ps, err := ports.ExtractPorts(page)
			if err != nil {
				return false, err
			}
			for _, p := range ps {
				out = append(out, Port{ID: p.ID, DeviceOwner: p.DeviceOwner})
			}
			return true, nil
		})
	if err != nil {
		return nil, classify("listing the ports of network "+networkID, err)
	}
	return out, nil
}

func networkFrom(n networks.Network) Network {
	return Network{ID: n.ID, Name: n.Name, Description: n.Description, CreatedAt: n.CreatedAt}
}

func subnetFrom(s subnets.Subnet) Subnet {
	return Subnet{ID: s.ID, NetworkID: s.NetworkID, Name: s.Name, Description: s.Description, CIDR: s.CIDR, GatewayIP: s.GatewayIP}
}
