package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
)

// operation is one random change of the workload: create a Network in a
// free slot (one in four with deletionPolicy Orphan, whose deletion
// releases its network and subnet instead of deleting them), move a
// Network's gateway, or delete a Network.
func (s *soak) operation(ctx context.Context) {
	slot := s.workload.IntN(slots)
	kind := s.workload.IntN(10)
	host := 1 + s.workload.IntN(250) // the new gateway, drawn whatever the operation
	orphan := s.workload.IntN(4) == 0
	name, ns := fmt.Sprintf("n-%d", slot), namespaces[slot%len(namespaces)]
	client := s.nc.SamplecrdV1().Networks(ns)
	current, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return // the API server may be restarting; the next operation tries again
	}
	found := err == nil
	exists := found && current.DeletionTimestamp == nil
	switch {
	case !found && kind < 6:
		n := &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       samplecrdv1.NetworkSpec{CIDR: fmt.Sprintf("10.150.%d.0/24", slot), Gateway: fmt.Sprintf("10.150.%d.1", slot)},
		}
		op := "create"
		if orphan {
			n.Spec.DeletionPolicy, op = samplecrdv1.DeletionPolicyOrphan, "create-orphan-policy"
		}
		_, err = client.Create(ctx, n, metav1.CreateOptions{})
		s.ops[op]++
	case exists && kind < 8:
		patch := fmt.Sprintf(`{"spec":{"gateway":"10.150.%d.%d"}}`, slot, host)
		_, err = client.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		s.ops["update"]++
	case exists:
		err = client.Delete(ctx, name, metav1.DeleteOptions{})
		s.ops["delete"]++
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) {
		s.ops["refused"]++
	}
}
