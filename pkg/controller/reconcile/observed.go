package reconcile

import (
	"math/big"
	"net/netip"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	applyv2 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v2"
)

// Observed is what Neutron holds for a Network, as its status reports it:
// status.subnets and the network-wide fields (Status, Apply), and what a
// status said before a pass (LastObserved). Status is written from
// Subnets; FirstSubnet is the one subnet a v1 reader sees.
type Observed struct {
	NetworkID     string
	MTU           int32
	NeutronStatus string
	// ProjectID is the project that holds the network.
	ProjectID string
	// Place is the Network's recorded place (neutron.Place); zero until
	// it is recorded, and on a noauth Neutron.
	Place neutron.Place
	// Router is the subnet's router interface; nil while it has none.
	Router *samplecrdv1.RouterStatus
	// Adopted is what spec.adopt's network and subnets were called before
	// they were marked; kept for as long as the Network lives.
	Adopted *samplecrdv2.AdoptedResources
	// Quota is the quota of the Network's project as the inventory's
	// latest list read it (Inventory.Quota): QuotaNearlyFull says whether
	// it is nearly full. nil keeps the condition as status has it.
	Quota *neutron.Quota
	// Subnets are every subnet of the network, in spec.subnets' order, as
	// status.subnets reports them (StatusApply). Their usedIPs and freeIPs
	// are the latest list's counts (withCounts), absent where Neutron
	// refuses them.
	Subnets []samplecrdv2.SubnetStatus
}

// FirstSubnet is the first of Subnets (spec.subnets[0]'s), or none while
// the network has no subnet: the one subnet a v1 reader and the published
// ConfigMap's keys of one subnet (pkg/controller/configmap) see.
func (o Observed) FirstSubnet() samplecrdv2.SubnetStatus {
	if len(o.Subnets) == 0 {
		return samplecrdv2.SubnetStatus{}
	}
	return o.Subnets[0]
}

// observedOf is the status of a Network whose network and subnets are
// known, in spec.subnets' order.
func observedOf(net neutron.Network, subnets ...neutron.Subnet) Observed {
	o := Observed{NetworkID: net.ID, MTU: int32(net.MTU), NeutronStatus: net.Status, ProjectID: net.ProjectID}
	for _, s := range subnets {
		st := samplecrdv2.SubnetStatus{CIDR: s.CIDR, ID: s.ID, Gateway: s.GatewayIP}
		for _, p := range s.AllocationPools {
			st.AllocationPools = append(st.AllocationPools, samplecrdv2.AllocationPool{Start: p.Start, End: p.End})
		}
		o.Subnets = append(o.Subnets, st)
	}
	return o
}

// withCounts sets each subnet's usedIPs and freeIPs from counts, matched
// by subnet ID; a subnet counts does not name has neither.
func (o *Observed) withCounts(counts []neutron.SubnetIPs) {
	for i := range o.Subnets {
		s := &o.Subnets[i]
		s.UsedIPs, s.FreeIPs = nil, nil
		for _, c := range counts {
			if c.SubnetID == s.ID && s.ID != "" {
				s.UsedIPs, s.FreeIPs = quantity(c.Used), quantity(c.Free())
			}
		}
	}
}

// quantity is n as an exact quantity: an IPv6 /64's counts pass int64,
// and a quantity parsed from their decimal digits keeps every one.
func quantity(n *big.Int) *resource.Quantity {
	q, err := resource.ParseQuantity(n.String())
	if err != nil {
		return nil // an integer's digits always parse
	}
	return &q
}

// Status is what o says as a status: what Apply applies, as a status to
// compare with.
func (o Observed) Status() samplecrdv2.NetworkStatus {
	st := samplecrdv2.NetworkStatus{NetworkID: o.NetworkID, MTU: o.MTU, ProjectID: o.ProjectID, NeutronStatus: o.NeutronStatus}
	for _, s := range o.Subnets {
		if r := o.Router; s.RouterInterface == nil && r != nil && inRange(s.CIDR, r.InterfaceAddress) {
			// A pass that stopped before the router step: v1's record.
			s.RouterInterface = &samplecrdv2.RouterInterfaceStatus{PortID: r.InterfacePortID, Address: r.InterfaceAddress}
		}
		st.Subnets = append(st.Subnets, s)
	}
	if p := o.Place; p.AuthURL != "" {
		st.Place = &samplecrdv2.Place{AuthURL: p.AuthURL, Region: p.Region, Interface: p.Interface, ProjectID: p.ProjectID}
	}
	if r := o.Router; r != nil {
		st.Router = &samplecrdv2.RouterStatus{ID: r.ID, ExternalNetworkID: r.ExternalNetworkID}
	}
	if a := o.Adopted; a != nil {
		st.Adopted = a.DeepCopy()
	}
	return st
}

// Equal reports whether st already says what o says.
func (o Observed) Equal(st samplecrdv2.NetworkStatus) bool {
	st.ObservedGeneration, st.Conditions = 0, nil
	// The counts compare as numbers (equality.Semantic), not as the
	// strings they were written as.
	return equality.Semantic.DeepEqual(o.Status(), st)
}

// Apply sets o's non-empty fields on status.
func (o Observed) Apply(status *applyv2.NetworkStatusApplyConfiguration) {
	st := o.Status()
	if st.NetworkID != "" {
		status.WithNetworkID(st.NetworkID)
	}
	for _, s := range st.Subnets {
		sub := applyv2.SubnetStatus().WithCIDR(s.CIDR).WithID(s.ID)
		if s.Gateway != "" {
			sub.WithGateway(s.Gateway)
		}
		for _, p := range s.AllocationPools {
			sub.WithAllocationPools(applyv2.AllocationPool().WithStart(p.Start).WithEnd(p.End))
		}
		if r := s.RouterInterface; r != nil {
			iface := applyv2.RouterInterfaceStatus().WithPortID(r.PortID)
			if r.Address != "" {
				iface.WithAddress(r.Address)
			}
			sub.WithRouterInterface(iface)
		}
		if s.UsedIPs != nil && s.FreeIPs != nil {
			sub.WithUsedIPs(*s.UsedIPs).WithFreeIPs(*s.FreeIPs)
		}
		status.WithSubnets(sub)
	}
	if st.MTU != 0 {
		status.WithMTU(st.MTU)
	}
	if st.ProjectID != "" {
		status.WithProjectID(st.ProjectID)
	}
	if p := st.Place; p != nil {
		place := applyv2.Place().WithAuthURL(p.AuthURL).WithProjectID(p.ProjectID)
		if p.Region != "" {
			place.WithRegion(p.Region)
		}
		if p.Interface != "" {
			place.WithInterface(p.Interface)
		}
		status.WithPlace(place)
	}
	if st.NeutronStatus != "" {
		status.WithNeutronStatus(st.NeutronStatus)
	}
	if r := st.Router; r != nil {
		router := applyv2.RouterStatus().WithID(r.ID)
		if r.ExternalNetworkID != "" {
			router.WithExternalNetworkID(r.ExternalNetworkID)
		}
		status.WithRouter(router)
	}
	if a := st.Adopted; a != nil {
		adopted := applyv2.AdoptedResources().WithNetworkID(a.NetworkID).WithNetworkName(a.NetworkName).WithNetworkDescription(a.NetworkDescription)
		for _, s := range a.Subnets {
			adopted.WithSubnets(applyv2.AdoptedSubnet().WithID(s.ID).WithName(s.Name).WithDescription(s.Description))
		}
		status.WithAdopted(adopted)
	}
}

// LastObserved is what status says now: kept by a pass that fails before
// it knows better, so that a failure does not blank the IDs (nor the
// counts).
func LastObserved(st samplecrdv2.NetworkStatus) Observed {
	o := Observed{NetworkID: st.NetworkID, MTU: st.MTU, NeutronStatus: st.NeutronStatus, ProjectID: st.ProjectID, Place: recordedPlace(st)}
	for _, s := range st.Subnets {
		if r := s.RouterInterface; r != nil && st.Router != nil {
			o.Router = &samplecrdv1.RouterStatus{ID: st.Router.ID, ExternalNetworkID: st.Router.ExternalNetworkID, InterfacePortID: r.PortID, InterfaceAddress: r.Address}
		}
		o.Subnets = append(o.Subnets, s)
	}
	o.Adopted = st.Adopted
	return o
}

// recordedPlace is the place status records: status.place, or for a
// Network made before places were recorded, a place that knows only
// status.projectID, which neutron.CheckPlace compares that far.
func recordedPlace(st samplecrdv2.NetworkStatus) neutron.Place {
	if p := st.Place; p != nil {
		return neutron.Place{AuthURL: p.AuthURL, Region: p.Region, Interface: p.Interface, ProjectID: p.ProjectID}
	}
	return neutron.Place{ProjectID: st.ProjectID}
}

// inRange reports whether addr is an address of cidr.
func inRange(cidr, addr string) bool {
	p, err1 := netip.ParsePrefix(cidr)
	a, err2 := netip.ParseAddr(addr)
	return err1 == nil && err2 == nil && p.Contains(a)
}
