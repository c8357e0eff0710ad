// Package configmap is what a Network publishes into the ConfigMap it names
// (spec.writeConfigMapToRef): the object the controller owns, in the way
// sample-controller's Foo owns its Deployment. The controller watches
// ConfigMaps and queues their Network (handleObject); Publisher.Sync is
// the owned object's half of a sync; the rest decides what the ConfigMap
// holds and which ConfigMaps are the Network's.
package configmap

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// The controller's mark on every ConfigMap it writes: ManagedByLabel
// set to ManagedBy. The ConfigMap informer lists and watches only what
// has it (SelectMarked), so that the ConfigMaps a tenant writes, even one
// whose ownerReference names a Network, are not sent to the controller.
const (
	// ManagedByLabel is the recommended label of the tool that manages
	// an object.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedBy is its value on what the controller writes.
	ManagedBy = "network-controller"
)

// Selector selects the ConfigMaps with the controller's mark.
func Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy})
}

// SelectMarked narrows an informer's list and watch to the ConfigMaps
// with the controller's mark, on the API server's side (an informer
// factory's WithTweakListOptions).
func SelectMarked(opts *metav1.ListOptions) {
	opts.LabelSelector = Selector().String()
}

// marked reports whether obj has the controller's mark.
func marked(obj metav1.Object) bool {
	return obj.GetLabels()[ManagedByLabel] == ManagedBy
}

// For returns the ConfigMap network publishes, with what obs says Neutron
// holds; nil when network names none, or when it has no subnet yet to
// publish. Its ownerReference makes network its controller: the API
// server's garbage collector deletes it with network, and
// blockOwnerDeletion keeps a foreground deletion of network waiting for it.
func For(network *samplecrdv2.Network, obs reconcile.Observed) *corev1.ConfigMap {
	ref, first := network.Spec.WriteConfigMapToRef, obs.FirstSubnet()
	if ref == nil || obs.NetworkID == "" || first.ID == "" {
		return nil
	}
	data := map[string]string{
		samplecrdv1.ConfigMapKeyNetworkID: obs.NetworkID,
		samplecrdv1.ConfigMapKeySubnetID:  first.ID,
		samplecrdv1.ConfigMapKeyProjectID: obs.ProjectID,
		samplecrdv1.ConfigMapKeyCIDR:      first.CIDR,
		samplecrdv1.ConfigMapKeyGateway:   first.Gateway,
		samplecrdv1.ConfigMapKeyMTU:       strconv.Itoa(int(obs.MTU)),
	}
	if obs.Router != nil {
		data[samplecrdv1.ConfigMapKeyRouterID] = obs.Router.ID
	}
	// A Network of one subnet publishes v1's keys alone, as it always
	// has (consumers, and test/e2e's publishedBy, compare the whole data).
	for _, s := range obs.Subnets {
		if len(obs.Subnets) < 2 {
			break
		}
		prefix, err := netip.ParsePrefix(s.CIDR)
		if err != nil {
			continue
		}
		keys := familyKeys[prefix.Addr().Is4()]
		data[keys[0]], data[keys[1]], data[keys[2]] = s.ID, s.CIDR, s.Gateway
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ref.Name,
			Namespace: network.Namespace,
			Labels:    map[string]string{ManagedByLabel: ManagedBy},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(network, samplecrdv1.SchemeGroupVersion.WithKind("Network")),
			},
		},
		Data: data,
	}
}

// UpToDate reports whether existing, a ConfigMap network controls,
// already holds what want says: the same data, and nothing else, with
// the controller's mark.
func UpToDate(existing, want *corev1.ConfigMap) bool {
	return equality.Semantic.DeepEqual(existing.Data, want.Data) && len(existing.BinaryData) == 0 && marked(existing) &&
		existing.Annotations[trimmedAnnotation] == ""
}

// The keys of each subnet of a dual-stack Network by its family, beside
// those of the first subnet (SUBNET_ID, CIDR, GATEWAY), which stay what
// they were in v1 so that its consumers keep working. A Network of one
// subnet publishes v1's keys alone.
const (
	KeyIPv4SubnetID = "IPV4_SUBNET_ID"
	KeyIPv4CIDR     = "IPV4_CIDR"
	KeyIPv4Gateway  = "IPV4_GATEWAY"
	KeyIPv6SubnetID = "IPV6_SUBNET_ID"
	KeyIPv6CIDR     = "IPV6_CIDR"
	KeyIPv6Gateway  = "IPV6_GATEWAY"
)

// familyKeys are the subnet ID, CIDR and gateway keys of a family, by
// whether it is IPv4.
var familyKeys = map[bool][3]string{
	true:  {KeyIPv4SubnetID, KeyIPv4CIDR, KeyIPv4Gateway},
	false: {KeyIPv6SubnetID, KeyIPv6CIDR, KeyIPv6Gateway},
}

// published are the keys a Network's ConfigMap holds (For): the cache
// keeps no other.
var published = []string{samplecrdv1.ConfigMapKeyNetworkID, samplecrdv1.ConfigMapKeySubnetID, samplecrdv1.ConfigMapKeyProjectID,
	samplecrdv1.ConfigMapKeyCIDR, samplecrdv1.ConfigMapKeyGateway, samplecrdv1.ConfigMapKeyMTU, samplecrdv1.ConfigMapKeyRouterID,
	KeyIPv4SubnetID, KeyIPv4CIDR, KeyIPv4Gateway, KeyIPv6SubnetID, KeyIPv6CIDR, KeyIPv6Gateway}

// maxPublishedValue bounds what the cache keeps of one published key: an
// ID, a CIDR, an address or an MTU is far shorter.
const maxPublishedValue = 256

// trimmedAnnotation marks, in the cache only, a ConfigMap of which the
// transform dropped something: it is not what the controller publishes,
// so UpToDate is false and the sync rewrites it.
const trimmedAnnotation = "samplecrd.k8s.io/trimmed-in-cache"

// Stale returns the ConfigMaps among all that network controls and no
// longer names (want is nil, or has another name): what a renamed or
// removed spec.writeConfigMapToRef leaves behind.
func Stale(all []*corev1.ConfigMap, network *samplecrdv2.Network, want *corev1.ConfigMap) []*corev1.ConfigMap {
	var stale []*corev1.ConfigMap
	for _, cm := range all {
		if metav1.IsControlledBy(cm, network) && (want == nil || cm.Name != want.Name) {
			stale = append(stale, cm)
		}
	}
	return stale
}

// ControllerName returns the name of the Network that controls obj, if a
// Network does.
func ControllerName(obj metav1.Object) (string, bool) {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != "Network" || ref.APIVersion != samplecrdv1.SchemeGroupVersion.String() {
		return "", false
	}
	return ref.Name, true
}

// StripForCache is the ConfigMap informer's transform: every ConfigMap's
// managedFields are dropped before it is stored, and the data of any
// that the controller did not write for the Network that controls it
// (its mark and a Network's controller reference, both). A tenant can
// write a ConfigMap whose ownerReference names a Network; were its data
// kept, a tenant could grow the controller's memory at will, and nothing
// would prune a ConfigMap whose Network policy refuses. The informer's
// selector (SelectMarked) already keeps unmarked ConfigMaps from being
// sent at all; this is the cache's own guarantee, whatever lists it. Of a
// marked ConfigMap a Network controls, which a tenant can forge too, the
// cache keeps only the keys the controller publishes, each bounded, and
// notes that it dropped something, so that the sync rewrites it.
func StripForCache(obj any) (any, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return obj, nil
	}
	cm.ManagedFields = nil
	if _, ours := ControllerName(cm); !ours || !marked(cm) {
		cm.Data, cm.BinaryData = nil, nil
		return cm, nil
	}
	// The mark and the reference are both a tenant's to write: keep no
	// more than the controller publishes, whoever wrote the rest.
	kept := make(map[string]string, len(published))
	trimmed := len(cm.BinaryData) > 0
	for k, v := range cm.Data {
		if len(v) <= maxPublishedValue && slices.Contains(published, k) {
			kept[k] = v
		} else {
			trimmed = true
		}
	}
	cm.Data, cm.BinaryData = kept, nil
	if trimmed {
		metav1.SetMetaDataAnnotation(&cm.ObjectMeta, trimmedAnnotation, "true")
	}
	return cm, nil
}

// ReasonNotControlled is the Warning Event of a Network whose ConfigMap's
// name is taken by one it does not control: sample-controller's
// ErrResourceExists.
const ReasonNotControlled = "ConfigMapNotControlled"

// Publisher keeps the ConfigMap each Network names holding what Neutron
// holds: the owned object's half of a sync.
type Publisher struct {
	// Client writes ConfigMaps; Lister reads them from the informer's
	// cache; FieldManager names the writer.
	Client       corev1client.ConfigMapsGetter
	Lister       corelisters.ConfigMapLister
	FieldManager string
	// Recorder records the Warning of a ConfigMap that is not the
	// Network's.
	Recorder record.EventRecorder
}

// Sync makes the ConfigMap network publishes into hold what obs says, as
// sample-controller's syncHandler does its Deployment: created when
// missing, with network as its controller; updated when it differs, with
// the cached object's resourceVersion, so that a concurrent change fails
// the update instead of being overwritten; and never written when it
// exists and network does not control it. A ConfigMap network controls
// under a name it no longer gives is deleted, with a UID precondition.
//
// The cache holds only the ConfigMaps with the controller's mark: one
// of the name that is not in it is read from the API server (a GET by
// name) before it is created, so that someone else's is still refused,
// and one network controls whose mark was removed is repaired.
func (p Publisher) Sync(ctx context.Context, network *samplecrdv2.Network, obs reconcile.Observed) error {
	configMaps := p.Client.ConfigMaps(network.Namespace)
	want := For(network, obs)
	all, err := p.Lister.ConfigMaps(network.Namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing ConfigMaps from the cache: %w", err)
	}
	for _, stale := range Stale(all, network, want) {
		err := configMaps.Delete(ctx, stale.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &stale.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting ConfigMap %s, which the Network no longer names: %w", stale.Name, err)
		}
	}
	if want == nil {
		return nil
	}
	existing, err := p.Lister.ConfigMaps(network.Namespace).Get(want.Name)
	if apierrors.IsNotFound(err) {
		existing, err = configMaps.Get(ctx, want.Name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		_, err = configMaps.Create(ctx, want, metav1.CreateOptions{FieldManager: p.FieldManager})
	case err != nil:
	case !metav1.IsControlledBy(existing, network):
		msg := fmt.Sprintf("ConfigMap %s exists and is not controlled by this Network: it is left as it is; delete it, or name another in spec.writeConfigMapToRef", want.Name)
		p.Recorder.Event(network, corev1.EventTypeWarning, ReasonNotControlled, msg)
		return errors.New(msg)
	case !UpToDate(existing, want):
		repaired := existing.DeepCopy()
		repaired.Data, repaired.BinaryData = want.Data, nil
		if repaired.Labels == nil {
			repaired.Labels = map[string]string{}
		}
		repaired.Labels[ManagedByLabel] = ManagedBy
		_, err = configMaps.Update(ctx, repaired, metav1.UpdateOptions{FieldManager: p.FieldManager})
	}
	if err != nil {
		return fmt.Errorf("publishing into ConfigMap %s: %w", want.Name, err)
	}
	return nil
}
