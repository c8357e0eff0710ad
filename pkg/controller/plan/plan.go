package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
)

// maxPasses bounds the syncs a plan runs of one Network. A sync that makes
// or adopts a Network takes one (its place, or the adoption's names,
// stored in status first, in the same sync), and one that waits without a
// failure (its project's first list under way) is followed by another.
const maxPasses = 5

// SyncFunc is the controller's sync of the Network of key: its
// syncHandler. retry says the controller would sync it again at the next
// step of its backoff with nothing failed (a project's first list under
// way); err is why the sync stopped short, if it did.
type SyncFunc func(ctx context.Context, key cache.ObjectName) (retry bool, err error)

// NewSyncer returns the controller's sync over a plan's cluster and
// projects. It is main.go's, which builds the controller with its own
// NewController: pkg/controller/plan cannot import it, and has no sync of its own.
type NewSyncer func(ctx context.Context, cluster *Cluster, projects *tenancy.Set) (SyncFunc, error)

// Result is what the controller would do for one Network.
type Result struct {
	// Network is namespace/name.
	Network string `json:"network"`
	// Exists says the Network is in the API server already: the plan
	// starts from its status (the Neutron IDs, the project), as the
	// controller would.
	Exists bool `json:"exists"`
	// Requests are the writes the syncs would send to Neutron, in order.
	Requests []Request `json:"requests"`
	// Warnings are what the plan found that Neutron would accept but an
	// operator should know: a range that overlaps another Network's.
	Warnings []string `json:"warnings,omitempty"`
	// Condition is the Ready condition the controller would report after
	// them.
	Condition *metav1.Condition `json:"condition,omitempty"`
	// Refused says the controller would not make Neutron match: the
	// Network would not become Ready (Condition says why).
	Refused bool `json:"refused"`
	// Unknown, when set, is where the plan stopped because it cannot
	// tell what Neutron would answer.
	Unknown string `json:"unknown,omitempty"`
	// Error is why the sync would stop where the controller reports no
	// condition (a Network Ready for its generation stays so while Neutron
	// cannot be listed), so that a refusal never goes unexplained.
	Error string `json:"error,omitempty"`
}

// Planner runs the controller's own sync on Networks, on clients that
// write nothing: its projects' Neutron clients are DryRuns, their records
// Unwritten, and what the controller writes to the API server lands in a
// Cluster of the plan's own.
type Planner struct {
	projects *tenancy.Set
	neutron  *dryRuns
	cluster  *Cluster
	sync     SyncFunc
}

// NewPlanner builds the projects of parts as the controller's
// (tenancy.Build), with a DryRun on each project's Neutron client, no
// record written (Unwritten), no credentials kept and no Event, and the
// controller's sync over them (newSyncer) on a new Cluster. Start parts'
// informers, then Start the Planner.
func NewPlanner(ctx context.Context, newSyncer NewSyncer, parts tenancy.Parts, cfg tenancy.Config) (*Planner, error) {
	dry := &dryRuns{}
	parts.Wrap, parts.Records, parts.Keeper, parts.Recorder, parts.Fence = dry.wrap, Unwritten{}, nil, nil, nil
	set, err := tenancy.Build(parts, cfg)
	if err != nil {
		return nil, err
	}
	cluster := NewCluster()
	sync, err := newSyncer(ctx, cluster, set)
	if err != nil {
		return nil, fmt.Errorf("building the controller: %w", err)
	}
	return &Planner{projects: set, neutron: dry, cluster: cluster, sync: sync}, nil
}

// Start waits for the policy's caches; each project is then listed once,
// when a Network first names it (tenancy.Set.ListOnce).
func (p *Planner) Start(ctx context.Context) error { return p.projects.ListOnce(ctx) }

// Plan plans stored, a Network as Admit returns it: the controller's syncs
// of it, each on what the one before wrote, until it is Ready for its
// generation, finalized (or not the controller's to finalize), or refused
// (a sync that the controller would not retry at once, or that failed).
// Nothing is written: the Requests are the DryRuns'.
func (p *Planner) Plan(ctx context.Context, stored *samplecrdv2.Network, exists bool) Result {
	res := Result{Network: stored.Namespace + "/" + stored.Name, Exists: exists, Requests: []Request{}}
	key := cache.ObjectName{Namespace: stored.Namespace, Name: stored.Name}
	if err := p.cluster.Seed(stored); err != nil {
		return internalError(res, err)
	}
	for range maxPasses {
		retry, err := p.sync(ctx, key)
		requests, warnings := p.neutron.take()
		res.Requests, res.Warnings = append(res.Requests, requests...), append(res.Warnings, warnings...)
		var unknown *UnknownError
		if errors.As(err, &unknown) {
			res.Unknown, res.Condition = unknown.Error(), nil
			return res
		}
		network, readErr := p.cluster.CatchUp(ctx, key)
		if readErr != nil {
			return internalError(res, readErr)
		}
		if network == nil || network.DeletionTimestamp != nil && !slices.Contains(network.Finalizers, samplecrdv1.NetworkFinalizer) {
			return res // gone, or finalized: nothing more to do
		}
		res.Condition = readyCondition(network, err)
		if res.Condition != nil && res.Condition.Status == metav1.ConditionTrue && err == nil {
			return res
		}
		// A sync that waits without a failure (the first list under
		// way) goes on at its next sync; anything else is the
		// controller's last word until something changes.
		if !retry || err != nil {
			res.Refused = true
			if res.Condition == nil && err != nil {
				res.Error = err.Error()
			}
			return res
		}
	}
	res.Refused = true
	return res
}

// readyCondition is network's Ready condition for its generation, as the
// controller's syncs left it: nil when there is none, or when it is True
// while the sync stopped with err, which it therefore does not explain.
func readyCondition(network *samplecrdv2.Network, err error) *metav1.Condition {
	c := meta.FindStatusCondition(network.Status.Conditions, samplecrdv1.ConditionReady)
	if c == nil || c.ObservedGeneration != network.Generation || c.Status == metav1.ConditionTrue && err != nil {
		return nil
	}
	return c
}

// internalError is res refused because the plan's own cluster failed it.
func internalError(res Result, err error) Result {
	res.Refused, res.Condition = true, &metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionUnknown,
		Reason: samplecrdv1.ReasonInternalError, Message: err.Error()}
	return res
}

// dryRuns are the DryRuns of a plan's projects, one on each project's
// Neutron client (tenancy.Parts.Wrap). One Network is synced at a time,
// so what they recorded since the last take is that Network's.
type dryRuns struct {
	mu  sync.Mutex
	all []*DryRun
}

func (d *dryRuns) wrap(_ tenancy.Key, client neutron.Interface) neutron.Interface {
	d.mu.Lock()
	defer d.mu.Unlock()
	dry := NewDryRun(client)
	d.all = append(d.all, dry)
	return dry
}

// take returns the writes every DryRun recorded since the last take, and
// its warnings.
func (d *dryRuns) take() (requests []Request, warnings []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dry := range d.all {
		r, w := dry.Take()
		requests, warnings = append(requests, r...), append(warnings, w...)
	}
	return requests, warnings
}
