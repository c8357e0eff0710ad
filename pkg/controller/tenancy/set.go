// The Set resolves the OpenStack project each Network lives in, behind
// the Network controller. The controller asks it one question per
// sync, "which reconciler acts for this Network?" (Set.For); what a
// project holds is let go when the Network informer says its last Network
// is gone, whichever way it went.
//
// Everything else a project needs runs here, beside the controller's
// queue, not in it:
//
//   - the administrator's TenantPolicies (policy.go), which For asks
//     before it resolves anything, and whose changes queue the Networks
//     of the namespaces they touch;
//   - each project's Neutron informer (pkg/controller/inventory), started when a
//     Network first names the project and listed on its own period;
//   - the handler of those lists, which queues the Networks whose Neutron
//     resources changed behind the controller's back, and hands the
//     garbage collector the resources whose Network is gone;
//   - the garbage collector (pkg/controller/collector), a controller of its own;
//   - the credentials of a namespace (registry.go), let go with the last
//     Network that names them: deleted through its finalizer, before it
//     had one, with its finalizer removed by a person, or with its
//     namespace.

package tenancy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/collector"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	informersv2 "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v2"
	listersv2 "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v2"
)

// uidIndex indexes Networks by UID, which is how a Neutron resource names
// its owner (its namespace/name in Neutron may be cut short).
const uidIndex = "uid"

// projectRegistry hands each Network its Project: a *Registry, or a
// test's.
type projectRegistry interface {
	// Start starts every Project with start, the own one at once.
	Start(ctx context.Context, start StartFunc)
	// For returns network's Project; a *neutron.CredentialsError when
	// its credentials cannot be used.
	For(ctx context.Context, network *samplecrdv2.Network) (*Project, error)
	// Get returns the Project of key, if it is held.
	Get(key Key) (*Project, bool)
	// Own is the Project of the controller's own cloud.
	Own() *Project
	// Release lets go of key's credentials, and the copy kept for
	// deletions, once no Network names them.
	Release(ctx context.Context, key Key) error
}

// checker says whether a Network may name what it names outside itself
// (credentials, an existing router, a pool, an external network, a network
// to adopt): a *Policy, or a test's.
type checker interface {
	// Check returns a *reconcile.NotAllowedError for a Network that names
	// what its namespace is not granted.
	Check(network *samplecrdv2.Network) error
	// HasSynced reports whether the policy's caches have synced.
	HasSynced() bool
	// OnChange has changed called with a namespace whose grants may have
	// changed, "" for all.
	OnChange(changed func(namespace string)) error
}

// setOptions configure a Set.
type setOptions struct {
	// Recorder writes the garbage collector's Events.
	Recorder record.EventRecorder
	// Fence, when set, is asked before the garbage collector writes an
	// Event: pkg/component/leader's Fence.Check.
	Fence func() error
	// MaxRetryDelay caps the garbage collector's backoff.
	MaxRetryDelay time.Duration
}

// Set is every project the controller's Networks live in.
type Set struct {
	policy    checker
	registry  projectRegistry
	networks  listersv2.NetworkLister
	byUID     cache.Indexer
	collector *collector.Collector[Key]
	// enqueue queues a Network on the controller's queue (Start).
	enqueue func(obj any)
}

// newSet returns the Set of the projects of networkInformer's Networks,
// from registry, refused by policy (a *Policy, or a test's). It adds to the informer an index by UID, and a handler of
// every deleted Network, which hands it to the garbage collector (should
// anything of it remain in Neutron, its finalizer having been removed by
// hand, that collects it) and lets go of its credentials if no other
// Network names them.
func newSet(networkInformer informersv2.NetworkInformer, registry projectRegistry, policy checker, opts setOptions) (*Set, error) {
	informer := networkInformer.Informer()
	if err := informer.AddIndexers(cache.Indexers{uidIndex: func(obj any) ([]string, error) {
		return []string{string(obj.(*samplecrdv2.Network).UID)}, nil
	}}); err != nil {
		return nil, fmt.Errorf("adding the UID index: %w", err)
	}
	s := &Set{policy: policy, registry: registry, networks: networkInformer.Lister(), byUID: informer.GetIndexer()}
	s.collector = collector.New(collector.Options[Key]{
		Project: func(key Key) (collector.Project, bool) {
			p, ok := registry.Get(key)
			if !ok {
				return nil, false
			}
			return p.Orphans, true
		},
		Cached: func(uid types.UID) bool {
			_, ok := s.networkByUID(uid)
			return ok
		},
		Recorder:      opts.Recorder,
		Fence:         opts.Fence,
		MaxRetryDelay: opts.MaxRetryDelay,
	})
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if n, ok := obj.(*samplecrdv2.Network); ok {
			s.collector.Enqueue(KeyOf(n), n.Namespace, n.UID)
			s.release(n)
		}
	}}); err != nil {
		return nil, fmt.Errorf("registering the garbage collector's handler: %w", err)
	}
	return s, nil
}

// Start waits for the policy's caches, lists Neutron in the controller's
// own project once, and returns; that project's informer, every other
// project's as a Network names it, and the garbage collector then run
// until ctx ends. Each list queues with enqueue the Networks whose Neutron
// resources changed, and a grant given or withdrawn queues the Networks of
// the namespaces it touches, so that it takes effect at once. Workers
// start even if the first list failed: their syncs then report
// NeutronUnavailable.
func (s *Set) Start(ctx context.Context, enqueue func(obj any)) error {
	s.enqueue = enqueue
	if !cache.WaitForCacheSync(ctx.Done(), s.policy.HasSynced) {
		return errors.New("the TenantPolicy and Namespace caches did not sync")
	}
	if err := s.policy.OnChange(s.enqueueNamespace); err != nil {
		return err
	}
	s.registry.Start(ctx, s.start)
	// Collection is never urgent: one worker is enough, and leaves
	// Neutron's capacity to the Networks being made.
	go s.collector.Run(ctx, 1)
	return nil
}

// For returns the reconciler of network's project: the controller's, or
// its namespace's. The error is a *reconcile.NotAllowedError when network
// names what its namespace is not granted, which is asked before anything
// of its project, unless the grant was withdrawn from a router the
// Network is attached to: then the reconciler detaches it first
// (withdrawn.go). A *neutron.CredentialsError when the namespace's
// credentials cannot be used. A deletion is never refused by policy: what
// a Network made, it may always remove.
func (s *Set) For(ctx context.Context, network *samplecrdv2.Network) (Reconciler, error) {
	var refusal *reconcile.NotAllowedError
	if network.DeletionTimestamp == nil {
		if err := s.policy.Check(network); err != nil && !errors.As(err, &refusal) {
			return nil, err
		}
		if refusal != nil && network.Status.Router == nil {
			return nil, refusal
		}
		if refusal != nil && refusal.Router {
			// The detach is a sync of the Network without its router,
			// which may remake what is missing: all else must be
			// granted, its namespace's cap too.
			if err := s.policy.Check(withoutRouter(network)); err != nil {
				return nil, err
			}
		}
	}
	if network.DeletionTimestamp != nil && madeNothing(network.Status) {
		// Its author may write its finalizers, so any Network can be
		// made to be deleted, one the policy refused too: one for which
		// nothing was ever made is finished through the controller's
		// own project (whose Delete finds nothing of its UID), and the
		// Secret it names is never read.
		return s.registry.Own().Reconciler, nil
	}
	p, err := s.registry.For(ctx, network)
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		if w := withdrawnFrom(p.Reconciler, network, refusal); w != nil {
			return w, nil
		}
		return nil, refusal
	}
	return p.Reconciler, nil
}

// madeNothing reports whether status records nothing made in Neutron, nor
// where it would be: the place is recorded before anything is made
// (pkg/controller/reconcile's ladder), and a Network of a controller before places
// recorded its project.
func madeNothing(status samplecrdv2.NetworkStatus) bool {
	return status.Place == nil && status.ProjectID == "" && status.NetworkID == "" && len(status.Subnets) == 0 &&
		status.Router == nil && status.Adopted == nil
}

// Own is the controller's own project.
func (s *Set) Own() *Project { return s.registry.Own() }

// releaseTimeout bounds the release of one credential: a GET-free DELETE
// of the kept copy.
const releaseTimeout = 30 * time.Second

// release lets go of the credentials of gone, a Network the informer no
// longer holds, once no other Network of its namespace names them. It is
// the informer's delete handler, so it runs for every way a Network goes
// (its finalizer removed by the controller or by a person, deleted before
// it had one, its namespace deleted), and after the informer's cache has
// dropped gone: of two Networks that go together, the handler of the one
// that goes last finds no other, whatever their order. A Network made
// meanwhile that names the credentials is not lost: its first sync keeps
// them again before it makes anything.
func (s *Set) release(gone *samplecrdv2.Network) {
	key := KeyOf(gone)
	if key == (Key{}) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	others, err := s.networks.Networks(gone.Namespace).List(labels.Everything())
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Listing Networks from the cache")
		return
	}
	for _, n := range others {
		if n.UID != gone.UID && KeyOf(n) == key {
			return
		}
	}
	if err := s.registry.Release(ctx, key); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Releasing the credentials of a deleted Network", "credentials", key)
	}
}

// start lists p's project in Neutron and then keeps listing it, each list
// handed to onNeutronListed, until ctx ends. The own project is listed
// once before Start returns, so that a normal start finds its inventory
// ready. Any other project is started by the worker that first needs it,
// which must not wait for Neutron: its first list runs beside, once its
// namespace's pace at the project allows (a credential built again lists
// on the pace of the one it replaces), and queues the project's Networks
// when it is done.
func (s *Set) start(ctx context.Context, key Key, p *Project) {
	onListed := func(ctx context.Context, listed inventory.Listed) { s.onNeutronListed(ctx, p, listed) }
	first := func() {
		listed, err := p.Inventory.ListWhenDue(ctx)
		switch {
		case ctx.Err() != nil:
			// Let go, perhaps while it waited for its pace.
		case err != nil:
			utilruntime.HandleErrorWithContext(ctx, err, "Listing Neutron failed; will retry", "project", key)
		default:
			onListed(ctx, listed)
		}
	}
	if key == (Key{}) {
		first()
		go p.Inventory.Run(ctx, onListed)
		return
	}
	go func() {
		first()
		s.enqueueProject(key)
		p.Inventory.Run(ctx, onListed)
	}()
}

// onNeutronListed is the event handler of a project's Neutron informer:
// after each successful list it queues the Networks whose Neutron
// resources changed behind our back, those whose subnets' address
// counts changed (their status reports them), and every Network of the
// project when what is nearly full of its quota changed, and hands the garbage collector the
// UIDs of resources that have no Network any more. It only queues: every
// write is a worker's, so no two writers ever act on one Network.
func (s *Set) onNeutronListed(ctx context.Context, p *Project, listed inventory.Listed) {
	if listed.Recovered {
		// Neutron answers again: whatever waited on it goes now, not at
		// the end of its backoff.
		klog.FromContext(ctx).Info("Neutron answers again; syncing every Network of the project", "project", p.Key)
		s.enqueueProject(p.Key)
	} else if listed.QuotaChanged {
		// The project's quota crossed the line of nearly full, or moved
		// above it: every Network of the project says so in its
		// QuotaNearlyFull condition, from the inventory, without a
		// request of its own.
		s.enqueueProject(p.Key)
	}
	for _, uid := range append(append([]types.UID(nil), listed.Changed...), listed.Recount...) {
		// Only a Network of this project: credentials of another
		// namespace that reach the same OpenStack project list its
		// marked resources too, and their lists must not set the pace
		// of its syncs. Its own project's list queues it.
		if n, ok := s.networkByUID(uid); ok && KeyOf(n) == p.Key {
			s.enqueue(n)
		}
	}
	var missing []types.UID
	for _, uid := range p.Inventory.UIDs() {
		if _, ok := s.networkByUID(uid); !ok {
			missing = append(missing, uid)
		}
	}
	orphaned := s.collector.Sight(p.Key, p.Orphans, listed.Started, missing)
	klog.FromContext(ctx).V(4).Info("Listed Neutron", "changed", len(listed.Changed), "orphans", orphaned)
}

// enqueueNamespace queues every Network of namespace, of every namespace
// for "".
func (s *Set) enqueueNamespace(namespace string) {
	networks, err := s.networks.Networks(namespace).List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, n := range networks {
		s.enqueue(n)
	}
}

// enqueueProject queues every Network of the project of key.
func (s *Set) enqueueProject(key Key) {
	for _, obj := range s.byUID.List() {
		if KeyOf(obj.(*samplecrdv2.Network)) == key {
			s.enqueue(obj)
		}
	}
}

// networkByUID returns the Network of uid from the informer's cache.
func (s *Set) networkByUID(uid types.UID) (*samplecrdv2.Network, bool) {
	objs, err := s.byUID.ByIndex(uidIndex, string(uid))
	if err != nil || len(objs) == 0 {
		return nil, false
	}
	return objs[0].(*samplecrdv2.Network), true
}
