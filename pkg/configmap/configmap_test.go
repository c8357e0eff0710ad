package configmap

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/reconcile"
)

var network = &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "ns", UID: "1c2d3e4f-0000-4000-8000-000000000001"},
	Spec: samplecrdv1.NetworkSpec{WriteConfigMapToRef: &samplecrdv1.ConfigMapReference{Name: "net-info"}}}

func configMap(owner *metav1.OwnerReference) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {1}}}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return cm
}

// TestTheCacheKeepsTheDataOfTheNetworksConfigMapsOnly: the informer's
// transform drops every ConfigMap's managedFields, and the data of those
// no Network controls, which the controller never reads.
func TestTheCacheKeepsTheDataOfTheNetworksConfigMapsOnly(t *testing.T) {
	controlling := metav1.NewControllerRef(network, samplecrdv1.SchemeGroupVersion.WithKind("Network"))
	notControlling := *controlling
	notControlling.Controller = nil
	deployment := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "u", Controller: controlling.Controller}
	for _, tc := range []struct {
		name     string
		owner    *metav1.OwnerReference
		keepData bool
	}{
		{"controlled by a Network: kept", controlling, true},
		{"owned by a Network, not controlled: dropped", &notControlling, false},
		{"controlled by something else: dropped", &deployment, false},
		{"no owner: dropped", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := StripForCache(configMap(tc.owner))
			if err != nil {
				t.Fatal(err)
			}
			cm := obj.(*corev1.ConfigMap)
			if cm.ManagedFields != nil {
				t.Error("managedFields kept")
			}
			if kept := cm.Data != nil && cm.BinaryData != nil; kept != tc.keepData {
				t.Errorf("data kept: %v, want %v", kept, tc.keepData)
			}
		})
	}
}

// TestWhatIsPublished: the keys named as environment variables, ROUTER_ID
// only with a router, and nothing before the Network has a subnet.
func TestWhatIsPublished(t *testing.T) {
	obs := reconcile.Observed{NetworkID: "n", SubnetID: "s", ProjectID: "p", CIDR: "10.0.0.0/24", Gateway: "10.0.0.1", MTU: 1442}
	cm := For(network, obs)
	if cm == nil || cm.Name != "net-info" || cm.Namespace != "ns" || len(cm.Data) != 6 || cm.Data["MTU"] != "1442" {
		t.Fatalf("For = %+v", cm)
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
