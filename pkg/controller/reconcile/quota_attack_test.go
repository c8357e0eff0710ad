package reconcile

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// quotaByProject is the fake Neutron whose quota is each project's own, as
// a real Neutron's is (the fake's counts every network of every project
// against one limit): the quota read answers for the project the
// credentials reach at the time of the read.
type quotaByProject struct {
	*neutronfake.Neutron
	mu     sync.Mutex
	quotas map[string]neutron.Quota
	// err, when set, is the answer to every quota read (a policy that
	// does not let the project's members read it, or an outage of that
	// one API).
	err error
}

func (q *quotaByProject) Quota(ctx context.Context) (neutron.Quota, error) {
	place, _ := q.Neutron.Place(ctx)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return neutron.Quota{}, q.err
	}
	if quota, ok := q.quotas[place.ProjectID]; ok {
		return quota, nil
	}
	return neutron.Unlimited, nil
}

func (q *quotaByProject) set(project string, quota neutron.Quota) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.quotas[project] = quota
}

func (q *quotaByProject) fail(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.err = err
}

// networksUsed is a quota of networks, used of limit, and nothing else.
func networksUsed(used, limit int) neutron.Quota {
	q := neutron.Unlimited
	q.Networks = neutron.Usage{Limit: limit, Used: used}
	return q
}

// withQuotaByProject reconnects f's inventory and reconciler over a
// quotaByProject of f's fake Neutron, and lists once.
func withQuotaByProject(f *fixture, quotas map[string]neutron.Quota) *quotaByProject {
	f.t.Helper()
	q := &quotaByProject{Neutron: f.neutron, quotas: quotas}
	f.connect(q, defaultOptions(), nil)
	return q
}

func quotaNearlyFull(f *fixture, name string) *metav1.Condition {
	return meta.FindStatusCondition(f.stored(name).Status.Conditions, samplecrdv1.ConditionQuotaNearlyFull)
}

// nearlyFullBefore is the QuotaNearlyFull condition a Network carries from
// an earlier read of a full project (networks 1 of 1).
func nearlyFullBefore(n *samplecrdv1.Network) *samplecrdv1.Network {
	n.Status.Conditions = append(n.Status.Conditions, metav1.Condition{
		Type: samplecrdv1.ConditionQuotaNearlyFull, Status: metav1.ConditionTrue, Reason: samplecrdv1.QuotaNearlyFullReason,
		Message:            "The project has used 90% or more of its Neutron quota of networks 1 of 1.",
		ObservedGeneration: n.Generation, LastTransitionTime: metav1.NewTime(time.Unix(1e9, 0)),
	})
	return n
}

// TestANetworkShowsOnlyItsOwnProjectsQuota: a Network's status records
// that its network is in project-a, which has room. The credentials it is
// reconciled with move to project-b (the controller's clouds.yaml,
// reloaded by its Session, or any client whose place changes), whose
// quota is full, and the inventory lists there and reads project-b's
// quota. The pass is refused (the place moved), but QuotaNearlyFull must
// not speak of project-b: it is not the Network's project, and its
// figures are of whoever holds project-b. Neither a Network that reaches
// Reconcile nor one stopped at Preflight (an invalid spec) may show it.
//
// FAILS if a Network takes the quota of the place its inventory last
// listed, whatever place its status records.
func TestANetworkShowsOnlyItsOwnProjectsQuota(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network *samplecrdv1.Network
		seed    func(*neutronfake.Neutron)
	}{
		{"Ready, in project-a", inPlace("project-a", "region-1")(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			inSync("192.168.0.0/16", "192.168.0.1")},
		{"an invalid spec, its place recorded in project-a", inPlace("project-a", "region-1")(withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) {
			s.AllocationPools = []samplecrdv1.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.20", End: "10.0.0.30"}}
		})), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.network, func(n *neutronfake.Neutron) {
				n.SetProject("project-a")
				n.SetRegion("region-1")
				if tc.seed != nil {
					tc.seed(n)
				}
			})
			withQuotaByProject(f, map[string]neutron.Quota{"project-a": networksUsed(1, 10), "project-b": networksUsed(5, 5)})
			f.sync("net")
			if c := quotaNearlyFull(f, "net"); c != nil {
				t.Fatalf("in project-a, 1 of 10: QuotaNearlyFull = %+v, want none", c)
			}

			f.neutron.SetProject("project-b")
			listed, err := f.inv.Refresh(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := f.sync("net")
			if c := quotaNearlyFull(f, "net"); c != nil {
				t.Errorf("a Network in project-a, its pass refused (%v), after a list of project-b (QuotaChanged %t): QuotaNearlyFull = %s %q, "+
					"which are project-b's figures, not its project's", out.Err, listed.QuotaChanged, c.Status, c.Message)
			}
		})
	}
}

// TestADeletingNetworkDoesNotKeepAFullQuota: a Network said
// QuotaNearlyFull while its project was full; it is deleted, and a VM's
// port blocks the delete (DeletionBlocked, for as long as the VM lives).
// The project gets room again, and its list queues the Network (every
// Network of the project). Its pass must not leave it saying the project
// is nearly full: docs/conditions.md says the condition goes once the
// project has room.
//
// FAILS if Delete's outcome carries no quota (Observed.Quota nil keeps
// the condition as it is, for as long as the delete is blocked).
func TestADeletingNetworkDoesNotKeepAFullQuota(t *testing.T) {
	network := nearlyFullBefore(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)))
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		inSync("192.168.0.0/16", "192.168.0.1")(n)
		n.AddPort(seededNet, "port-vm", "compute:nova")
		n.SetNetworkQuota(10)
	})
	if c := quotaNearlyFull(f, "net"); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("before the pass: QuotaNearlyFull = %+v, want True (from when the project was full)", c)
	}
	listed, err := f.inv.Refresh(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := f.sync("net")
	ready := meta.FindStatusCondition(f.stored("net").Status.Conditions, samplecrdv1.ConditionReady)
	if out.Finalized || ready == nil || ready.Reason != samplecrdv1.ReasonDeletionBlocked {
		t.Fatalf("outcome %+v, Ready %+v: want DeletionBlocked", out, ready)
	}
	if c := quotaNearlyFull(f, "net"); c != nil {
		t.Errorf("a deleting Network whose project has room (1 of 10; the list's QuotaChanged %t): QuotaNearlyFull = %s %q, want none",
			listed.QuotaChanged, c.Status, c.Message)
	}
}

// TestADeletingNetworkThatMadeNothingTakesNoOneElsesQuota: a Network of a
// namespace's own credentials that made nothing is finished through the
// controller's own project when it is deleted (tenancy's Set.For), whose
// quota is full. It must not come to say the controller's project's
// figures: they are not its project's.
//
// Holds today (Delete sets no quota); a guard for the fix of
// TestADeletingNetworkDoesNotKeepAFullQuota.
func TestADeletingNetworkThatMadeNothingTakesNoOneElsesQuota(t *testing.T) {
	network := deleting(newNetwork("192.168.0.0/16", "192.168.0.1"))
	network.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	network.Spec.CloudCredentialsRef = &samplecrdv1.CloudCredentialsReference{SecretName: "cloud", CloudName: "team"}
	f := newFixture(t, network, func(n *neutronfake.Neutron) { n.SetProject("controllers-project") })
	withQuotaByProject(f, map[string]neutron.Quota{"controllers-project": networksUsed(5, 5)})
	f.sync("net")
	for _, a := range f.client.Actions() {
		if p, ok := a.(k8stesting.PatchActionImpl); ok && strings.Contains(string(p.GetPatch()), samplecrdv1.ConditionQuotaNearlyFull) {
			t.Errorf("a deleting Network of another project's credentials was written the controller's project's quota: %s", p.GetPatch())
		}
	}
}

// TestAPassThatStopsEarlyFollowsTheQuota: a Network stopped at Preflight
// (an invalid spec, never retried until it changes) and one whose pass
// fails (Neutron refuses its create) say QuotaNearlyFull while the
// project is full, and no longer once it has room.
//
// Holds if both paths take the inventory's quota.
func TestAPassThatStopsEarlyFollowsTheQuota(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network *samplecrdv1.Network
		seed    func(*neutronfake.Neutron)
		reason  string
	}{
		{"an invalid spec", withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) {
			s.AllocationPools = []samplecrdv1.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.20", End: "10.0.0.30"}}
		}), nil, samplecrdv1.ReasonInvalidSpec},
		{"a create that fails", newNetwork("192.168.0.0/16", "192.168.0.1"),
			func(n *neutronfake.Neutron) { n.FailOn(neutronfake.CreateNetwork, errUnavailable) }, samplecrdv1.ReasonNeutronUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.network, func(n *neutronfake.Neutron) {
				n.SetProject("project-a")
				if tc.seed != nil {
					tc.seed(n)
				}
			})
			q := withQuotaByProject(f, map[string]neutron.Quota{"project-a": networksUsed(5, 5)})
			f.sync("net")
			ready := meta.FindStatusCondition(f.stored("net").Status.Conditions, samplecrdv1.ConditionReady)
			if ready == nil || ready.Reason != tc.reason {
				t.Fatalf("Ready = %+v, want %s", ready, tc.reason)
			}
			if c := quotaNearlyFull(f, "net"); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "networks 5 of 5") {
				t.Errorf("project full: QuotaNearlyFull = %+v, want True, networks 5 of 5", c)
			}
			q.set("project-a", networksUsed(2, 5))
			if listed, err := f.inv.Refresh(f.ctx); err != nil || !listed.QuotaChanged {
				t.Fatalf("list: %+v, %v; want QuotaChanged", listed, err)
			}
			f.sync("net")
			if c := quotaNearlyFull(f, "net"); c != nil {
				t.Errorf("project with room: QuotaNearlyFull = %+v, want none", c)
			}
		})
	}
}

// TestAQuotaNoReadConfirmsIsNotKeptTrue: a Network said QuotaNearlyFull
// before the controller restarted (or a new leader took over). Since
// then the project has room, but every quota read of the new process
// fails: an operator's policy that does not let the project's members
// read its quota (the inventory's comment names it), or that one API
// failing. No read of this process ever said the project is full, yet the
// Network goes on saying True, with the old figures, for as long as the
// reads fail: the list is fine and the Network is Ready, so nothing
// else says anything is wrong.
//
// FAILS while a nil quota keeps the condition as status has it, however
// long no read can be made (a design choice in nextQuotaCondition, which
// docs/conditions.md does not mention).
func TestAQuotaNoReadConfirmsIsNotKeptTrue(t *testing.T) {
	network := nearlyFullBefore(inPlace("project-a", "")(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)))
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		inSync("192.168.0.0/16", "192.168.0.1")(n)
	})
	// The restart: a new inventory, whose reads of the quota fail.
	q := &quotaByProject{Neutron: f.neutron, quotas: map[string]neutron.Quota{"project-a": networksUsed(1, 10)},
		err: &neutron.RejectedError{Op: "reading the quota", StatusCode: 403, Type: "PolicyNotAuthorized", Message: "rule:get_quota is disallowed by policy"}}
	f.connect(q, defaultOptions(), nil)
	for range 3 {
		if _, err := f.inv.Refresh(f.ctx); err != nil {
			t.Fatal(err)
		}
		f.sync("net")
	}
	if !meta.IsStatusConditionTrue(f.stored("net").Status.Conditions, samplecrdv1.ConditionReady) {
		t.Fatalf("Ready = %+v, want True", meta.FindStatusCondition(f.stored("net").Status.Conditions, samplecrdv1.ConditionReady))
	}
	if c := quotaNearlyFull(f, "net"); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("after three lists whose quota reads all failed, the project at 1 of 10: QuotaNearlyFull = %s %q (observedGeneration %d, since %s), "+
			"figures no read of this process made", c.Status, c.Message, c.ObservedGeneration, c.LastTransitionTime.UTC())
	}
}

// TestARestartReadsTheQuotaAgain: the same restart, whose first quota
// read succeeds: the list says QuotaChanged (the project's Networks are
// queued) and the Network drops the condition.
//
// Holds if the first read of an inventory counts as a change.
func TestARestartReadsTheQuotaAgain(t *testing.T) {
	network := nearlyFullBefore(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		inSync("192.168.0.0/16", "192.168.0.1")(n)
	})
	// The restart: a new inventory and reconciler, and their first list.
	q := &quotaByProject{Neutron: f.neutron, quotas: map[string]neutron.Quota{"project-a": networksUsed(1, 10)}}
	f.inv = inventory.New(q, ours, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: f.clock})
	f.r = New(f.inv, ours, Options{Records: ApplyRecord{Client: f.client}})
	listed, err := f.inv.Refresh(f.ctx)
	if err != nil || !listed.QuotaChanged {
		t.Errorf("the first list after a restart: %+v, %v; want QuotaChanged (the project's Networks queued)", listed, err)
	}
	f.sync("net")
	if c := quotaNearlyFull(f, "net"); c != nil {
		t.Errorf("after a restart that read 1 of 10: QuotaNearlyFull = %+v, want none", c)
	}
}

// TestTheQuotaMessageSaysOnlyCounts: whatever Neutron answers (it is
// integers), the condition's message is the fixed text with the
// resources' names and their counts: no name or ID of anything in the
// project, nothing Neutron could spell. Limits up to Neutron's largest
// (its database's 2^31-1) do not overflow the 90% test.
//
// Holds if quotaCondition formats only the counts.
func TestTheQuotaMessageSaysOnlyCounts(t *testing.T) {
	full := neutron.Quota{
		Networks: neutron.Usage{Limit: 10, Used: 8, Reserved: 1},
		Subnets:  neutron.Usage{Limit: 1, Used: 7, Reserved: -3},
		Ports:    neutron.Usage{Limit: 1<<31 - 1, Used: 1<<31 - 1},
		Routers:  neutron.Usage{Limit: 5, Used: 5},
	}
	c := quotaCondition(full)
	if c == nil {
		t.Fatal("no condition for a full quota")
	}
	shape := regexp.MustCompile(`^The project has used 90% or more of its Neutron quota of ` +
		`((networks|subnets|ports|routers) -?\d+ of \d+)(, (networks|subnets|ports|routers) -?\d+ of \d+)*\. ` +
		`Its creates are refused once a quota is full: ask its operator to raise the quota, or delete what it no longer needs\.$`)
	if !shape.MatchString(c.Message) {
		t.Errorf("message %q says more than counts", c.Message)
	}
	if len(c.Message) > MaxMessageLength {
		t.Errorf("message of %d bytes", len(c.Message))
	}
	for _, u := range []neutron.Usage{{Limit: 1<<31 - 1, Used: 0}, {Limit: 1<<31 - 1, Used: 1 << 30}, {Limit: -1, Used: 1 << 31}, {Limit: 0, Used: 3}, {Limit: 10, Used: -100, Reserved: 5}} {
		if u.NearlyFull() {
			t.Errorf("%+v is nearly full", u)
		}
	}
}

// TestARefusedNetworkDoesNotKeepAFullQuota: a Network said
// QuotaNearlyFull; then its project is refused it (its Secret deleted: a
// CredentialsError; or its namespace's grant withdrawn: NotAllowed). No
// list of any project speaks for it any more, so the figures it carries
// are never read again: it must not go on saying them.
//
// FAILS if ProjectRefused keeps the condition as status has it.
func TestARefusedNetworkDoesNotKeepAFullQuota(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"its Secret deleted", &neutron.CredentialsError{Reason: "Secret default/cloud does not exist"}},
		{"its grant withdrawn", &NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: "spec.cloudCredentialsRef: not granted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			network := nearlyFullBefore(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))
			f := newFixture(t, network, func(n *neutronfake.Neutron) { inSync("192.168.0.0/16", "192.168.0.1")(n) })
			out, refused := ProjectRefused(f.stored("net"), tc.err)
			if !refused {
				t.Fatalf("%v is not a refusal", tc.err)
			}
			f.record(f.stored("net"), out)
			if c := quotaNearlyFull(f, "net"); c != nil {
				t.Errorf("a refused Network (%s): QuotaNearlyFull = %s %q, kept from a project no list reads for it", out.Condition.Reason, c.Status, c.Message)
			}
		})
	}
}

// TestAFailedReadInANewPlaceSaysNoOtherProjectsQuota: the inventory read
// project-a's quota, full (5 of 5). Its credentials then reach project-b
// (the controller's clouds.yaml reloaded, say), where its lists succeed
// but the quota read is refused (project-b's policy). A Network whose
// network is in project-b, Ready there, must not be told project-a's
// figures: they are another project's, of whoever holds it.
//
// FAILS if a failed read keeps the figures of another place.
func TestAFailedReadInANewPlaceSaysNoOtherProjectsQuota(t *testing.T) {
	network := inPlace("project-b", "")(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		n.In("project-b", func() { inSync("192.168.0.0/16", "192.168.0.1")(n) })
	})
	q := withQuotaByProject(f, map[string]neutron.Quota{"project-a": networksUsed(5, 5), "project-b": networksUsed(1, 10)})
	f.neutron.SetProject("project-b")
	q.fail(&neutron.RejectedError{Op: "reading the quota", StatusCode: 403, Type: "PolicyNotAuthorized", Message: "rule:get_quota is disallowed by policy"})
	listed, err := f.inv.Refresh(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.sync("net")
	if !meta.IsStatusConditionTrue(f.stored("net").Status.Conditions, samplecrdv1.ConditionReady) {
		t.Fatalf("Ready = %+v, want True", meta.FindStatusCondition(f.stored("net").Status.Conditions, samplecrdv1.ConditionReady))
	}
	if c := quotaNearlyFull(f, "net"); c != nil {
		t.Errorf("a Network in project-b, after a list of project-b whose quota read failed (QuotaChanged %t): QuotaNearlyFull = %s %q, "+
			"project-a's figures", listed.QuotaChanged, c.Status, c.Message)
	}
}
