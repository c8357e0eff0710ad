package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// BenchmarkCacheMemoryPerNetwork measures what one Network costs the
// controller's heap in steady state — its object in the informer's Indexer
// (after the transform, with pkg/controller/tenancy' index by UID) and its network and subnet in
// the Neutron inventory — at 10,000 Networks, without waiting for Neutron
// to make 10,000 networks. It reports B/Network; test/bench measures the
// same on the real stack at smaller N.
//
//	go test -run '^$' -bench CacheMemoryPerNetwork -benchtime 1x .
func BenchmarkCacheMemoryPerNetwork(b *testing.B) {
	b.Run("with the transform", func(b *testing.B) { benchmarkCacheMemory(b, stripForCache) })
	b.Run("without it", func(b *testing.B) { benchmarkCacheMemory(b, func(o any) (any, error) { return o, nil }) })
}

func benchmarkCacheMemory(b *testing.B, transform cache.TransformFunc) {
	const n = 10000
	for range b.N {
		before := liveHeap()

		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"uid": func(obj any) ([]string, error) {
			return []string{string(obj.(*samplecrdv2.Network).UID)}, nil
		}})
		lister := &staticLister{}
		mark, err := neutron.NewMark("kubernetes", "c1c1c1c1-0000-4000-8000-0000000000c1")
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			o, err := transform(decodedNetwork(b, i))
			if err != nil {
				b.Fatal(err)
			}
			net := o.(*samplecrdv2.Network)
			if err := indexer.Add(net); err != nil {
				b.Fatal(err)
			}
			name := mark.ResourceName(reconcile.OwnerOf(net))
			lister.nets = append(lister.nets, neutron.Network{ID: net.Status.NetworkID, Name: name, Description: mark.Description()})
			lister.subs = append(lister.subs, neutron.Subnet{ID: net.Status.Subnets[0].ID, NetworkID: net.Status.NetworkID,
				Name: name, Description: mark.Description(), CIDR: net.Spec.Subnets[0].CIDR, GatewayIP: net.Spec.Subnets[0].Gateway})
		}
		inv := inventory.NewStore(lister, mark)
		if _, err := inv.Refresh(context.Background()); err != nil {
			b.Fatal(err)
		}
		// What Neutron answered is now held by the inventory alone.
		lister.nets, lister.subs = nil, nil
		after := liveHeap()
		b.ReportMetric(float64(int64(after)-int64(before))/n, "B/Network")
		runtime.KeepAlive(indexer)
		runtime.KeepAlive(inv)
	}
}

// staticLister answers the inventory's lists from memory, as Neutron would
// with the same resources, and holds nothing once they are taken.
type staticLister struct {
	neutron.Interface
	nets []neutron.Network
	subs []neutron.Subnet
}

func (l *staticLister) ListNetworks(_ context.Context, _ string, visit func([]neutron.Network) error) error {
	return visit(l.nets)
}
func (l *staticLister) ListSubnets(_ context.Context, _ string, visit func([]neutron.Subnet) error) error {
	return visit(l.subs)
}

// decodedNetwork is a Network as the informer receives it: decoded from
// the API server's JSON, with the managedFields two writers leave.
func decodedNetwork(b *testing.B, i int) *samplecrdv2.Network {
	uid := types.UID(fmt.Sprintf("0b6a3c1e-%04x-4b1a-9d2e-%012x", i%65536, i))
	data := fmt.Sprintf(`{"apiVersion":"samplecrd.k8s.io/v2","kind":"Network","metadata":{"name":"network-%05d","namespace":"default",
"uid":%q,"resourceVersion":"%d","generation":1,"creationTimestamp":"2026-11-22T04:00:00Z","finalizers":[%q],
"managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"samplecrd.k8s.io/v2","time":"2026-11-22T04:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{".":{},"f:subnets":{}}}},
{"manager":"network-controller","operation":"Apply","apiVersion":"samplecrd.k8s.io/v2","time":"2026-11-22T04:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:networkID":{},"f:observedGeneration":{},"f:subnets":{}}},"subresource":"status"}]},
"spec":{"subnets":[{"cidr":"10.%d.%d.0/24","gateway":"10.%d.%d.1"}]},
"status":{"observedGeneration":1,"networkID":"5b7c0a52-27a4-4a0e-9b1e-%012x","subnets":[{"cidr":"10.%d.%d.0/24","id":"9d3e1f60-1c2b-4f7a-8e6d-%012x"}],
"conditions":[{"type":"Ready","status":"True","reason":"Provisioned","message":"The Neutron network and subnet match the spec","observedGeneration":1,"lastTransitionTime":"2026-11-22T04:00:01Z"}]}}`,
		i, uid, 1000+i, samplecrdv1.NetworkFinalizer, i/256, i%256, i/256, i%256, i, i/256, i%256, i)
	n := &samplecrdv2.Network{}
	if err := json.Unmarshal([]byte(data), n); err != nil {
		b.Fatal(err)
	}
	return n
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
