package configmap

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

var network = &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "ns", UID: "1c2d3e4f-0000-4000-8000-000000000001"},
	Spec: samplecrdv2.NetworkSpec{WriteConfigMapToRef: &samplecrdv2.ConfigMapReference{Name: "net-info"}}}

func configMap(owner *metav1.OwnerReference, labels map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: labels, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Data: map[string]string{samplecrdv1.ConfigMapKeyNetworkID: "v"}}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return cm
}

// TestTheCacheKeepsTheDataOfTheNetworksConfigMapsOnly: the informer's
// transform drops every ConfigMap's managedFields, and the data of those
// the controller did not write for a Network that controls them, which
// it never reads. A tenant can write a ConfigMap whose ownerReference
// names a Network: without the controller's mark, its data is not kept
// (and the informer's selector does not even list it).
func TestTheCacheKeepsTheDataOfTheNetworksConfigMapsOnly(t *testing.T) {
	controlling := metav1.NewControllerRef(network, samplecrdv1.SchemeGroupVersion.WithKind("Network"))
	notControlling := *controlling
	notControlling.Controller = nil
	deployment := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "u", Controller: controlling.Controller}
	marked := map[string]string{ManagedByLabel: ManagedBy}
	for _, tc := range []struct {
		name     string
		owner    *metav1.OwnerReference
		labels   map[string]string
		keepData bool
	}{
		{"written by the controller for a Network that controls it: kept", controlling, marked, true},
		{"controlled by a Network, not marked (a tenant's): dropped", controlling, nil, false},
		{"controlled by a Network, marked by another manager: dropped", controlling, map[string]string{ManagedByLabel: "helm"}, false},
		{"marked, owned by a Network, not controlled: dropped", &notControlling, marked, false},
		{"marked, controlled by something else: dropped", &deployment, marked, false},
		{"marked, no owner: dropped", nil, marked, false},
		{"no owner: dropped", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Selector().Matches(k8slabels.Set(tc.labels)); got != (tc.labels[ManagedByLabel] == ManagedBy) {
				t.Errorf("the informer's selector lists it: %v", got)
			}
			obj, err := StripForCache(configMap(tc.owner, tc.labels))
			if err != nil {
				t.Fatal(err)
			}
			cm := obj.(*corev1.ConfigMap)
			if cm.ManagedFields != nil {
				t.Error("managedFields kept")
			}
			if kept := cm.Data[samplecrdv1.ConfigMapKeyNetworkID] == "v"; kept != tc.keepData {
				t.Errorf("data kept: %v, want %v", kept, tc.keepData)
			}
		})
	}
}

// TestWhatIsPublished: the keys named as environment variables, ROUTER_ID
// only with a router, and nothing before the Network has a subnet.
func TestWhatIsPublished(t *testing.T) {
	obs := reconcile.Observed{NetworkID: "n", ProjectID: "p", MTU: 1442,
		Subnets: []samplecrdv2.SubnetStatus{{ID: "s", CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"}}}
	cm := For(network, obs)
	if cm == nil || cm.Name != "net-info" || cm.Namespace != "ns" || len(cm.Data) != 6 || cm.Data["MTU"] != "1442" {
		t.Fatalf("For = %+v", cm)
	}
	if !Selector().Matches(k8slabels.Set(cm.Labels)) {
		t.Errorf("labels %v: the informer's selector does not list what the controller writes", cm.Labels)
	}
	if !metav1.IsControlledBy(cm, network) || !*cm.OwnerReferences[0].BlockOwnerDeletion {
		t.Errorf("owner references %+v: want the Network as the controller, blocking its deletion", cm.OwnerReferences)
	}
	obs.Router = &samplecrdv1.RouterStatus{ID: "r"}
	if got := For(network, obs).Data["ROUTER_ID"]; got != "r" {
		t.Errorf("ROUTER_ID = %q with a router", got)
	}
	if For(network, reconcile.Observed{NetworkID: "n"}) != nil {
		t.Error("a ConfigMap published before the Network has a subnet")
	}
}

// TestADualStackNetworkPublishesEachFamily: each subnet under its
// family's keys, the first subnet under v1's keys too, and all of it kept
// by the cache's transform, so that the ConfigMap is up to date once
// written.
func TestADualStackNetworkPublishesEachFamily(t *testing.T) {
	obs := reconcile.Observed{NetworkID: "n", ProjectID: "p", MTU: 1442,
		Subnets: []samplecrdv2.SubnetStatus{{CIDR: "10.0.0.0/24", ID: "s4", Gateway: "10.0.0.1"}, {CIDR: "fd00:10::/64", ID: "s6", Gateway: "fd00:10::1"}}}
	cm := For(network, obs)
	want := map[string]string{
		"NETWORK_ID": "n", "PROJECT_ID": "p", "MTU": "1442",
		"SUBNET_ID": "s4", "CIDR": "10.0.0.0/24", "GATEWAY": "10.0.0.1",
		KeyIPv4SubnetID: "s4", KeyIPv4CIDR: "10.0.0.0/24", KeyIPv4Gateway: "10.0.0.1",
		KeyIPv6SubnetID: "s6", KeyIPv6CIDR: "fd00:10::/64", KeyIPv6Gateway: "fd00:10::1",
	}
	if !reflect.DeepEqual(cm.Data, want) {
		t.Errorf("data = %v, want %v", cm.Data, want)
	}
	cached, err := StripForCache(cm.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if !UpToDate(cached.(*corev1.ConfigMap), cm) {
		t.Errorf("the cache's copy %v is not up to date with what is published: every sync would write it again", cached.(*corev1.ConfigMap).Data)
	}
}

// TestANetworkOfOneSubnetPublishesV1sKeysAlone: what consumers of v1's
// ConfigMap compare stays the same.
func TestANetworkOfOneSubnetPublishesV1sKeysAlone(t *testing.T) {
	obs := reconcile.Observed{NetworkID: "n", MTU: 1442,
		Subnets: []samplecrdv2.SubnetStatus{{CIDR: "10.0.0.0/24", ID: "s4", Gateway: "10.0.0.1"}}}
	if data := For(network, obs).Data; len(data) != 6 || data[KeyIPv4CIDR] != "" {
		t.Errorf("data = %v, want v1's six keys", data)
	}
}
