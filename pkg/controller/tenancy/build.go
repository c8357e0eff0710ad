package tenancy

import (
	"context"
	"errors"
	"time"

	coreinformers "k8s.io/client-go/informers/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/samplecrd/network-controller/pkg/controller/collector"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v1"
	informersv2 "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v2"
)

// Config is what the controller's flags say of its projects.
type Config struct {
	// Namespace is --namespace: the one namespace served, "" for all.
	Namespace string
	// Defaults are the flags' grants, and the controller's namespace.
	Defaults Defaults
	// NeutronResyncPeriod is how often each project is listed;
	// NeutronTimeout bounds one request to Neutron.
	NeutronResyncPeriod, NeutronTimeout time.Duration
	// OrphanCollection, OrphanGracePeriod and MaxOrphansPerList
	// configure each project's garbage collection (pkg/controller/collector).
	OrphanCollection  bool
	OrphanGracePeriod time.Duration
	MaxOrphansPerList int
	// MaxCredentials and MaxCredentialsPerNamespace bound the
	// credentials held at once (RegistryOptions' Max, MaxPerNamespace).
	MaxCredentials, MaxCredentialsPerNamespace int
	// CloudReload is how long a Secret's reading holds.
	CloudReload time.Duration
	// MaxRetryDelay caps the garbage collector's backoff.
	MaxRetryDelay time.Duration
}

// Parts are what Build makes a Set of: informers, clients, and the
// controller's own cloud.
type Parts struct {
	// Networks are the Networks served; TenantPolicies and Namespaces
	// say what each namespace is granted.
	Networks       informersv2.NetworkInformer
	TenantPolicies informers.TenantPolicyInformer
	Namespaces     coreinformers.NamespaceInformer
	// Secrets reads the namespaces' credentials; NetworkClient is what
	// each project's garbage collection reads Networks with, live, and
	// its reconciler writes its records with.
	Secrets       corev1client.SecretsGetter
	NetworkClient versioned.Interface
	// Mark is this cluster's ownership mark in Neutron.
	Mark neutron.Mark
	// Own is the Neutron client of the controller's own cloud, OwnCloud
	// that cloud (nil for --neutron-endpoint), Reach what readiness asks
	// of it.
	Own      neutron.Interface
	OwnCloud *neutron.Cloud
	Reach    *neutron.Reachability
	// Connect returns a client on a namespace's cloud that
	// authenticates lazily (a neutron.Session of its own).
	Connect func(cloud *neutron.Cloud) neutron.Interface
	// Fence, when set, is asked before every write (pkg/component/leader).
	Fence func() error
	// Keeper keeps each namespace's credentials for deletions; nil keeps
	// none (a plan, which writes nothing).
	Keeper Keeper
	// Wrap, when set, wraps each project's Neutron client: a plan's
	// DryRun.
	Wrap func(Key, neutron.Interface) neutron.Interface
	// Recorder writes the garbage collector's Events; nil for a plan.
	Recorder record.EventRecorder
	// Records stores what each reconciler's pass must have in status
	// before it writes to Neutron; nil applies it through NetworkClient
	// (reconcile.ApplyRecord). A plan's writes nothing (plan.Unwritten).
	Records reconcile.RecordWriter
}

// Build returns the Set of the projects of parts' Networks, the one way to
// have one: their policy, the registry of their credentials, and a project
// (an inventory, and a reconciler and a garbage collection on it) for the
// controller's own cloud and for each credential as a Network names it.
// It is built when the process leads, and the end of its leading stops
// every project's list loop.
func Build(parts Parts, cfg Config) (*Set, error) {
	policy := NewPolicy(parts.TenantPolicies, parts.Namespaces, parts.Networks, cfg.Defaults)
	// registry is set below, before any list loop starts and so before
	// any inventory asks it for its share.
	var registry *Registry
	// Credentials of several namespaces may reach one project: its quota
	// series go when the last of their inventories stops.
	quotaExports := &inventory.QuotaExports{}
	newProject := func(key Key, client neutron.Interface, pace *inventory.Pace) *Project {
		if parts.Wrap != nil {
			client = parts.Wrap(key, client)
		}
		// Readiness speaks for the controller's own cloud: a namespace's
		// endpoint that does not answer holds its own Networks, not the
		// leader's /readyz.
		var reach *neutron.Reachability
		if key == (Key{}) {
			reach = parts.Reach
		}
		inv := inventory.New(client, parts.Mark, inventory.Options{
			ResyncPeriod: cfg.NeutronResyncPeriod,
			// A request whose answer was lost to our own timeout may
			// still be under way in Neutron; two timeouts cover it.
			LateCompletionGrace: 2 * cfg.NeutronTimeout,
			// A burst of writes is listed once it pauses: the address
			// counts in status, and one-request deletes, come seconds
			// after a create rather than a period later.
			WritesQuiet:  inventory.DefaultWritesQuiet,
			Reachability: reach,
			Fence:        parts.Fence,
			// Namespaces that reach one project share its list rate.
			Pace:         pace,
			Share:        func() int { return registry.Share(key) },
			QuotaExports: quotaExports,
		})
		records := parts.Records
		if records == nil {
			records = reconcile.ApplyRecord{Client: parts.NetworkClient}
		}
		return &Project{Key: key, Inventory: inv,
			Reconciler: reconcile.New(inv, parts.Mark, reconcile.Options{Adoption: policy, Records: records}),
			Orphans: collector.NewOrphans(inv, collector.Config{
				Mark:        parts.Mark,
				Networks:    parts.NetworkClient,
				Namespace:   cfg.Namespace,
				Enabled:     cfg.OrphanCollection,
				GracePeriod: cfg.OrphanGracePeriod,
				MaxPerList:  cfg.MaxOrphansPerList,
			})}
	}
	registry = NewRegistry(newProject(Key{}, parts.Own, nil), RegistryOptions{
		Secrets: parts.Secrets,
		Own:     parts.OwnCloud,
		Connect: parts.Connect,
		Build:   newProject,
		// A credential rebuilt (a rotated password) keeps the writes of
		// the old one that went unanswered: they may still complete.
		Inherit:         func(old, new *Project) { new.Inventory.Inherit(old.Inventory) },
		Keeper:          parts.Keeper,
		Max:             cfg.MaxCredentials,
		MaxPerNamespace: cfg.MaxCredentialsPerNamespace,
		RereadAfter:     cfg.CloudReload,
	})
	return newSet(parts.Networks, registry, policy, setOptions{Recorder: parts.Recorder, Fence: parts.Fence, MaxRetryDelay: cfg.MaxRetryDelay})
}

// ListOnce is Start for a plan: it waits for the policy's caches, and
// has each project listed once, as the controller lists it before its
// workers start, when a Network first names it; nothing keeps listing,
// and no orphan is collected.
func (s *Set) ListOnce(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), s.policy.HasSynced) {
		return errors.New("the TenantPolicy and Namespace caches did not sync")
	}
	s.registry.Start(ctx, func(ctx context.Context, _ Key, p *Project) { _, _ = p.Inventory.Refresh(ctx) })
	return nil
}
