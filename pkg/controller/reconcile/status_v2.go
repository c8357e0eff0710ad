package reconcile

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	applyv2 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v2"
)

// The status of a samplecrd.k8s.io/v2 Network, for the controller once it
// reads v2 (issue 42): the same conditions as StatusApply's, and
// status.subnets, one entry per subnet, where v1 has the fields of one.
// Each subnet's router interface is in its entry.

// StatusApplyV2 is StatusApply for a v2 Network: nil when its status
// already says cond and obs, and condChanged when Ready itself changed.
//
// A pass that stopped before it read the subnets (obs.Subnets nil: an
// Outcome built from LastObserved of v1's status, which holds one subnet)
// keeps status.subnets as they are, so that a failure does not blank them.
func StatusApplyV2(network *samplecrdv2.Network, cond metav1.Condition, obs Observed) (_ *applyv2.NetworkApplyConfiguration, condChanged bool) {
	if obs.Subnets == nil {
		obs.Subnets = LastObservedV2(network.Status).Subnets
	}
	conditions, ready, progress, changed, condChanged := nextConditions(network.Status.Conditions, network.Generation, cond)
	if !changed && network.Status.ObservedGeneration == network.Generation && obs.EqualV2(network.Status) {
		return nil, false
	}
	status := applyv2.NetworkStatus().WithObservedGeneration(network.Generation).WithConditions(conditionApply(ready))
	if progress != nil {
		status.WithConditions(conditionApply(*meta.FindStatusCondition(conditions, progress.Type)))
	}
	obs.ApplyV2(status)
	return applyv2.Network(network.Name, network.Namespace).WithStatus(status), condChanged
}

// StatusV2 is what obs says in v2's terms: what ApplyV2 applies, as a
// status to compare with.
func (o Observed) StatusV2() samplecrdv2.NetworkStatus {
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
		st.Adopted = &samplecrdv2.AdoptedResources{NetworkID: a.NetworkID, NetworkName: a.NetworkName, NetworkDescription: a.NetworkDescription,
			Subnets: []samplecrdv2.AdoptedSubnet{{ID: a.SubnetID, Name: a.SubnetName, Description: a.SubnetDescription}}}
	}
	return st
}

// EqualV2 reports whether st already says what o says.
func (o Observed) EqualV2(st samplecrdv2.NetworkStatus) bool {
	st.ObservedGeneration, st.Conditions = 0, nil
	for i := range st.Subnets {
		// Not the controller's to report yet: left as they are.
		st.Subnets[i].UsedIPs, st.Subnets[i].FreeIPs = nil, nil
	}
	return equality.Semantic.DeepEqual(o.StatusV2(), st)
}

// ApplyV2 sets o's non-empty fields on a v2 status.
func (o Observed) ApplyV2(status *applyv2.NetworkStatusApplyConfiguration) {
	st := o.StatusV2()
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

// LastObservedV2 is what a v2 status says now, as LastObserved is of v1's:
// its first subnet is the one v1's fields name.
func LastObservedV2(st samplecrdv2.NetworkStatus) Observed {
	o := Observed{NetworkID: st.NetworkID, MTU: st.MTU, NeutronStatus: st.NeutronStatus, ProjectID: st.ProjectID, Place: recordedPlaceV2(st)}
	for _, s := range st.Subnets {
		s.UsedIPs, s.FreeIPs = nil, nil
		if r := s.RouterInterface; r != nil && st.Router != nil {
			o.Router = &samplecrdv1.RouterStatus{ID: st.Router.ID, ExternalNetworkID: st.Router.ExternalNetworkID, InterfacePortID: r.PortID, InterfaceAddress: r.Address}
		}
		o.Subnets = append(o.Subnets, s)
	}
	if len(st.Subnets) > 0 {
		first := st.Subnets[0]
		o.SubnetID, o.CIDR, o.Gateway = first.ID, first.CIDR, first.Gateway
		for _, p := range first.AllocationPools {
			o.AllocationPools = append(o.AllocationPools, samplecrdv1.AllocationPool(p))
		}
	}
	if a := st.Adopted; a != nil {
		o.Adopted = &samplecrdv1.AdoptedResources{NetworkID: a.NetworkID, NetworkName: a.NetworkName, NetworkDescription: a.NetworkDescription}
		if len(a.Subnets) > 0 {
			o.Adopted.SubnetID, o.Adopted.SubnetName, o.Adopted.SubnetDescription = a.Subnets[0].ID, a.Subnets[0].Name, a.Subnets[0].Description
		}
	}
	return o
}

// recordedPlaceV2 is recordedPlace of a v2 status.
func recordedPlaceV2(st samplecrdv2.NetworkStatus) neutron.Place {
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
