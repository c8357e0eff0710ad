package cloud

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// ClusterMark is the ownership mark of this cluster in the cloud: named by
// clusterName, else by the UID of its kube-system namespace, read live
// from the API server. Either way the mark records that UID in the name of
// every resource (see pkg/controller/neutron/ownership.go).
func ClusterMark(ctx context.Context, client kubernetes.Interface, clusterName string) (neutron.Mark, error) {
	ns, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return neutron.Mark{}, fmt.Errorf("reading the kube-system namespace, whose UID identifies this cluster in Neutron: %w", err)
	}
	return neutron.NewMark(clusterName, ns.UID)
}
