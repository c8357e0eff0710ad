package configmap

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// TestAForgedMarkDoesNotGrowTheCache: the mark that StripForCache trusts
// is a label, app.kubernetes.io/managed-by: network-controller, and the
// controller reference is an ownerReference: a tenant who may create
// ConfigMaps in its namespace sets both on ConfigMaps of its own, naming
// its own Network (its real UID, so that the API server's garbage
// collector keeps them). Each may hold up to 1 MiB of data, and the
// informer caches it in full: thousands of them grow the controller's
// memory until it is OOM-killed, and every namespace's Networks stop.
// Marked-only filters nothing an attacker cannot write.
//
// What the fix should guarantee: the cache holds, of any ConfigMap, no
// more than what the controller itself publishes (the keys of For, each
// of bounded size), whoever wrote it; a ConfigMap that held more is still
// seen as not up to date, so the Network's sync rewrites it.
func TestAForgedMarkDoesNotGrowTheCache(t *testing.T) {
	const mib = 1 << 20
	controlling := metav1.NewControllerRef(network, samplecrdv1.SchemeGroupVersion.WithKind("Network"))
	forged := func(data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "net-info", Namespace: network.Namespace,
				Labels:          map[string]string{ManagedByLabel: ManagedBy},
				OwnerReferences: []metav1.OwnerReference{*controlling}},
			Data: data, BinaryData: binary,
		}
	}
	for _, tc := range []struct {
		name string
		cm   *corev1.ConfigMap
	}{
		{"one key of 1 MiB", forged(map[string]string{"junk": strings.Repeat("x", mib)}, nil)},
		{"a published key of 1 MiB", forged(map[string]string{samplecrdv1.ConfigMapKeyNetworkID: strings.Repeat("x", mib)}, nil)},
		{"1 MiB of binaryData", forged(nil, map[string][]byte{"junk": make([]byte, mib)})},
		{"many small keys", func() *corev1.ConfigMap {
			data := map[string]string{}
			for i := range 20000 {
				data[fmt.Sprintf("key-%05d", i)] = strings.Repeat("v", 40)
			}
			return forged(data, nil)
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := StripForCache(tc.cm)
			if err != nil {
				t.Fatal(err)
			}
			cm := obj.(*corev1.ConfigMap)
			held := 0
			for k, v := range cm.Data {
				held += len(k) + len(v)
			}
			for k, v := range cm.BinaryData {
				held += len(k) + len(v)
			}
			if held > 4096 {
				t.Errorf("the cache holds %d bytes of a tenant's ConfigMap that forged the controller's mark; want no more than the controller publishes", held)
			}
			want := For(network, reconcile.Observed{NetworkID: "n", MTU: 1500,
				Subnets: []samplecrdv2.SubnetStatus{{ID: "s", CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"}}})
			if UpToDate(cm, want) {
				t.Error("a ConfigMap holding more than the controller publishes is up to date: the sync would not repair it")
			}
		})
	}
}
