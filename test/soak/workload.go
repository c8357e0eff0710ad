package main

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
)

// operation is one random change of the workload: create a Network in a
// free slot, move its gateway (a pool's Network: its DNS server), or
// delete it. A create is one of: a range of its own, one in four with
// deletionPolicy Orphan (whose deletion releases its network and subnet
// instead of deleting them); a range from the subnet pool; or the
// adoption of a network and subnet made by hand just before.
func (s *soak) operation(ctx context.Context) {
	slot := s.workload.IntN(slots)
	kind := s.workload.IntN(10)
	host := 1 + s.workload.IntN(250) // the new gateway, drawn whatever the operation
	orphan := s.workload.IntN(4) == 0
	variant := s.workload.IntN(8) // 0: adopt, 1: from the pool, else a range
	name, ns := fmt.Sprintf("n-%d", slot), namespaces[slot%len(namespaces)]
	client := s.nc.SamplecrdV1().Networks(ns)
	current, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return // the API server may be restarting; the next operation tries again
	}
	found := err == nil
	exists := found && current.DeletionTimestamp == nil
	op := ""
	switch {
	case !found && kind < 6:
		op, err = s.create(ctx, slot, name, ns, variant, orphan)
	case exists && kind < 8 && current.Spec.Adopt != nil && current.Status.NetworkID == "":
		// Not before the adoption is done: the adopted subnet must match
		// the spec, and a spec changed meanwhile is, rightly, refused
		// (AdoptionMismatch) until someone makes the two agree.
	case exists && kind < 8:
		patch := fmt.Sprintf(`{"spec":{"gateway":"10.150.%d.%d"}}`, slot, host)
		if current.Spec.SubnetPool != "" {
			patch = fmt.Sprintf(`{"spec":{"dnsNameservers":["192.0.2.%d"]}}`, host)
		}
		op = "update"
		_, err = client.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	case exists:
		op, err = "delete", client.Delete(ctx, name, metav1.DeleteOptions{})
	}
	if op != "" {
		s.ops[op]++
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) {
		s.ops["refused"]++
	}
}

// create creates Network ns/name in slot, as variant and orphan draw it,
// and returns the operation's name.
func (s *soak) create(ctx context.Context, slot int, name, ns string, variant int, orphan bool) (string, error) {
	cidr, gateway := fmt.Sprintf("10.150.%d.0/24", slot), fmt.Sprintf("10.150.%d.1", slot)
	n := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: samplecrdv1.NetworkSpec{CIDR: cidr, Gateway: gateway}}
	op := "create"
	switch {
	case variant == 0:
		a, err := s.makeAdoptee(ctx, cidr, gateway)
		if err != nil {
			return "adopt", err // Neutron may be down: a refusal like any other
		}
		n.Spec.Adopt, op = &samplecrdv1.Adoption{NetworkID: a.networkID}, "create-adopt"
	case variant == 1:
		n.Spec.CIDR, n.Spec.Gateway, n.Spec.SubnetPool, op = "", "", poolName, "create-from-pool"
	case orphan:
		n.Spec.DeletionPolicy, op = samplecrdv1.DeletionPolicyOrphan, "create-orphan-policy"
	}
	_, err := s.nc.SamplecrdV1().Networks(ns).Create(ctx, n, metav1.CreateOptions{})
	return op, err
}

// makeAdoptee makes a network and subnet by hand in the controllers'
// project, as a person with the openstack CLI would, for a Network to
// adopt, and remembers them as they were.
func (s *soak) makeAdoptee(ctx context.Context, cidr, gateway string) (adoptee, error) {
	client, project := s.stack.Neutron.Client, s.stack.Keystone.ProjectID
	a := adoptee{name: fmt.Sprintf("adoptee-%d", len(s.adoptees)), description: "made by hand for the soak to adopt"}
	net, err := networks.Create(ctx, client, networks.CreateOpts{Name: a.name, Description: a.description, ProjectID: project}).Extract()
	if err != nil {
		return adoptee{}, err
	}
	a.networkID = net.ID
	s.adoptees = append(s.adoptees, a) // from here on it must come back as it was
	sn, err := subnets.Create(ctx, client, subnets.CreateOpts{NetworkID: net.ID, Name: a.name, Description: a.description,
		CIDR: cidr, GatewayIP: &gateway, IPVersion: gophercloud.IPv4, ProjectID: project}).Extract()
	if err != nil {
		return adoptee{}, err
	}
	a.subnetID = sn.ID
	s.adoptees[len(s.adoptees)-1] = a
	return a, nil
}
