package main

import (
	"fmt"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// TestOneNamespacesBacklogDoesNotDelayAnother: pkg/fairqueue makes
// retries fair across namespaces, but the queue they go into is one FIFO.
// Every key an informer adds (a Network made or changed, the
// --resync-period resync of every Network, a TenantPolicy's change, a
// project's first list) goes to the back of it, whatever its namespace.
// A namespace that holds 10,000 Networks puts 10,000 keys ahead of every
// other namespace's at each resync; its syncs are not free (a credential
// taking turns past --max-cloud-credentials-per-namespace is read,
// authenticated at Keystone and kept again at each of them), so another
// namespace's new Network waits for all of them, on the workers every
// namespace shares. The e2e test of fairness fails its Networks, so their
// retries go through the fair limiter; added keys never do.
//
// What the fix should guarantee: the workers take keys from the
// namespaces with keys waiting in turn (a FIFO per namespace, served
// round robin, as API Priority and Fairness does with its queues), so
// that a namespace's key waits behind at most one key of each other
// namespace, however many that namespace queued.
func TestOneNamespacesBacklogDoesNotDelayAnother(t *testing.T) {
	f := newFixture(t)
	q := f.controller.workqueue
	defer q.ShutDown()
	const backlog = 1000
	for i := range backlog {
		q.Add(cache.ObjectName{Namespace: "attacker", Name: fmt.Sprintf("n%d", i)})
	}
	victim := cache.ObjectName{Namespace: "victim", Name: "net"}
	q.Add(victim)
	for handed := 0; handed <= backlog; handed++ {
		key, _ := q.Get()
		q.Done(key)
		if key == victim {
			if handed > 1 {
				t.Errorf("the victim's key was handed out after %d keys of the attacker's namespace, want at most 1", handed)
			}
			return
		}
	}
	t.Fatal("the victim's key was never handed out")
}
