package plan

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	networkfake "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
	samplecrdinformers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v2"
)

// Cluster is the API server of a plan's controller: fake clientsets
// (client-go's, and the generated one) seeded with the planned Networks,
// whose trackers take what the controller writes — its status applies,
// its finalizer, the ConfigMaps it publishes — so that none of it reaches
// the API server; and the informers the controller reads them back from,
// whose caches the plan fills itself after each sync (CatchUp), as their
// watch would, rather than wait for a watch to deliver.
type Cluster struct {
	Kube              *k8sfake.Clientset
	Networks          *networkfake.Clientset
	NetworkInformer   samplecrdinformers.NetworkInformer
	ConfigMapInformer coreinformers.ConfigMapInformer
	// Events is the controller's EventRecorder: Unrecorded.
	Events Unrecorded
}

// NewCluster returns an empty Cluster.
func NewCluster() *Cluster {
	kube, networks := k8sfake.NewClientset(), networkfake.NewClientset()
	return &Cluster{Kube: kube, Networks: networks,
		NetworkInformer:   informers.NewSharedInformerFactory(networks, 0).Samplecrd().V2().Networks(),
		ConfigMapInformer: kubeinformers.NewSharedInformerFactory(kube, 0).Core().V1().ConfigMaps()}
}

// Seed puts network in the cluster, and in the controller's cache, as the
// API server stores it (Admit's): its managedFields too, so that the
// controller's apply of its finalizer's release withdraws the finalizer it
// owns, as the API server's would.
func (c *Cluster) Seed(network *samplecrdv2.Network) error {
	err := c.Networks.Tracker().Add(network)
	if apierrors.IsAlreadyExists(err) { // named twice in the manifests: the last wins
		err = c.Networks.Tracker().Update(samplecrdv2.SchemeGroupVersion.WithResource("networks"), network, network.Namespace)
	}
	if err != nil {
		return fmt.Errorf("seeding the plan's cluster with Network %s/%s: %w", network.Namespace, network.Name, err)
	}
	_, err = c.CatchUp(context.Background(), cache.ObjectName{Namespace: network.Namespace, Name: network.Name})
	return err
}

// CatchUp fills the informers' caches with what the cluster holds, and
// returns the Network of key as the controller left it, nil if it is gone.
func (c *Cluster) CatchUp(ctx context.Context, key cache.ObjectName) (*samplecrdv2.Network, error) {
	networks, err := c.Networks.SamplecrdV2().Networks(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the plan's Networks: %w", err)
	}
	configMaps, err := c.Kube.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the plan's ConfigMaps: %w", err)
	}
	var cachedNetworks, cachedConfigMaps []any
	for i := range networks.Items {
		cachedNetworks = append(cachedNetworks, &networks.Items[i])
	}
	for i := range configMaps.Items {
		cachedConfigMaps = append(cachedConfigMaps, &configMaps.Items[i])
	}
	if err := c.NetworkInformer.Informer().GetIndexer().Replace(cachedNetworks, networks.ResourceVersion); err != nil {
		return nil, fmt.Errorf("filling the plan's Network cache: %w", err)
	}
	if err := c.ConfigMapInformer.Informer().GetIndexer().Replace(cachedConfigMaps, configMaps.ResourceVersion); err != nil {
		return nil, fmt.Errorf("filling the plan's ConfigMap cache: %w", err)
	}
	network, err := c.Networks.SamplecrdV2().Networks(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Network %s back: %w", key, err)
	}
	return network, nil
}
