// Package plan says what the controller would ask of Neutron to make it
// match a Network, without asking it (network-controller plan). It runs
// the controller's own sync (syncHandler, which main.go hands it as a
// NewSyncer) with its own projects, reconciler (pkg/controller/reconcile) and door
// (pkg/controller/inventory), on clients that write nothing: what the controller
// writes to the API server lands in a Cluster of fakes, and each project's
// Neutron client sends every read and no write: DryRun records each write
// as a Request and answers it as Neutron would, so the rest of the sync
// goes on as it would have. What a sync would do is then exactly what the
// controller's code does, never a copy of it.
package plan

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Request is one write a sync would send to Neutron.
type Request struct {
	// Action is "create", "update", "delete", "attach" or "detach".
	Action string `json:"action"`
	// Kind is "network", "subnet", "router", "port" or "router interface".
	Kind string `json:"kind"`
	// ID is the resource's; a planned one (a create's) reads "(new network)".
	ID string `json:"id,omitempty"`
	// Fields are what a create sends, and what an update changes, each
	// with what Neutron holds now.
	Fields []Field `json:"fields,omitempty"`
}

// Field is one field a create sets or an update changes.
type Field struct {
	Name string `json:"name"`
	// From is what Neutron holds now; absent for a create.
	From any `json:"from,omitempty"`
	To   any `json:"to"`
}

// UnknownError ends a planned pass at a write whose answer the plan cannot
// tell: the range a subnet pool will allocate. What follows depends on it.
type UnknownError struct{ What string }

func (e *UnknownError) Error() string { return "the plan cannot tell " + e.What }

// DryRun is a neutron.Interface that reads from Neutron and writes
// nothing: each write is recorded and answered as Neutron would answer it,
// from what the reads showed. It implements every method itself, without
// embedding the client, so that a write added to neutron.Interface fails
// to compile here rather than pass through.
//
// Of what Neutron alone could refuse in a write, it refuses a create over
// the project's quota (read from Neutron at the first create, the plan's
// own creates counted), and a subnet that overlaps another of its network;
// an overlap with a subnet it has read of another network (the
// inventory's: every Network's of this cluster in the project) is a
// warning.
type DryRun struct {
	client neutron.Interface

	mu       sync.Mutex
	requests []Request
	warnings []string
	networks map[string]neutron.Network
	subnets  map[string]neutron.Subnet
	ports    map[string]neutron.Port
	routers  map[string]neutron.Router
	// quota is the project's, read at the first create; created counts
	// the creates planned, by kind, which also numbers their IDs.
	quota   *neutron.Quota
	created map[string]int
}

var _ neutron.Interface = &DryRun{}

// NewDryRun returns a DryRun that reads through client.
func NewDryRun(client neutron.Interface) *DryRun {
	return &DryRun{client: client, networks: map[string]neutron.Network{}, subnets: map[string]neutron.Subnet{},
		ports: map[string]neutron.Port{}, routers: map[string]neutron.Router{}, created: map[string]int{}}
}

// Take returns the writes recorded since the last Take, and what was
// found worth a warning.
func (d *DryRun) Take() ([]Request, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	requests, warnings := d.requests, d.warnings
	d.requests, d.warnings = nil, nil
	return requests, warnings
}

func (d *DryRun) record(r Request) {
	d.requests = append(d.requests, r)
}

// plannedID is the ID of the resource of kind the plan just created
// (overQuota counted it): "(new network)", then "(new network 2)".
func (d *DryRun) plannedID(kind string) string {
	if n := d.created[kind]; n > 1 {
		return fmt.Sprintf("(new %s %d)", kind, n)
	}
	return "(new " + kind + ")"
}

// overQuota answers a create of kind as Neutron answers one over the
// project's quota (409 OverQuota, in Neutron's words), which the plan
// reads once; nil when the create fits, or when the quota cannot be read
// (a warning then says it was not checked). It counts the create.
func (d *DryRun) overQuota(ctx context.Context, kind string) error {
	if d.quota == nil {
		q := neutron.Unlimited
		if r, ok := d.client.(neutron.QuotaReader); ok {
			var err error
			if q, err = r.Quota(ctx); err != nil {
				q = neutron.Unlimited
				d.warnings = append(d.warnings, "the project's quota was not checked: "+err.Error())
			}
		}
		d.quota = &q
	}
	usage := map[string]neutron.Usage{"network": d.quota.Networks, "subnet": d.quota.Subnets, "port": d.quota.Ports, "router": d.quota.Routers}[kind]
	if usage.Exceeded(d.created[kind] + 1) {
		return neutron.ErrorForResponse("creating "+kind, 409, "OverQuota", fmt.Sprintf("Quota exceeded for resources: ['%s'].", kind))
	}
	d.created[kind]++
	return nil
}

// isPlanned reports whether id is of a resource the plan created.
func isPlanned(id string) bool { return strings.HasPrefix(id, "(new ") }

// seen remembers what a read returned, which a later update starts from.
func seen[T any](d *DryRun, into map[string]T, id func(T) string, items []T) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, it := range items {
		into[id(it)] = it
	}
}

func networkID(n neutron.Network) string { return n.ID }
func subnetID(s neutron.Subnet) string   { return s.ID }
func portID(p neutron.Port) string       { return p.ID }
func routerID(r neutron.Router) string   { return r.ID }

// ListNetworks reads.
func (d *DryRun) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	return d.client.ListNetworks(ctx, description, func(page []neutron.Network) error {
		seen(d, d.networks, networkID, page)
		return visit(page)
	})
}

// ListSubnets reads.
func (d *DryRun) ListSubnets(ctx context.Context, description string, visit func([]neutron.Subnet) error) error {
	return d.client.ListSubnets(ctx, description, func(page []neutron.Subnet) error {
		seen(d, d.subnets, subnetID, page)
		return visit(page)
	})
}

// ListIPAvailabilities reads: a plan shows no counts, but the inventory
// it plans from lists them as the controller's does.
func (d *DryRun) ListIPAvailabilities(ctx context.Context, visit func([]neutron.NetworkIPs) error) error {
	return d.client.ListIPAvailabilities(ctx, visit)
}

// FindSubnetPool reads.
func (d *DryRun) FindSubnetPool(ctx context.Context, nameOrID string) (neutron.SubnetPool, error) {
	return d.client.FindSubnetPool(ctx, nameOrID)
}

// GetNetwork reads.
func (d *DryRun) GetNetwork(ctx context.Context, id string) (neutron.Network, error) {
	n, err := d.client.GetNetwork(ctx, id)
	if err == nil {
		seen(d, d.networks, networkID, []neutron.Network{n})
	}
	return n, err
}

// SubnetsOf reads; of a planned network, it answers with what was
// planned on it, which Neutron has never heard of.
func (d *DryRun) SubnetsOf(ctx context.Context, id string) ([]neutron.Subnet, error) {
	if isPlanned(id) {
		d.mu.Lock()
		defer d.mu.Unlock()
		var out []neutron.Subnet
		for _, s := range d.subnets {
			if s.NetworkID == id {
				out = append(out, s)
			}
		}
		return out, nil
	}
	subs, err := d.client.SubnetsOf(ctx, id)
	seen(d, d.subnets, subnetID, subs)
	return subs, err
}

// PortsOf reads; a planned network has only the ports planned on it.
func (d *DryRun) PortsOf(ctx context.Context, id, description string) ([]neutron.Port, error) {
	if isPlanned(id) {
		d.mu.Lock()
		defer d.mu.Unlock()
		var out []neutron.Port
		for _, p := range d.ports {
			if p.NetworkID == id && (description == "" || p.Description == description) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	ports, err := d.client.PortsOf(ctx, id, description)
	seen(d, d.ports, portID, ports)
	return ports, err
}

// FindRouter reads.
func (d *DryRun) FindRouter(ctx context.Context, nameOrID string) (neutron.Router, error) {
	r, err := d.client.FindRouter(ctx, nameOrID)
	if err == nil {
		seen(d, d.routers, routerID, []neutron.Router{r})
	}
	return r, err
}

// ListRouters reads.
func (d *DryRun) ListRouters(ctx context.Context, description string, visit func([]neutron.Router) error) error {
	return d.client.ListRouters(ctx, description, func(page []neutron.Router) error {
		seen(d, d.routers, routerID, page)
		return visit(page)
	})
}

// FindExternalNetwork reads.
func (d *DryRun) FindExternalNetwork(ctx context.Context, nameOrID string) (neutron.Network, error) {
	return d.client.FindExternalNetwork(ctx, nameOrID)
}

// Project reads.
func (d *DryRun) Place(ctx context.Context) (neutron.Place, error) { return d.client.Place(ctx) }

// Probe reads.
func (d *DryRun) Probe(ctx context.Context) error { return d.client.Probe(ctx) }

// CreateNetwork records the create and answers with the network Neutron
// would make: an MTU of 0 is Neutron's to choose, and stays unknown.
func (d *DryRun) CreateNetwork(ctx context.Context, name, description string, mtu int) (neutron.Network, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.overQuota(ctx, "network"); err != nil {
		return neutron.Network{}, err
	}
	n := neutron.Network{ID: d.plannedID("network"), Name: name, Description: description, MTU: mtu, Status: "ACTIVE"}
	fields := []Field{{Name: "name", To: name}}
	if mtu > 0 {
		fields = append(fields, Field{Name: "mtu", To: mtu})
	}
	d.record(Request{Action: "create", Kind: "network", Fields: fields})
	d.networks[n.ID] = n
	return n, nil
}

// CreateSubnet records the create and answers with the subnet the request
// spells out (the controller leaves nothing to Neutron's defaults but a
// pool's range, which the plan cannot tell). A range that overlaps a
// subnet read before is refused as Neutron refuses it.
func (d *DryRun) CreateSubnet(ctx context.Context, req neutron.SubnetRequest) (neutron.Subnet, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.overQuota(ctx, "subnet"); err != nil {
		return neutron.Subnet{}, err
	}
	fields := []Field{{Name: "networkID", To: req.NetworkID}}
	if req.SubnetPoolID != "" {
		fields = append(fields, Field{Name: "subnetPoolID", To: req.SubnetPoolID})
		if req.PrefixLength > 0 {
			fields = append(fields, Field{Name: "prefixLength", To: req.PrefixLength})
		}
		d.record(Request{Action: "create", Kind: "subnet", Fields: fields})
		return neutron.Subnet{}, &UnknownError{What: "the range subnet pool " + req.SubnetPoolID + " will allocate; what follows depends on it"}
	}
	if err := d.overlap(req); err != nil {
		return neutron.Subnet{}, err
	}
	s := neutron.Subnet{ID: d.plannedID("subnet"), NetworkID: req.NetworkID, Name: req.Name, Description: req.Description,
		CIDR: req.CIDR, DNSNameservers: req.DNSNameservers, HostRoutes: req.HostRoutes, AllocationPools: req.AllocationPools,
		EnableDHCP: req.EnableDHCP, IPv6AddressMode: req.IPv6AddressMode, IPv6RAMode: req.IPv6RAMode}
	if req.Gateway != nil {
		s.GatewayIP = *req.Gateway
	}
	fields = append(fields, Field{Name: "cidr", To: s.CIDR}, Field{Name: "gateway", To: s.GatewayIP})
	fields = append(fields, subnetOptions(neutron.Subnet{}, s)...)
	d.record(Request{Action: "create", Kind: "subnet", Fields: fields})
	d.subnets[s.ID] = s
	return s, nil
}

// overlap refuses req, as neutron-server does, when its range overlaps a
// subnet of the same network, read or planned. An overlap with a subnet of
// another network, which neutron-server 21 accepts, is only warned of:
// the two cannot be routed together.
func (d *DryRun) overlap(req neutron.SubnetRequest) error {
	want, err := netip.ParsePrefix(req.CIDR)
	if err != nil {
		return nil // the controller's own checks come first; Neutron says the rest
	}
	for _, s := range d.subnets {
		p, err := netip.ParsePrefix(s.CIDR)
		switch {
		case err != nil || !p.Overlaps(want):
		case s.NetworkID == req.NetworkID:
			return neutron.ErrorForResponse("creating subnet "+req.CIDR+" on network "+req.NetworkID, 400, "InvalidInput", fmt.Sprintf(
				"Invalid input for operation: Requested subnet with cidr: %s for network: %s overlaps with another subnet.", req.CIDR, req.NetworkID))
		default:
			d.warnings = append(d.warnings, fmt.Sprintf("%s overlaps subnet %s (%s) of network %s %q: Neutron accepts it, but the two cannot be routed together",
				req.CIDR, s.ID, s.CIDR, s.NetworkID, d.networks[s.NetworkID].Name))
		}
	}
	return nil
}

// UpdateNetwork records the update and answers with the network changed.
func (d *DryRun) UpdateNetwork(_ context.Context, id string, u neutron.NetworkUpdate) (neutron.Network, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.networks[id]
	var fields []Field
	if u.MTU != nil {
		fields = append(fields, Field{Name: "mtu", From: n.MTU, To: *u.MTU})
		n.MTU = *u.MTU
	}
	fields = append(fields, markFields(n.Name, n.Description, u.Name, u.Description)...)
	n.Name, n.Description = deref(u.Name, n.Name), deref(u.Description, n.Description)
	d.record(Request{Action: "update", Kind: "network", ID: id, Fields: fields})
	d.networks[id] = n
	return n, nil
}

// UpdateSubnet records the update and answers with the subnet changed.
func (d *DryRun) UpdateSubnet(_ context.Context, id string, u neutron.SubnetUpdate) (neutron.Subnet, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.subnets[id]
	s := old
	if u.Gateway != nil {
		s.GatewayIP = *u.Gateway
	}
	s.DNSNameservers = deref(u.DNSNameservers, s.DNSNameservers)
	s.HostRoutes = deref(u.HostRoutes, s.HostRoutes)
	s.AllocationPools = deref(u.AllocationPools, s.AllocationPools)
	s.EnableDHCP = deref(u.EnableDHCP, s.EnableDHCP)
	s.Name, s.Description = deref(u.Name, s.Name), deref(u.Description, s.Description)
	var fields []Field
	if u.Gateway != nil {
		fields = append(fields, Field{Name: "gateway", From: old.GatewayIP, To: s.GatewayIP})
	}
	fields = append(fields, subnetOptions(old, s)...)
	fields = append(fields, markFields(old.Name, old.Description, u.Name, u.Description)...)
	d.record(Request{Action: "update", Kind: "subnet", ID: id, Fields: fields})
	d.subnets[id] = s
	return s, nil
}

// subnetOptions are the options in which to differs from from.
func subnetOptions(from, to neutron.Subnet) []Field {
	var fields []Field
	add := func(name string, changed bool, f, t any) {
		if changed {
			fields = append(fields, Field{Name: name, From: f, To: t})
		}
	}
	add("dnsNameservers", !slices.Equal(from.DNSNameservers, to.DNSNameservers), from.DNSNameservers, to.DNSNameservers)
	add("hostRoutes", !slices.Equal(from.HostRoutes, to.HostRoutes), from.HostRoutes, to.HostRoutes)
	add("allocationPools", !slices.Equal(from.AllocationPools, to.AllocationPools), from.AllocationPools, to.AllocationPools)
	add("enableDHCP", from.EnableDHCP != to.EnableDHCP || from.ID == "", from.EnableDHCP, to.EnableDHCP)
	add("ipv6AddressMode", from.IPv6AddressMode != to.IPv6AddressMode, from.IPv6AddressMode, to.IPv6AddressMode)
	add("ipv6RAMode", from.IPv6RAMode != to.IPv6RAMode, from.IPv6RAMode, to.IPv6RAMode)
	if from.ID == "" {
		// A create: nothing to come from.
		for i := range fields {
			fields[i].From = nil
		}
	}
	return fields
}

// markFields are the name and description an update replaces: the
// ownership mark, written or given back.
func markFields(name, description string, newName, newDescription *string) []Field {
	var fields []Field
	if newName != nil {
		fields = append(fields, Field{Name: "name", From: name, To: *newName})
	}
	if newDescription != nil {
		fields = append(fields, Field{Name: "description", From: description, To: *newDescription})
	}
	return fields
}

func deref[T any](p *T, otherwise T) T {
	if p == nil {
		return otherwise
	}
	return *p
}

// planDelete records the delete of the kind's id, which goes from held.
func planDelete[T any](d *DryRun, kind string, held map[string]T, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record(Request{Action: "delete", Kind: kind, ID: id})
	delete(held, id)
	return nil
}

// DeleteSubnet records the delete, as DeleteNetwork does.
func (d *DryRun) DeleteSubnet(_ context.Context, id string, _ int) error {
	return planDelete(d, "subnet", d.subnets, id)
}

// DeleteNetwork records the delete; a plan sends nothing, so it has no
// revision to hold Neutron to.
func (d *DryRun) DeleteNetwork(_ context.Context, id string, _ int) error {
	return planDelete(d, "network", d.networks, id)
}

// CreateRouter records the create and answers with the router.
func (d *DryRun) CreateRouter(ctx context.Context, name, description, gatewayNetworkID string) (neutron.Router, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.overQuota(ctx, "router"); err != nil {
		return neutron.Router{}, err
	}
	r := neutron.Router{ID: d.plannedID("router"), Name: name, Description: description, GatewayNetworkID: gatewayNetworkID}
	d.record(Request{Action: "create", Kind: "router", Fields: []Field{{Name: "name", To: name}, {Name: "externalNetworkID", To: gatewayNetworkID}}})
	d.routers[r.ID] = r
	return r, nil
}

// UpdateRouter records the update and answers with the router changed.
func (d *DryRun) UpdateRouter(_ context.Context, id string, gatewayNetworkID, description *string, _ int) (neutron.Router, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.routers[id]
	var fields []Field
	if gatewayNetworkID != nil {
		fields = append(fields, Field{Name: "externalNetworkID", From: r.GatewayNetworkID, To: *gatewayNetworkID})
		r.GatewayNetworkID = *gatewayNetworkID
	}
	fields = append(fields, markFields(r.Name, r.Description, nil, description)...)
	r.Description = deref(description, r.Description)
	d.record(Request{Action: "update", Kind: "router", ID: id, Fields: fields})
	d.routers[id] = r
	return r, nil
}

// DeleteRouter records the delete, as DeleteNetwork does.
func (d *DryRun) DeleteRouter(_ context.Context, id string, _ int) error {
	return planDelete(d, "router", d.routers, id)
}

// CreatePort records the create and answers with the router interface
// port, not attached yet.
func (d *DryRun) CreatePort(ctx context.Context, req neutron.PortRequest) (neutron.Port, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.overQuota(ctx, "port"); err != nil {
		return neutron.Port{}, err
	}
	p := neutron.Port{ID: d.plannedID("port"), NetworkID: req.NetworkID, Name: req.Name, Description: req.Description,
		DeviceOwner: "network:router_interface", Addresses: []string{req.Address}}
	d.record(Request{Action: "create", Kind: "port", Fields: []Field{{Name: "subnetID", To: req.SubnetID}, {Name: "address", To: req.Address}}})
	d.ports[p.ID] = p
	return p, nil
}

// UpdatePortMark records the update.
func (d *DryRun) UpdatePortMark(_ context.Context, id, name, description string) (neutron.Port, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.ports[id]
	d.record(Request{Action: "update", Kind: "port", ID: id, Fields: markFields(p.Name, p.Description, &name, &description)})
	p.Name, p.Description = name, description
	d.ports[id] = p
	return p, nil
}

// DeletePort records the delete.
func (d *DryRun) DeletePort(_ context.Context, id string) error {
	return planDelete(d, "port", d.ports, id)
}

// AddRouterInterface records the attach.
func (d *DryRun) AddRouterInterface(_ context.Context, routerID, portID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record(Request{Action: "attach", Kind: "router interface", ID: portID, Fields: []Field{{Name: "routerID", To: routerID}}})
	return nil
}

// RemoveRouterInterface records the detach.
func (d *DryRun) RemoveRouterInterface(_ context.Context, routerID, portID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record(Request{Action: "detach", Kind: "router interface", ID: portID, Fields: []Field{{Name: "routerID", To: routerID}}})
	return nil
}
