package neutron

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"k8s.io/apimachinery/pkg/types"
)

// Owner is the Network a Neutron resource implements. It is written into
// the resource's tags when the resource is created, which is what lets a
// restarted controller adopt what it made before a crash and find what it
// must garbage-collect.
type Owner struct {
	Namespace string
	Name      string
	UID       types.UID
}

// Key is the owner's namespace/name, the key of the controller's work queue.
func (o Owner) Key() string { return o.Namespace + "/" + o.Name }

// Network is the part of a Neutron network the controller reads.
type Network struct {
	ID    string
	Owner Owner
	// CreatedAt is when Neutron created it; set by ListUntagged only.
	CreatedAt time.Time
}

// Subnet is the part of a Neutron subnet the controller reads.
type Subnet struct {
	ID        string
	NetworkID string
	CIDR      string
	GatewayIP string
	Owner     Owner
}

// Interface is everything the controller asks of Neutron. The List
// methods return only the resources this controller owns (tagged for its
// cluster). Deletes of resources that are already gone succeed.
//
// Neutron (at least up to Zed) takes no tags in a create request, so a
// create is two requests: the create, then the tags. A crash between them
// leaves an untagged resource, which the List methods cannot see; FindNetworks
// and SubnetsOf find such resources by the deterministic name and by network,
// so the controller adopts them instead of creating duplicates.
type Interface interface {
	ListNetworks(ctx context.Context) ([]Network, error)
	ListSubnets(ctx context.Context) ([]Subnet, error)
	// ListUntagged lists the networks that carry a name of ours (NameFor)
	// but none of our tags: creates whose tagging never happened.
	ListUntagged(ctx context.Context) ([]Network, error)
	// FindNetworks returns the networks named for owner, tagged or not.
	FindNetworks(ctx context.Context, owner Owner) ([]Network, error)
	// SubnetsOf returns the subnets of a network, tagged or not.
	SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error)
	// CreateNetwork creates a network named for owner and tags it.
	CreateNetwork(ctx context.Context, owner Owner) (Network, error)
	// CreateSubnet creates a subnet on networkID and tags it.
	CreateSubnet(ctx context.Context, owner Owner, networkID, cidr, gateway string) (Subnet, error)
	// TagNetwork and TagSubnet (re)write the ownership tags of an adopted resource.
	TagNetwork(ctx context.Context, id string, owner Owner) error
	TagSubnet(ctx context.Context, id string, owner Owner) error
	// UpdateSubnetGateway moves the gateway of subnet id, whose range is
	// cidr, and its allocation pools with it.
	UpdateSubnetGateway(ctx context.Context, id, cidr, gateway string) (Subnet, error)
	DeleteSubnet(ctx context.Context, id string) error
	DeleteNetwork(ctx context.Context, id string) error
}

// NameFor is the name of the Neutron network and subnet of owner. It is
// derived from the UID alone, so that it is unique, fits Neutron's 255
// characters, and can be looked up after a crash; the namespace and name
// are in the tags and description.
func NameFor(owner Owner) string { return namePrefix + string(owner.UID) }

const namePrefix = "k8s-"

// Tags. Neutron tags are plain strings (no commas, at most 255 characters);
// "key=value" keeps them readable in `openstack network show`.
const (
	managedByTag    = "managed-by=network-controller"
	clusterTagKey   = "k8s-cluster="
	namespaceTagKey = "k8s-namespace="
	nameTagKey      = "k8s-name="
	uidTagKey       = "k8s-uid="
)

// Gophercloud implements Interface with gophercloud against a real Neutron.
type Gophercloud struct {
	client *gophercloud.ServiceClient
	// ownedTags select this controller's resources in list requests.
	ownedTags []string
	// pageSize bounds the size of one list response.
	pageSize int
}

// NewGophercloud returns an Interface that manages the resources of the
// Kubernetes cluster clusterName through client. Two clusters sharing a
// Neutron project must use different names, or each would garbage-collect
// the other's networks.
func NewGophercloud(client *gophercloud.ServiceClient, clusterName string) *Gophercloud {
	return &Gophercloud{
		client:    client,
		ownedTags: []string{managedByTag, clusterTagKey + clusterName},
		pageSize:  1000,
	}
}

func (g *Gophercloud) tags(o Owner) []string {
	return append(append([]string{}, g.ownedTags...),
		namespaceTagKey+o.Namespace, nameTagKey+o.Name, uidTagKey+string(o.UID))
}

func description(o Owner) string {
	return fmt.Sprintf("Kubernetes Network %s (uid %s), managed by network-controller", o.Key(), o.UID)
}

// ListNetworks lists every network owned by this controller, page by page.
func (g *Gophercloud) ListNetworks(ctx context.Context) ([]Network, error) {
	var out []Network
	err := networks.List(g.client, networks.ListOpts{Tags: strings.Join(g.ownedTags, ","), Limit: g.pageSize}).
		EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
			ns, err := networks.ExtractNetworks(page)
			if err != nil {
				return false, err
			}
			for _, n := range ns {
				out = append(out, Network{ID: n.ID, Owner: ownerFromTags(n.Tags)})
			}
			return true, nil
		})
	if err != nil {
		return nil, classify("listing networks", err)
	}
	return out, nil
}

// ListSubnets lists every subnet owned by this controller, page by page.
func (g *Gophercloud) ListSubnets(ctx context.Context) ([]Subnet, error) {
	var out []Subnet
	err := subnets.List(g.client, subnets.ListOpts{Tags: strings.Join(g.ownedTags, ","), Limit: g.pageSize}).
		EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
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
		return nil, classify("listing subnets", err)
	}
	return out, nil
}

// ListUntagged lists the networks named like ours that have none of our
// tags. Their Owner has only the UID, read from the name.
func (g *Gophercloud) ListUntagged(ctx context.Context) ([]Network, error) {
	var out []Network
	err := networks.List(g.client, networks.ListOpts{NotTagsAny: managedByTag, Limit: g.pageSize}).
		EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
			ns, err := networks.ExtractNetworks(page)
			if err != nil {
				return false, err
			}
			for _, n := range ns {
				if uid, ok := strings.CutPrefix(n.Name, namePrefix); ok && uid != "" {
					out = append(out, Network{ID: n.ID, Owner: Owner{UID: types.UID(uid)}, CreatedAt: n.CreatedAt})
				}
			}
			return true, nil
		})
	if err != nil {
		return nil, classify("listing untagged networks", err)
	}
	return out, nil
}

// FindNetworks returns the networks named for owner, tagged or not.
func (g *Gophercloud) FindNetworks(ctx context.Context, owner Owner) ([]Network, error) {
	page, err := networks.List(g.client, networks.ListOpts{Name: NameFor(owner)}).AllPages(ctx)
	if err != nil {
		return nil, classify("finding the network of "+owner.Key(), err)
	}
	ns, err := networks.ExtractNetworks(page)
	if err != nil {
		return nil, err
	}
	out := make([]Network, 0, len(ns))
	for _, n := range ns {
		out = append(out, Network{ID: n.ID, Owner: ownerFromTags(n.Tags)})
	}
	return out, nil
}

// SubnetsOf returns the subnets of a network, tagged or not.
func (g *Gophercloud) SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error) {
	page, err := subnets.List(g.client, subnets.ListOpts{NetworkID: networkID}).AllPages(ctx)
	if err != nil {
		return nil, classify("listing the subnets of network "+networkID, err)
	}
	ss, err := subnets.ExtractSubnets(page)
	if err != nil {
		return nil, err
	}
	out := make([]Subnet, 0, len(ss))
	for _, s := range ss {
		out = append(out, subnetFrom(s))
	}
	return out, nil
}

// CreateNetwork creates a network named for owner, then tags it.
func (g *Gophercloud) CreateNetwork(ctx context.Context, owner Owner) (Network, error) {
	n, err := networks.Create(ctx, g.client, networks.CreateOpts{Name: NameFor(owner), Description: description(owner)}).Extract()
	if err != nil {
		return Network{}, classify("creating the network of "+owner.Key(), err)
	}
	if err := g.TagNetwork(ctx, n.ID, owner); err != nil {
		return Network{}, err
	}
	return Network{ID: n.ID, Owner: owner}, nil
}

// CreateSubnet creates the subnet of cidr with the given gateway on
// networkID, then tags it.
func (g *Gophercloud) CreateSubnet(ctx context.Context, owner Owner, networkID, cidr, gateway string) (Subnet, error) {
	version := gophercloud.IPv4
	if strings.Contains(cidr, ":") {
		version = gophercloud.IPv6
	}
	s, err := subnets.Create(ctx, g.client, subnets.CreateOpts{
		NetworkID:   networkID,
		Name:        NameFor(owner),
		Description: description(owner),
		CIDR:        cidr,
		IPVersion:   version,
		GatewayIP:   &gateway,
	}).Extract()
	if err != nil {
		return Subnet{}, classify("creating subnet "+cidr+" of "+owner.Key(), err)
	}
	if err := g.TagSubnet(ctx, s.ID, owner); err != nil {
		return Subnet{}, err
	}
	out := subnetFrom(*s)
	out.Owner = owner
	return out, nil
}

// TagNetwork replaces a network's tags with owner's.
func (g *Gophercloud) TagNetwork(ctx context.Context, id string, owner Owner) error {
	return g.replaceTags(ctx, "networks", id, owner)
}

// TagSubnet replaces a subnet's tags with owner's.
func (g *Gophercloud) TagSubnet(ctx context.Context, id string, owner Owner) error {
	return g.replaceTags(ctx, "subnets", id, owner)
}

func (g *Gophercloud) replaceTags(ctx context.Context, kind, id string, owner Owner) error {
	if _, err := attributestags.ReplaceAll(ctx, g.client, kind, id, attributestags.ReplaceAllOpts{Tags: g.tags(owner)}).Extract(); err != nil {
		return classify("tagging "+kind+" "+id+" for "+owner.Key(), err)
	}
	return nil
}

// UpdateSubnetGateway moves a subnet's gateway. Neutron carves the
// allocation pools around the gateway when it creates a subnet and refuses
// a gateway inside a pool, so the pools are rewritten with it, to what
// Neutron would have chosen for the new gateway.
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

// AllocationPools returns Neutron's default allocation pools for a subnet
// of cidr with the given gateway: every host address but the gateway (for
// IPv4, the network and broadcast addresses are not host addresses; for
// IPv6, only the subnet-router anycast address is excluded). It returns nil
// for ranges too small to have a pool besides the gateway.
func AllocationPools(cidr, gateway string) ([]subnets.AllocationPool, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	gw, err := netip.ParseAddr(gateway)
	if err != nil {
		return nil, err
	}
	prefix = prefix.Masked()
	first := prefix.Addr().Next()
	last := lastAddr(prefix)
	if prefix.Addr().Is4() {
		last = last.Prev()
	}
	if !first.IsValid() || !last.IsValid() || last.Less(first) {
		return nil, nil
	}
	var pools []subnets.AllocationPool
	if first.Less(gw) {
		pools = append(pools, subnets.AllocationPool{Start: first.String(), End: minAddr(gw.Prev(), last).String()})
	}
	if gw.Less(last) {
		pools = append(pools, subnets.AllocationPool{Start: maxAddr(gw.Next(), first).String(), End: last.String()})
	}
	return pools, nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func minAddr(a, b netip.Addr) netip.Addr {
	if a.Less(b) {
		return a
	}
	return b
}

func maxAddr(a, b netip.Addr) netip.Addr {
	if a.Less(b) {
		return b
	}
	return a
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

func subnetFrom(s subnets.Subnet) Subnet {
	return Subnet{ID: s.ID, NetworkID: s.NetworkID, CIDR: s.CIDR, GatewayIP: s.GatewayIP, Owner: ownerFromTags(s.Tags)}
}

func ownerFromTags(tags []string) Owner {
	var o Owner
	for _, t := range tags {
		switch {
		case strings.HasPrefix(t, namespaceTagKey):
			o.Namespace = strings.TrimPrefix(t, namespaceTagKey)
		case strings.HasPrefix(t, nameTagKey):
			o.Name = strings.TrimPrefix(t, nameTagKey)
		case strings.HasPrefix(t, uidTagKey):
			o.UID = types.UID(strings.TrimPrefix(t, uidTagKey))
		}
	}
	return o
}
