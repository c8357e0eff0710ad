package reconcile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestBeforeNeutronIsListedNothingIsAskedAndReadyNetworksAreLeftAlone:
// before the first successful list (a restart or a new leader during an
// outage), Preflight stops every Network before Neutron is asked anything.
// A Network Ready for its generation gets no condition to write; any other
// says why it waits, and the reason says when the credentials were
// refused.
func TestBeforeNeutronIsListedNothingIsAskedAndReadyNetworksAreLeftAlone(t *testing.T) {
	tests := []struct {
		name    string
		network *samplecrdv1.Network
		listErr error
		// wantReason is the Ready reason to record, "" for none.
		wantReason string
	}{
		{
			name:    "a Ready Network: nothing to record",
			network: provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			listErr: errUnavailable,
		},
		{
			name:       "a new Network: NeutronUnavailable",
			network:    newNetwork("192.168.0.0/16", "192.168.0.1"),
			listErr:    errUnavailable,
			wantReason: samplecrdv1.ReasonNeutronUnavailable,
		},
		{
			name:       "a new Network, credentials refused: AuthenticationFailed",
			network:    newNetwork("192.168.0.0/16", "192.168.0.1"),
			listErr:    &neutron.AuthError{Op: "connecting to the cloud", Err: errors.New("401")},
			wantReason: samplecrdv1.ReasonAuthenticationFailed,
		},
		{
			name: "a Network Ready for an older generation: says why it waits",
			network: func() *samplecrdv1.Network {
				n := provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
				n.Generation = 2
				return n
			}(),
			listErr:    errUnavailable,
			wantReason: samplecrdv1.ReasonNeutronUnavailable,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.network, nil)
			f.neutron.FailOn(neutronfake.ListNetworks, tc.listErr)
			f.connect(f.neutron, defaultOptions(), nil)

			out, ok := f.r.Preflight(f.stored("net"))
			if ok {
				t.Fatal("Preflight let a pass go on before Neutron was listed")
			}
			if !errors.Is(out.Err, inventory.ErrNotSynced) && !errors.Is(out.Err, tc.listErr) || out.Requeue != AddRateLimited {
				t.Errorf("Preflight = %v, requeue %v; want why, with backoff", out.Err, out.Requeue)
			}
			if got := f.neutron.Requests(); len(got) != 0 {
				t.Errorf("Neutron requests %q before the inventory was listed", got)
			}
			switch {
			case tc.wantReason == "" && out.Condition != nil:
				t.Errorf("Ready = %+v, want nothing to record", out.Condition)
			case tc.wantReason != "" && (out.Condition == nil || out.Condition.Status != metav1.ConditionFalse ||
				out.Condition.Reason != tc.wantReason || out.Warning != tc.wantReason):
				t.Errorf("Ready = %+v (Warning %q), want False/%s with a Warning", out.Condition, out.Warning, tc.wantReason)
			}
		})
	}
}

// TestWhileAProjectsFirstListIsUnderWayANetworkWaitsWithoutAWord: a
// namespace's credentials are listed for the first time beside the worker
// that asked for them; until that list ends there is nothing to say (the
// list queues the Network again), so nothing is written, and no Warning.
func TestWhileAProjectsFirstListIsUnderWayANetworkWaitsWithoutAWord(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	f.inv = inventory.New(f.neutron, ours, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour})
	f.r = New(f.inv, ours, defaultOptions())

	out, ok := f.r.Preflight(f.stored("net"))
	if ok || out.Condition != nil || out.Warning != "" || out.Requeue != AddRateLimited {
		t.Errorf("Preflight = %+v, %v; want to wait, soon, with nothing to record", out, ok)
	}
	if got := f.neutron.Requests(); len(got) != 0 {
		t.Errorf("Neutron requests %q before the inventory was listed", got)
	}
}

// TestAnInvalidSpecStopsBeforeNeutron: a spec Neutron would refuse, which
// CEL cannot see, is InvalidSpec before any request, and is not retried
// until it changes.
func TestAnInvalidSpecStopsBeforeNeutron(t *testing.T) {
	f := newFixture(t, withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) {
		s.AllocationPools = []samplecrdv1.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.20", End: "10.0.0.30"}}
	}), nil)
	out, ok := f.r.Preflight(f.stored("net"))
	if ok || out.Requeue != ForgetUntilSpecChanges || out.Condition == nil || out.Condition.Reason != samplecrdv1.ReasonInvalidSpec {
		t.Errorf("Preflight = %+v, %v; want InvalidSpec, not retried", out, ok)
	}
	if got := f.neutron.Requests(); len(got) != 0 {
		t.Errorf("Neutron requests %q", got)
	}
}

// TestMessagesAreBounded: whatever Neutron answers, a condition message
// stays within MaxMessageLength and says how much it left out; a list of
// ports names the first ten and counts the rest.
func TestMessagesAreBounded(t *testing.T) {
	long := notReady(samplecrdv1.ReasonNeutronUnavailable, "body: "+strings.Repeat("é", 40000))
	if len(long.Message) > MaxMessageLength || !strings.Contains(long.Message, "more characters") {
		t.Errorf("a %d-byte message became %d bytes ending %q", 6+80000, len(long.Message), long.Message[len(long.Message)-40:])
	}
	if !strings.HasPrefix(long.Message, "body: é") || strings.ToValidUTF8(long.Message, "?") != long.Message {
		t.Error("the cut message does not keep its beginning as valid text")
	}
	var ports []string
	for i := range 25 {
		ports = append(ports, fmt.Sprintf("port-%d", i))
	}
	if got := boundList(ports); !strings.HasSuffix(got, "port-9 and 15 more") || strings.Contains(got, "port-10") {
		t.Errorf("boundList = %q", got)
	}
}

// TestClassify is the table of what errors mean: each row one error, in
// one phase, and the reason and retry it gets.
func TestClassify(t *testing.T) {
	refused := neutron.ErrorForResponse("creating network", 400, "InvalidInput", "no")
	inUse := neutron.ErrorForResponse("deleting network", 409, "NetworkInUse", "in use")
	tests := []struct {
		name        string
		ph          phase
		err         error
		wantReason  string
		wantRequeue Requeue
	}{
		{"unreachable", phaseSyncing, errUnavailable, samplecrdv1.ReasonNeutronUnavailable, AddRateLimited},
		{"the breaker open", phaseSyncing, fmt.Errorf("%w since then", inventory.ErrNeutronDown), samplecrdv1.ReasonNeutronUnavailable, AddRateLimited},
		{"a refusal comes back after a fixed delay", phaseSyncing, refused, samplecrdv1.ReasonNeutronRejected, AddAfter},
		{"an overlap", phaseSyncing, neutron.ErrorForResponse("creating subnet", 400, "InvalidInput", "overlaps with another subnet"), samplecrdv1.ReasonCIDRConflict, AddAfter},
		{"a used-up quota backs off", phaseSyncing, neutron.ErrorForResponse("create", 409, "OverQuota", "Quota exceeded"), samplecrdv1.ReasonNeutronQuotaExceeded, AddRateLimited},
		{"credentials refused", phaseSyncing, &neutron.AuthError{Op: "x", Err: errUnavailable}, samplecrdv1.ReasonAuthenticationFailed, AddRateLimited},
		{"a broken ownership invariant is not an outage", phaseSyncing, fmt.Errorf("subnet x: %w", inventory.ErrNotOurs), samplecrdv1.ReasonInternalError, AddRateLimited},
		{"a broken invariant while deleting too", phaseDeleting, fmt.Errorf("subnet x: %w", inventory.ErrNotOurs), samplecrdv1.ReasonInternalError, AddRateLimited},
		{"a delete refused for ports backs off", phaseDeleting, inUse, samplecrdv1.ReasonDeletionBlocked, AddRateLimited},
		{"a delete refused otherwise backs off", phaseDeleting, refused, samplecrdv1.ReasonDeleting, AddRateLimited},
		{"a release that failed", phaseReleasing, errUnavailable, samplecrdv1.ReasonDeleting, AddRateLimited},
		{"a resource that changed hands since the list waits for the next", phaseSyncing, fmt.Errorf("subnet x: %w", inventory.ErrMarkGone), samplecrdv1.ReasonProvisioning, AddRateLimited},
		{"before the first list", phaseWaiting, inventory.ErrNotSynced, samplecrdv1.ReasonNeutronUnavailable, AddRateLimited},
		// No reason: a replica that may no longer lead writes no condition.
		{"a fenced write says nothing", phaseSyncing, fmt.Errorf("creating: %w", inventory.ErrFenced), "", AddRateLimited},
		{"a fenced delete says nothing either", phaseDeleting, fmt.Errorf("deleting: %w", inventory.ErrFenced), "", AddRateLimited},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := classify(tc.ph, tc.err)
			if v.reason != tc.wantReason || v.requeue != tc.wantRequeue {
				t.Errorf("classify = %s, %v; want %s, %v", v.reason, v.requeue, tc.wantReason, tc.wantRequeue)
			}
			if out := v.outcome(tc.err, Observed{}, nil); (out.Condition == nil) != (tc.wantReason == "") {
				t.Errorf("outcome's condition = %v, want one exactly when there is a reason", out.Condition)
			}
		})
	}
}
