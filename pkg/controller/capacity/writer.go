package capacity

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v1"
	informersv2 "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v2"
	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v1"
)

// FieldManager is the field manager of the status the Writer applies.
const FieldManager = "network-controller-capacity"

// batch is how long a change waits before its policy is counted: the
// changes of that second are counted once (the queue holds each policy
// once), so a burst of Networks costs one write per policy, not one each.
const batch = time.Second

// Writer keeps each TenantPolicy's status equal to what its namespaces
// have at work against their caps.
type Writer struct {
	policy   *tenancy.Policy
	policies listers.TenantPolicyLister
	client   versioned.Interface
	// queue holds policy names, so it holds at most one key per policy.
	queue  workqueue.TypedRateLimitingInterface[string]
	synced cache.InformerSynced
}

// New returns a Writer over the informers the controller already has,
// with the flags' defaults (which a namespace's grants start from).
func New(policies informers.TenantPolicyInformer, namespaces coreinformers.NamespaceInformer, networks informersv2.NetworkInformer,
	client versioned.Interface, defaults tenancy.Defaults) (*Writer, error) {
	w := &Writer{
		policy:   tenancy.NewPolicy(policies, namespaces, networks, defaults),
		policies: policies.Lister(),
		client:   client,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "tenantpolicy_status"}),
	}
	w.synced = w.policy.HasSynced
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		// A policy made, changed or deleted may change the cap that binds
		// any namespace it applies to, and so every policy's status that
		// applies there too.
		{policies.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.enqueueAll() },
			UpdateFunc: w.policyChanged,
			DeleteFunc: func(any) { w.enqueueAll() },
		}},
		// A namespace made, relabelled or deleted may be selected by any
		// policy now, or no longer.
		{namespaces.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.enqueueAll() },
			UpdateFunc: w.namespaceRelabelled,
			DeleteFunc: func(any) { w.enqueueAll() },
		}},
		// A Network's change counts only in the policies of its namespace.
		{networks.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    w.enqueueNamespaceOf,
			UpdateFunc: func(_, obj any) { w.enqueueNamespaceOf(obj) },
			DeleteFunc: w.enqueueNamespaceOf,
		}},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return nil, fmt.Errorf("adding the TenantPolicy status handlers: %w", err)
		}
	}
	return w, nil
}

// Run counts and writes until ctx ends, with one worker: a count is one
// pass over the caches, and policies are few.
func (w *Writer) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer w.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), w.synced) {
		return
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for w.processNextWorkItem(ctx) {
		}
	}, time.Second)
	<-ctx.Done()
}

func (w *Writer) processNextWorkItem(ctx context.Context) bool {
	name, shutdown := w.queue.Get()
	if shutdown {
		return false
	}
	defer w.queue.Done(name)
	if err := w.sync(ctx, name); err != nil {
		klog.FromContext(ctx).Error(err, "Writing the TenantPolicy's status, will retry", "tenantPolicy", name)
		w.queue.AddRateLimited(name)
		return true
	}
	w.queue.Forget(name)
	return true
}

// sync counts policy name's status and applies it if it differs from
// what the policy has: nothing is written when nothing changed.
func (w *Writer) sync(ctx context.Context, name string) error {
	tp, err := w.policies.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading TenantPolicy %s from the cache: %w", name, err)
	}
	status, err := w.policy.Usage(tp)
	if err != nil {
		return err
	}
	want := statusApply(name, status)
	if same, err := alreadyApplied(tp, status, want); err != nil || same {
		return err
	}
	if _, err := w.client.SamplecrdV1().TenantPolicies().ApplyStatus(ctx, want,
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("applying the status of TenantPolicy %s: %w", name, err)
	}
	return nil
}

// policyChanged queues every policy when a policy's spec changed (its
// generation): the Writer's own status writes, and resyncs, queue none.
func (w *Writer) policyChanged(old, obj any) {
	o, ok1 := old.(*samplecrdv1.TenantPolicy)
	n, ok2 := obj.(*samplecrdv1.TenantPolicy)
	if ok1 && ok2 && o.Generation == n.Generation {
		return
	}
	w.enqueueAll()
}

// alreadyApplied reports whether want, tp's status as counted now, is
// what tp holds. It is compared with what this field manager applied
// last, as the API server's managedFields record it for the status
// subresource: a field another manager set (an operator's edit of the
// status) is not the Writer's to remove by apply, and a comparison with
// the whole status would then differ, and write, for ever. Before the
// first apply there is no such record (nor in client-go's fake, which
// records no subresource), and the whole status is compared.
func alreadyApplied(tp *samplecrdv1.TenantPolicy, status samplecrdv1.TenantPolicyStatus, want *applyv1.TenantPolicyApplyConfiguration) (bool, error) {
	applied, err := applyv1.ExtractTenantPolicyStatus(tp, FieldManager)
	if err != nil {
		return false, fmt.Errorf("reading what %s applied to TenantPolicy %s: %w", FieldManager, tp.Name, err)
	}
	if applied.Status == nil {
		return equality.Semantic.DeepEqual(tp.Status, status), nil
	}
	return equality.Semantic.DeepEqual(applied, want), nil
}

func (w *Writer) enqueueAll() {
	policies, err := w.policies.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("listing TenantPolicies from the cache: %w", err))
		return
	}
	for _, tp := range policies {
		w.queue.AddAfter(tp.Name, batch)
	}
}

// namespaceRelabelled queues every policy when a namespace's labels
// changed: a resync, which changes nothing, queues none.
func (w *Writer) namespaceRelabelled(old, obj any) {
	o, ok1 := old.(metav1.Object)
	n, ok2 := obj.(metav1.Object)
	if ok1 && ok2 && labels.Equals(o.GetLabels(), n.GetLabels()) {
		return
	}
	w.enqueueAll()
}

func (w *Writer) enqueueNamespaceOf(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	network, ok := obj.(*samplecrdv2.Network)
	if !ok {
		return
	}
	names, err := w.policy.Applying(network.Namespace)
	if err != nil {
		utilruntime.HandleError(err)
		w.enqueueAll()
		return
	}
	for _, name := range names {
		w.queue.AddAfter(name, batch)
	}
}
