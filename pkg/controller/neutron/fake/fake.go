// Package fake is an in-memory neutron.Interface for unit tests. It behaves
// as neutron-server does where the controller can tell: lists filter on the
// exact description, and, once SetProject names the credentials' project,
// every read sees only that project's resources (and shared pools), as the
// real client's project_id filters make an admin credential see them, a subnet that overlaps another of its network
// is refused with Neutron's 400 (of any network after RefuseOverlappingIPs), as is a router interface whose
// subnet overlaps one already on the router (in Neutron's words, which name the other subnet), a missing resource is a 404 (an error for updates and
// creates on it, success for deletes), an update conditional on a
// revision the network or subnet has left is refused with Neutron's 412
// (revisions.go), and a request can be made to complete in Neutron after
// its caller gave up. It records every request
// and fails the ones a test tells it to.
package fake

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Request names, as recorded by Neutron.Requests.
const (
	ListNetworks   = "list-networks"
	ListSubnets    = "list-subnets"
	SubnetsOf      = "subnets-of"
	GetNetwork     = "get-network"
	FindSubnetPool = "find-subnet-pool"
	CreateNetwork  = "create-network"
	CreateSubnet   = "create-subnet"
	UpdateSubnet   = "update-subnet"
	UpdateNetwork  = "update-network"
	DeleteSubnet   = "delete-subnet"
	DeleteNetwork  = "delete-network"
	PortsOf        = "ports-of"
	// The router requests (routers.go).
	FindRouter            = "find-router"
	ListRouters           = "list-routers"
	FindExternalNetwork   = "find-external-network"
	CreateRouter          = "create-router"
	UpdateRouter          = "update-router"
	DeleteRouter          = "delete-router"
	CreatePort            = "create-port"
	UpdatePort            = "update-port"
	DeletePort            = "delete-port"
	AddRouterInterface    = "add-router-interface"
	RemoveRouterInterface = "remove-router-interface"
	Probe                 = "probe"
	Quota                 = "quota"
)

// ErrAnswerLost is what a caller gets for a request that CompleteLate made
// complete after it gave up, as an HTTP client's timeout reports it.
var ErrAnswerLost = context.DeadlineExceeded

// Neutron is a fake Neutron. Its zero value is not usable: call New.
type Neutron struct {
	mu       sync.Mutex
	networks map[string]neutron.Network
	subnets  map[string]neutron.Subnet
	// ports holds the ports by network ID: all but Neutron's own (DHCP)
	// block deleting it or its subnets, as a VM's port or a router
	// interface does.
	ports   map[string][]neutron.Port
	routers map[string]neutron.Router
	// externals are the external networks, by ID.
	externals map[string]neutron.Network
	requests  []string
	errs      map[string]error
	late      map[string]bool
	// project is what Project answers: the project of the credentials.
	// Every resource belongs to the project that was current when it was
	// made (projectOf, by ID); with a project set, reads see only its own.
	project   string
	projectOf map[string]string
	// region is the region the credentials reach: another Neutron, so a
	// resource is seen only in the region it was made in (regionOf).
	region   string
	regionOf map[string]string
	// shared are the subnet pools shared with every project, by ID.
	shared map[string]bool
	// networkQuota, when not negative, is how many networks the project
	// may hold.
	networkQuota int
	// overlapsRefused refuses a subnet that overlaps any other subnet,
	// not only one of its own network.
	overlapsRefused bool
	// member makes the credentials a project member's, whom Neutron's
	// policy refuses its administrators' APIs (AsMember).
	member bool
	nextID int
	pools  map[string]pool
	clock  time.Time
}

var (
	_ neutron.Interface   = &Neutron{}
	_ neutron.QuotaReader = &Neutron{}
)

// New returns an empty fake Neutron.
func New() *Neutron {
	return &Neutron{networks: map[string]neutron.Network{}, subnets: map[string]neutron.Subnet{}, ports: map[string][]neutron.Port{},
		routers: map[string]neutron.Router{}, externals: map[string]neutron.Network{}, errs: map[string]error{}, late: map[string]bool{}, networkQuota: -1,
		projectOf: map[string]string{}, regionOf: map[string]string{}, shared: map[string]bool{}, clock: time.Unix(1e9, 0), pools: map[string]pool{}}
}

// AddNetwork stores a network as if something had made it before the test,
// and returns its ID.
func (f *Neutron) AddNetwork(name, description string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.storeNetwork(name, description).ID
}

// ShareNetwork makes network id shared with every project, as an
// administrator would.
func (f *Neutron) ShareNetwork(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.networks[id]
	n.Shared = true
	f.networks[id] = n
	f.reviseNetwork(id)
}

// MakeExternal makes network id an external network (router:external),
// as an administrator would; FindExternalNetwork does not find it, which
// only AddExternalNetwork's are.
func (f *Neutron) MakeExternal(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.networks[id]
	n.External = true
	f.networks[id] = n
	f.reviseNetwork(id)
}

// AddSubnet stores a subnet as if something had made it before the test,
// and returns its ID. It does not check for overlaps.
func (f *Neutron) AddSubnet(networkID, name, description, cidr, gateway string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.storeSubnet(neutron.SubnetRequest{NetworkID: networkID, Name: name, Description: description, CIDR: cidr, Gateway: &gateway, EnableDHCP: true}).ID
}

// SetNetworkQuota sets how many networks the project may hold (-1: no
// limit), as an operator would with `openstack quota set --networks`.
func (f *Neutron) SetNetworkQuota(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.networkQuota = n
}

// Quota implements neutron.QuotaReader: the network quota SetNetworkQuota
// set, and no other limit. It is a read of Neutron's.
func (f *Neutron) Quota(ctx context.Context) (neutron.Quota, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, Quota); err != nil {
		return neutron.Quota{}, err
	}
	q := neutron.Unlimited
	q.Networks = neutron.Usage{Limit: f.networkQuota, Used: len(f.networks)}
	return q, nil
}

// AddPort puts a port on networkID, as Nova would for a VM: until
// RemovePorts, Neutron refuses to delete the network or its subnets,
// unless the port is one of Neutron's own (a DHCP port, see
// neutron.Port.DeletedWithNetwork).
func (f *Neutron) AddPort(networkID, id, deviceOwner string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ports[networkID] = append(f.ports[networkID], neutron.Port{ID: id, NetworkID: networkID, DeviceOwner: deviceOwner})
}

// AddPortWithAddresses puts a port with fixed IPs on networkID: only the
// subnets of those addresses refuse their delete while it is there.
func (f *Neutron) AddPortWithAddresses(networkID, id, deviceOwner string, addresses ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ports[networkID] = append(f.ports[networkID], neutron.Port{ID: id, NetworkID: networkID, DeviceOwner: deviceOwner, Addresses: addresses})
}

// usesSubnet reports whether port has an address in cidr, as Neutron's
// SubnetInUse counts it; a port of AddPort, with no address, uses every
// subnet of its network.
func usesSubnet(port neutron.Port, cidr string) bool {
	prefix, err := netip.ParsePrefix(cidr)
	if len(port.Addresses) == 0 || err != nil {
		return true
	}
	return slices.ContainsFunc(port.Addresses, func(a string) bool {
		addr, err := netip.ParseAddr(a)
		return err == nil && prefix.Contains(addr)
	})
}

// RemovePorts deletes every port of networkID.
func (f *Neutron) RemovePorts(networkID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ports, networkID)
}

// FailOn makes every later request named req fail with err (nil clears it).
func (f *Neutron) FailOn(req string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.errs, req)
	} else {
		f.errs[req] = err
	}
}

// CompleteLate makes the next request named req (a create, an update or a
// delete) happen in Neutron while its caller gets ErrAnswerLost, as when
// the caller's timeout fires before the answer comes, or the controller
// dies before reading it.
func (f *Neutron) CompleteLate(req string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.late[req] = true
}

// Requests returns the names of the requests made so far, in order.
func (f *Neutron) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// ClearRequests forgets the requests made so far.
func (f *Neutron) ClearRequests() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = nil
}

// Networks returns copies of the stored networks.
func (f *Neutron) Networks() []neutron.Network {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedValues(f.networks)
}

// Revision is network or subnet id's revision_number, for a test that
// deletes it as someone else would (DeleteNetwork and DeleteSubnet want
// the revision they read).
func (f *Neutron) Revision(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.subnets[id]; ok {
		return s.RevisionNumber
	}
	return f.networks[id].RevisionNumber
}

// Subnets returns copies of the stored subnets.
func (f *Neutron) Subnets() []neutron.Subnet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedValues(f.subnets)
}

func sortedValues[T any](m map[string]T) []T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]T, 0, len(m))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func (f *Neutron) newID(prefix string) string {
	f.nextID++
	id := fmt.Sprintf("%s-%d", prefix, f.nextID)
	f.projectOf[id] = f.project
	f.regionOf[id] = f.region
	return id
}

// inRegion reports whether the resource id is in the region the
// credentials reach: another region is another Neutron, which knows no ID
// of this one's, for a read or a write.
func (f *Neutron) inRegion(id string) bool {
	_, known := f.regionOf[id]
	return !known || f.regionOf[id] == f.region
}

// visible reports whether the credentials' project sees the resource id:
// every one when no project is set (a noauth server's single project).
func (f *Neutron) visible(id string) bool {
	return f.inRegion(id) && (f.project == "" || f.projectOf[id] == f.project)
}

// In runs seed with the credentials in project, so that what it adds
// belongs to project, and then puts the current project back: another
// project's resources, which an admin credential could see by ID.
func (f *Neutron) In(project string, seed func()) {
	f.mu.Lock()
	was := f.project
	f.project = project
	f.mu.Unlock()
	seed()
	f.SetProject(was)
}

// ShareSubnetPool makes the pool id shared with every project.
func (f *Neutron) ShareSubnetPool(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shared[id] = true
}

// MaxMTU is the largest MTU the fake allows, and the one it gives a network
// created without one: a Geneve network on a 1500-byte physical network, as
// the local stack's ML2/OVN has it.
const MaxMTU = 1442

func (f *Neutron) storeNetwork(name, description string) neutron.Network {
	f.clock = f.clock.Add(time.Second)
	n := neutron.Network{ID: f.newID("net"), Name: name, Description: description, CreatedAt: f.clock, MTU: MaxMTU, Status: "ACTIVE", ProjectID: f.project}
	f.networks[n.ID] = n
	return n
}

// storeSubnet stores req as Neutron would: the first host as the gateway
// when it names none, and its default pools when it names none.
func (f *Neutron) storeSubnet(req neutron.SubnetRequest) neutron.Subnet {
	s := neutron.Subnet{ID: f.newID("subnet"), NetworkID: req.NetworkID, Name: req.Name, Description: req.Description,
		CIDR: req.CIDR, DNSNameservers: req.DNSNameservers, HostRoutes: req.HostRoutes,
		AllocationPools: req.AllocationPools, EnableDHCP: req.EnableDHCP, IPv6AddressMode: req.IPv6AddressMode, IPv6RAMode: req.IPv6RAMode}
	p, err := netip.ParsePrefix(req.CIDR)
	switch {
	case req.Gateway != nil:
		s.GatewayIP = *req.Gateway
	case err == nil:
		s.GatewayIP = p.Masked().Addr().Next().String()
	}
	if len(s.AllocationPools) == 0 && err == nil {
		gw, _ := netip.ParseAddr(s.GatewayIP)
		s.AllocationPools = neutron.DefaultAllocationPools(p, gw)
	}
	f.subnets[s.ID] = s
	f.reviseNetwork(s.NetworkID)
	return s
}

// AddSubnetPool stores a subnet pool of prefixes whose default prefix
// length is defaultLength, and returns its ID.
func (f *Neutron) AddSubnetPool(name string, defaultLength int, prefixes ...string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, version := f.newID("pool"), 4
	if strings.Contains(prefixes[0], ":") {
		version = 6
	}
	f.pools[id] = pool{SubnetPool: neutron.SubnetPool{ID: id, Name: name, IPVersion: version}, defaultLength: defaultLength, prefixes: prefixes}
	return id
}

type pool struct {
	neutron.SubnetPool
	defaultLength int
	prefixes      []string
}

// allocate returns the first range of length bits in p that no subnet
// overlaps, as Neutron's subnet allocator does.
func (f *Neutron) allocate(p pool, bits int) (string, bool) {
	if bits == 0 {
		bits = p.defaultLength
	}
	for _, s := range p.prefixes {
		prefix := netip.MustParsePrefix(s)
		for candidate := netip.PrefixFrom(prefix.Addr(), bits); prefix.Contains(candidate.Addr()); {
			free := true
			for _, sub := range f.subnets {
				if q, err := netip.ParsePrefix(sub.CIDR); err == nil && q.Overlaps(candidate) {
					free = false
				}
			}
			if free {
				return candidate.String(), true
			}
			next := neutron.LastAddr(candidate).Next()
			if !next.IsValid() {
				break
			}
			candidate = netip.PrefixFrom(next, bits)
		}
	}
	return "", false
}

// FindSubnetPool finds a pool by ID, else by name.
func (f *Neutron) FindSubnetPool(ctx context.Context, nameOrID string) (neutron.SubnetPool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, FindSubnetPool); err != nil {
		return neutron.SubnetPool{}, err
	}
	usable := map[string]pool{}
	for id, p := range f.pools {
		if f.visible(id) || f.shared[id] {
			usable[id] = p
		}
	}
	p, err := findOne(usable, nameOrID, func(p pool) string { return p.Name }, FindSubnetPool, "SubnetPoolNotFound", "subnet pools of the project or shared")
	return p.SubnetPool, err
}

// findOne finds the one resource of byID whose ID is nameOrID or, failing
// that, whose name is: none, or several of that name, is the real
// client's *neutron.RejectedError of type notFound, counting them as kind.
func findOne[T any](byID map[string]T, nameOrID string, name func(T) string, req, notFound, kind string) (T, error) {
	if r, ok := byID[nameOrID]; ok {
		return r, nil
	}
	named := filter(sortedValues(byID), func(r T) bool { return name(r) == nameOrID })
	if len(named) != 1 {
		var zero T
		return zero, &neutron.RejectedError{Op: req, StatusCode: 404, Type: notFound,
			Message: fmt.Sprintf("%d %s are named or have the ID %q; name exactly one, by ID if names repeat", len(named), kind, nameOrID)}
	}
	return named[0], nil
}

// gatewayConflict is Neutron's refusal of a gateway inside a pool.
func gatewayConflict(req string, s neutron.Subnet) error {
	gw, err := netip.ParseAddr(s.GatewayIP)
	if err != nil {
		return nil
	}
	for _, p := range s.AllocationPools {
		start, err1 := netip.ParseAddr(p.Start)
		end, err2 := netip.ParseAddr(p.End)
		if err1 == nil && err2 == nil && !gw.Less(start) && !end.Less(gw) {
			return neutron.ErrorForResponse(req, 409, "GatewayConflictWithAllocationPools", fmt.Sprintf(
				"Gateway ip %s conflicts with allocation pool %s-%s.", s.GatewayIP, p.Start, p.End))
		}
	}
	return nil
}

func tooBig(req string, mtu int) error {
	if mtu > MaxMTU {
		return neutron.ErrorForResponse(req, 400, "InvalidInput", fmt.Sprintf("Requested MTU is too big, maximum is %d", MaxMTU))
	}
	return nil
}

// request records req and returns the error set for it, unless ctx
// requires another place than the credentials reach (neutron.InPlace):
// then, as the Session, it sends nothing, and records nothing. Callers
// hold f.mu.
func (f *Neutron) request(ctx context.Context, req string) error {
	if err := neutron.CheckRequired(ctx, f.place()); err != nil {
		return err
	}
	f.requests = append(f.requests, req)
	return f.errs[req]
}

// answer returns what the caller of req sees once Neutron has done it:
// ErrAnswerLost when req was to complete late.
func (f *Neutron) answer(req string) error {
	if f.late[req] {
		delete(f.late, req)
		return fmt.Errorf("%s: %w", req, ErrAnswerLost)
	}
	return nil
}

// SetProject makes the credentials reach project, as a clouds.yaml
// changed to another project's does.
func (f *Neutron) SetProject(project string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.project = project
}

// SetRegion makes the credentials reach region, as a clouds.yaml changed
// to another region's does: another Neutron, in which nothing made in the
// first is seen, and which the first does not see.
func (f *Neutron) SetRegion(region string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.region = region
}

// FakeAuthURL is the Keystone of the fake's places.
const FakeAuthURL = "https://keystone.fake/v3"

// Place implements neutron.Interface; it is no request. The fake has a
// Keystone once a project is set.
func (f *Neutron) Place(context.Context) (neutron.Place, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.place(), nil
}

// place is where the credentials reach. Callers hold f.mu.
func (f *Neutron) place() neutron.Place {
	if f.project == "" && f.region == "" {
		return neutron.Place{}
	}
	return neutron.Place{AuthURL: FakeAuthURL, Region: f.region, Interface: "public", ProjectID: f.project}
}

// Probe implements neutron.Interface.
func (f *Neutron) Probe(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Sent wherever the credentials reach, as the Session sends it.
	return f.request(context.Background(), Probe)
}

// pageSize is how many resources a list hands over at a time: the limit
// the controller asks Neutron for.
const pageSize = 1000

func (f *Neutron) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	f.mu.Lock()
	if err := f.request(ctx, ListNetworks); err != nil {
		f.mu.Unlock()
		return err
	}
	var nets []neutron.Network
	on := f.subnetIDs()
	for _, n := range sortedValues(f.networks) {
		if (description == "" || n.Description == description) && f.visible(n.ID) {
			n.SubnetIDs = on[n.ID]
			nets = append(nets, n)
		}
	}
	f.mu.Unlock()
	return inPages(nets, visit)
}

func (f *Neutron) ListSubnets(ctx context.Context, description string, visit func([]neutron.Subnet) error) error {
	f.mu.Lock()
	if err := f.request(ctx, ListSubnets); err != nil {
		f.mu.Unlock()
		return err
	}
	subs := filter(sortedValues(f.subnets), func(s neutron.Subnet) bool {
		return (description == "" || s.Description == description) && f.visible(s.ID)
	})
	f.mu.Unlock()
	return inPages(subs, visit)
}

// inPages hands all to visit pageSize at a time, outside the fake's lock
// as a real list's pages arrive outside Neutron's transactions.
func inPages[T any](all []T, visit func([]T) error) error {
	for page := range slices.Chunk(all, pageSize) {
		if err := visit(page); err != nil {
			return err
		}
	}
	return nil
}

func (f *Neutron) GetNetwork(ctx context.Context, id string) (neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, GetNetwork); err != nil {
		return neutron.Network{}, err
	}
	n, ok := f.networks[id]
	if !ok || !f.visible(id) {
		return neutron.Network{}, neutron.ErrorForResponse(GetNetwork, 404, "NetworkNotFound", fmt.Sprintf("Network %s could not be found.", id))
	}
	n.SubnetIDs = f.subnetIDs()[id]
	return n, nil
}

// subnetIDs maps each network's ID to the IDs of every subnet on it,
// sorted, as Neutron answers a network, or a list of them, with their
// "subnets". Made once per request, so that a list costs O(subnets), not
// O(networks × subnets). Callers hold f.mu.
func (f *Neutron) subnetIDs() map[string][]string {
	on := make(map[string][]string)
	for _, s := range sortedValues(f.subnets) {
		on[s.NetworkID] = append(on[s.NetworkID], s.ID)
	}
	return on
}

func (f *Neutron) SubnetsOf(ctx context.Context, networkID string) ([]neutron.Subnet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, SubnetsOf); err != nil {
		return nil, err
	}
	return filter(sortedValues(f.subnets), func(s neutron.Subnet) bool { return s.NetworkID == networkID && f.visible(s.ID) }), nil
}

func filter[T any](in []T, keep func(T) bool) []T {
	var out []T
	for _, x := range in {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func (f *Neutron) CreateNetwork(ctx context.Context, name, description string, mtu int) (neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, CreateNetwork); err != nil {
		return neutron.Network{}, err
	}
	if f.networkQuota >= 0 && len(f.networks) >= f.networkQuota {
		return neutron.Network{}, neutron.ErrorForResponse(CreateNetwork, 409, "OverQuota", "Quota exceeded for resources: ['network'].")
	}
	if err := tooBig(CreateNetwork, mtu); err != nil {
		return neutron.Network{}, err
	}
	n := f.storeNetwork(name, description)
	if mtu > 0 {
		n.MTU = mtu
		f.networks[n.ID] = n
	}
	if err := f.answer(CreateNetwork); err != nil {
		return neutron.Network{}, err
	}
	return n, nil
}

// RefuseOverlappingIPs makes CreateSubnet refuse a range that overlaps
// any other subnet's, as a neutron-server with allow_overlapping_ips =
// False did; neutron-server 21 (Zed), the stack's, has no such option,
// and refuses an overlap on the same network only.
func (f *Neutron) RefuseOverlappingIPs() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overlapsRefused = true
}

// CreateSubnet refuses, as neutron-server does, a range that overlaps a
// subnet of the same network (of any network after RefuseOverlappingIPs).
func (f *Neutron) CreateSubnet(ctx context.Context, req neutron.SubnetRequest) (neutron.Subnet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, CreateSubnet); err != nil {
		return neutron.Subnet{}, err
	}
	if _, ok := f.networks[req.NetworkID]; !ok {
		return neutron.Subnet{}, neutron.ErrorForResponse(CreateSubnet, 404, "NetworkNotFound",
			fmt.Sprintf("Network %s could not be found.", req.NetworkID))
	}
	if req.SubnetPoolID != "" {
		p, ok := f.pools[req.SubnetPoolID]
		if !ok {
			return neutron.Subnet{}, neutron.ErrorForResponse(CreateSubnet, 404, "SubnetPoolNotFound", "Subnet pool "+req.SubnetPoolID+" could not be found.")
		}
		cidr, ok := f.allocate(p, req.PrefixLength)
		if !ok {
			return neutron.Subnet{}, neutron.ErrorForResponse(CreateSubnet, 409, "SubnetAllocationError", "Insufficient prefix space to allocate subnet size")
		}
		req.CIDR = cidr
	}
	want, err := netip.ParsePrefix(req.CIDR)
	if err != nil {
		return neutron.Subnet{}, neutron.ErrorForResponse(CreateSubnet, 400, "InvalidInput", "Invalid input for cidr: "+err.Error())
	}
	for _, s := range sortedValues(f.subnets) {
		if p, err := netip.ParsePrefix(s.CIDR); err == nil && p.Overlaps(want) && (f.overlapsRefused || s.NetworkID == req.NetworkID) {
			return neutron.Subnet{}, neutron.ErrorForResponse(CreateSubnet, 400, "InvalidInput", fmt.Sprintf(
				"Invalid input for operation: Requested subnet with cidr: %s for network: %s overlaps with another subnet.", req.CIDR, req.NetworkID))
		}
	}
	if err := gatewayConflict(CreateSubnet, neutron.Subnet{GatewayIP: ptr.Deref(req.Gateway, ""), AllocationPools: req.AllocationPools}); err != nil {
		return neutron.Subnet{}, err
	}
	s := f.storeSubnet(req)
	if err := f.answer(CreateSubnet); err != nil {
		return neutron.Subnet{}, err
	}
	return s, nil
}

// UpdateSubnet applies u in one piece, checking the new gateway against the
// new pools, as Neutron does, and the revision u is conditional on
// (revisions.go).
func (f *Neutron) UpdateSubnet(ctx context.Context, id string, u neutron.SubnetUpdate) (neutron.Subnet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, UpdateSubnet); err != nil {
		return neutron.Subnet{}, err
	}
	s, ok := f.subnets[id]
	if !ok || !f.inRegion(id) {
		return neutron.Subnet{}, neutron.ErrorForResponse(UpdateSubnet, 404, "SubnetNotFound", fmt.Sprintf("Subnet %s could not be found.", id))
	}
	if u.Gateway != nil && *u.Gateway != s.GatewayIP {
		for _, p := range f.ports[s.NetworkID] {
			if p.DeviceID != "" && slices.Contains(p.Addresses, s.GatewayIP) {
				return neutron.Subnet{}, neutron.ErrorForResponse(UpdateSubnet, 409, "GatewayIpInUse",
					fmt.Sprintf("Current gateway ip %s already in use by port %s. Unable to update.", s.GatewayIP, p.ID))
			}
		}
		s.GatewayIP = *u.Gateway
	}
	if u.DNSNameservers != nil {
		s.DNSNameservers = slices.Clone(*u.DNSNameservers)
	}
	if u.HostRoutes != nil {
		s.HostRoutes = slices.Clone(*u.HostRoutes)
	}
	if u.AllocationPools != nil {
		s.AllocationPools = slices.Clone(*u.AllocationPools)
	}
	if u.EnableDHCP != nil {
		s.EnableDHCP = *u.EnableDHCP
	}
	if u.Name != nil {
		s.Name = *u.Name
	}
	if u.Description != nil {
		s.Description = *u.Description
	}
	if err := gatewayConflict(UpdateSubnet, s); err != nil {
		return neutron.Subnet{}, err
	}
	if err := ifMatch(UpdateSubnet, u.IfRevision, s.RevisionNumber); err != nil {
		return neutron.Subnet{}, err
	}
	s.RevisionNumber++
	f.subnets[id] = s
	f.reviseNetwork(s.NetworkID)
	if err := f.answer(UpdateSubnet); err != nil {
		return neutron.Subnet{}, err
	}
	return f.subnets[id], nil
}

// UpdateNetwork changes a network; an MTU up to MaxMTU; only at the
// revision u is conditional on (revisions.go).
func (f *Neutron) UpdateNetwork(ctx context.Context, id string, u neutron.NetworkUpdate) (neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, UpdateNetwork); err != nil {
		return neutron.Network{}, err
	}
	n, ok := f.networks[id]
	if !ok || !f.inRegion(id) {
		return neutron.Network{}, neutron.ErrorForResponse(UpdateNetwork, 404, "NetworkNotFound", fmt.Sprintf("Network %s could not be found.", id))
	}
	if u.MTU != nil {
		if err := tooBig(UpdateNetwork, *u.MTU); err != nil {
			return neutron.Network{}, err
		}
		n.MTU = *u.MTU
	}
	if u.Name != nil {
		n.Name = *u.Name
	}
	if u.Description != nil {
		n.Description = *u.Description
	}
	if err := ifMatch(UpdateNetwork, u.IfRevision, n.RevisionNumber); err != nil {
		return neutron.Network{}, err
	}
	f.networks[id] = n
	f.reviseNetwork(id)
	if err := f.answer(UpdateNetwork); err != nil {
		return neutron.Network{}, err
	}
	// As neutron-server's answer: the network with the subnets on it.
	n = f.networks[id]
	n.SubnetIDs = f.subnetIDs()[id]
	return n, nil
}

// DeleteSubnet deletes a subnet, only while its revision is ifRevision
// (412 otherwise, as neutron-server's If-Match); a port on its network
// other than Neutron's own makes it refuse with 409 SubnetInUse.
func (f *Neutron) DeleteSubnet(ctx context.Context, id string, ifRevision int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, DeleteSubnet); err != nil {
		return err
	}
	if !f.inRegion(id) {
		return nil // another Neutron's 404, which the real client counts as deleted
	}
	if s, ok := f.subnets[id]; ok {
		if err := ifMatch(DeleteSubnet, &ifRevision, s.RevisionNumber); err != nil {
			return err
		}
	}
	if s, ok := f.subnets[id]; ok && slices.ContainsFunc(f.ports[s.NetworkID], func(p neutron.Port) bool { return !p.DeletedWithNetwork() && usesSubnet(p, s.CIDR) }) {
		return neutron.ErrorForResponse(DeleteSubnet, 409, "SubnetInUse", fmt.Sprintf(
			"Unable to complete operation on subnet %s: One or more ports have an IP allocation from this subnet.", id))
	}
	if s, ok := f.subnets[id]; ok {
		delete(f.subnets, id)
		f.reviseNetwork(s.NetworkID)
	}
	return f.answer(DeleteSubnet)
}

// PortsOf lists a network's ports, with a description only those whose
// description is exactly that.
func (f *Neutron) PortsOf(ctx context.Context, networkID, description string) ([]neutron.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, PortsOf); err != nil {
		return nil, err
	}
	return filter(f.ports[networkID], func(p neutron.Port) bool { return description == "" || p.Description == description }), nil
}

// DeleteNetwork deletes a network and, as Neutron does, every subnet on
// it and the ports it made for it (neutron.Port.DeletedWithNetwork): one
// request, made only while the network's revision is ifRevision (412
// otherwise, as neutron-server's If-Match). Any other port on it, a
// router interface or a VM's, makes it refuse with 409 NetworkInUse.
func (f *Neutron) DeleteNetwork(ctx context.Context, id string, ifRevision int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ctx, DeleteNetwork); err != nil {
		return err
	}
	if !f.inRegion(id) {
		return nil // another Neutron's 404, which the real client counts as deleted
	}
	if n, ok := f.networks[id]; ok {
		if err := ifMatch(DeleteNetwork, &ifRevision, n.RevisionNumber); err != nil {
			return err
		}
	}
	if f.inUse(id) {
		return neutron.ErrorForResponse(DeleteNetwork, 409, "NetworkInUse", fmt.Sprintf(
			"Unable to complete operation on network %s. There are one or more ports still in use on the network.", id))
	}
	delete(f.networks, id)
	delete(f.ports, id)
	for sid, s := range f.subnets {
		if s.NetworkID == id {
			delete(f.subnets, sid)
		}
	}
	return f.answer(DeleteNetwork)
}

// inUse reports whether a port other than Neutron's own is on network id:
// what makes Neutron refuse to delete it or its subnets (Neutron's
// AUTO_DELETE_PORT_OWNERS; the fake does not track which subnet a port's
// address is from). Callers hold f.mu.
func (f *Neutron) inUse(id string) bool {
	return slices.ContainsFunc(f.ports[id], func(p neutron.Port) bool { return !p.DeletedWithNetwork() })
}

// reviseNetwork raises network id's revision, as a change of the network
// or of one of its subnets does. Callers hold f.mu.
func (f *Neutron) reviseNetwork(id string) {
	if n, ok := f.networks[id]; ok {
		n.RevisionNumber++
		f.networks[id] = n
	}
}
