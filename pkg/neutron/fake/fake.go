// Package fake is an in-memory neutron.Interface for unit tests: it keeps
// networks and subnets in maps, records every request, and fails the
// requests a test tells it to.
package fake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/neutron"
)

// Request names, as recorded by Neutron.Requests.
const (
	ListNetworks  = "list-networks"
	ListSubnets   = "list-subnets"
	ListUntagged  = "list-untagged"
	FindNetworks  = "find-networks"
	SubnetsOf     = "subnets-of"
	CreateNetwork = "create-network"
	CreateSubnet  = "create-subnet"
	TagNetwork    = "tag-network"
	TagSubnet     = "tag-subnet"
	UpdateGateway = "update-gateway"
	DeleteSubnet  = "delete-subnet"
	DeleteNetwork = "delete-network"
)

// Neutron is a fake Neutron. Its zero value is not usable: call New.
type Neutron struct {
	mu       sync.Mutex
	networks map[string]*Network
	subnets  map[string]*Subnet
	requests []string
	errs     map[string]error
	nextID   int
}

// Network is a network as the fake stores it: Owner is empty while it is
// untagged.
type Network struct {
	ID    string
	Name  string
	Owner neutron.Owner
}

// Subnet is a subnet as the fake stores it.
type Subnet struct {
	neutron.Subnet
	Name string
}

var _ neutron.Interface = &Neutron{}

// New returns an empty fake Neutron.
func New() *Neutron {
	return &Neutron{networks: map[string]*Network{}, subnets: map[string]*Subnet{}, errs: map[string]error{}}
}

// AddNetwork stores a network as if it existed before the test, tagged for
// owner unless tagged is false, and returns its ID.
func (f *Neutron) AddNetwork(owner neutron.Owner, tagged bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := &Network{ID: f.newID("net"), Name: neutron.NameFor(owner)}
	if tagged {
		n.Owner = owner
	}
	f.networks[n.ID] = n
	return n.ID
}

// AddSubnet stores a subnet on networkID as if it existed before the test
// and returns its ID.
func (f *Neutron) AddSubnet(owner neutron.Owner, tagged bool, networkID, cidr, gateway string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &Subnet{Subnet: neutron.Subnet{ID: f.newID("subnet"), NetworkID: networkID, CIDR: cidr, GatewayIP: gateway}, Name: neutron.NameFor(owner)}
	if tagged {
		s.Owner = owner
	}
	f.subnets[s.ID] = s
	return s.ID
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
func (f *Neutron) Networks() []Network {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Network
	for _, n := range f.networks {
		out = append(out, *n)
	}
	return out
}

// Subnets returns copies of the stored subnets.
func (f *Neutron) Subnets() []Subnet {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Subnet
	for _, s := range f.subnets {
		out = append(out, *s)
	}
	return out
}

func (f *Neutron) newID(prefix string) string {
	f.nextID++
	return fmt.Sprintf("%s-%d", prefix, f.nextID)
}

// request records req and returns the error set for it.
func (f *Neutron) request(req string) error {
	f.requests = append(f.requests, req)
	return f.errs[req]
}

func (f *Neutron) ListNetworks(context.Context) ([]neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ListNetworks); err != nil {
		return nil, err
	}
	var out []neutron.Network
	for _, n := range f.networks {
		if n.Owner.UID != "" {
			out = append(out, neutron.Network{ID: n.ID, Owner: n.Owner})
		}
	}
	return out, nil
}

func (f *Neutron) ListSubnets(context.Context) ([]neutron.Subnet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ListSubnets); err != nil {
		return nil, err
	}
	var out []neutron.Subnet
	for _, s := range f.subnets {
		if s.Owner.UID != "" {
			out = append(out, s.Subnet)
		}
	}
	return out, nil
}

func (f *Neutron) ListUntagged(context.Context) ([]neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(ListUntagged); err != nil {
		return nil, err
	}
	var out []neutron.Network
	for _, n := range f.networks {
		if uid, ok := strings.CutPrefix(n.Name, "k8s-"); ok && n.Owner.UID == "" {
			// Created long before the test: past any grace period.
			out = append(out, neutron.Network{ID: n.ID, Owner: neutron.Owner{UID: types.UID(uid)}})
		}
	}
	return out, nil
}

func (f *Neutron) FindNetworks(_ context.Context, owner neutron.Owner) ([]neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(FindNetworks); err != nil {
		return nil, err
	}
	var out []neutron.Network
	for _, n := range f.networks {
		if n.Name == neutron.NameFor(owner) {
			out = append(out, neutron.Network{ID: n.ID, Owner: n.Owner})
		}
	}
	return out, nil
}

func (f *Neutron) SubnetsOf(_ context.Context, networkID string) ([]neutron.Subnet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(SubnetsOf); err != nil {
		return nil, err
	}
	var out []neutron.Subnet
	for _, s := range f.subnets {
		if s.NetworkID == networkID {
			out = append(out, s.Subnet)
		}
	}
	return out, nil
}

func (f *Neutron) CreateNetwork(_ context.Context, owner neutron.Owner) (neutron.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(CreateNetwork); err != nil {
		return neutron.Network{}, err
	}
	n := &Network{ID: f.newID("net"), Name: neutron.NameFor(owner)}
	f.networks[n.ID] = n
	if err := f.request(TagNetwork); err != nil {
		return neutron.Network{}, err
	}
	n.Owner = owner
	return neutron.Network{ID: n.ID, Owner: owner}, nil
}

func (f *Neutron) CreateSubnet(_ context.Context, owner neutron.Owner, networkID, cidr, gateway string) (neutron.Subnet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(CreateSubnet); err != nil {
		return neutron.Subnet{}, err
	}
	if _, ok := f.networks[networkID]; !ok {
		return neutron.Subnet{}, &neutron.RejectedError{Op: CreateSubnet, StatusCode: 404, Message: "network not found"}
	}
	s := &Subnet{Subnet: neutron.Subnet{ID: f.newID("subnet"), NetworkID: networkID, CIDR: cidr, GatewayIP: gateway}, Name: neutron.NameFor(owner)}
	f.subnets[s.ID] = s
	if err := f.request(TagSubnet); err != nil {
		return neutron.Subnet{}, err
	}
	s.Owner = owner
	return s.Subnet, nil
}

func (f *Neutron) TagNetwork(_ context.Context, id string, owner neutron.Owner) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(TagNetwork); err != nil {
		return err
	}
	n, ok := f.networks[id]
	if !ok {
		return fmt.Errorf("network %s not found", id)
	}
	n.Owner = owner
	return nil
}

func (f *Neutron) TagSubnet(_ context.Context, id string, owner neutron.Owner) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(TagSubnet); err != nil {
		return err
	}
	s, ok := f.subnets[id]
	if !ok {
		return fmt.Errorf("subnet %s not found", id)
	}
	s.Owner = owner
	return nil
}

func (f *Neutron) UpdateSubnetGateway(_ context.Context, id, _, gateway string) (neutron.Subnet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(UpdateGateway); err != nil {
		return neutron.Subnet{}, err
	}
	s, ok := f.subnets[id]
	if !ok {
		return neutron.Subnet{}, fmt.Errorf("subnet %s not found", id)
	}
	s.GatewayIP = gateway
	return s.Subnet, nil
}

func (f *Neutron) DeleteSubnet(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(DeleteSubnet); err != nil {
		return err
	}
	delete(f.subnets, id)
	return nil
}

func (f *Neutron) DeleteNetwork(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.request(DeleteNetwork); err != nil {
		return err
	}
	delete(f.networks, id)
	for sid, s := range f.subnets {
		if s.NetworkID == id {
			delete(f.subnets, sid)
		}
	}
	return nil
}
