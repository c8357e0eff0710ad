package reconcile

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// passCase is one row of a table of passes: a Network, what Neutron holds,
// and what one pass must do.
type passCase struct {
	name    string
	network *samplecrdv1.Network
	seed    func(*neutronfake.Neutron)
	// afterList changes Neutron after the fixture's first list, before
	// the pass: what changes between the inventory's lists.
	afterList func(*neutronfake.Neutron)
	// options changes the Reconciler's options from defaultOptions.
	options func(*Options)
	failOn  map[string]error
	// recordFault, when set, is the API server's answer to the pass's
	// record write (status.place, status.adopted): nothing is stored.
	recordFault error
	// wantErr: "" none, "retry-after" a fixed delay, "backoff" an error,
	// "invalid" no retry until the spec changes.
	wantErr     string
	wantNeutron []string
	// wantReady is "Status/Reason" of the Ready condition afterwards.
	wantReady string
	// wantEvents are the Events recorded, as "Type Reason": their
	// wording is for people, and TestEventWording pins its format.
	wantEvents []string
	check      func(t *testing.T, f *fixture)
}

// runPasses runs one pass per row and checks what it asked of Neutron, the
// Ready reason it ends with, how it is retried, and its Events by type and
// reason (TestEventWording pins their words).
func runPasses(t *testing.T, tests []passCase) {
	t.Helper()
	requeues := map[string]Requeue{"": Forget, "soon": AddRateLimited, "invalid": ForgetUntilSpecChanges, "retry-after": AddAfter, "backoff": AddRateLimited}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := defaultOptions()
			if tc.options != nil {
				tc.options(&opts)
			}
			var networks []*samplecrdv1.Network
			if tc.network != nil {
				networks = append(networks, tc.network)
			}
			f := newFixtureWith(t, opts, nil, networks, tc.seed)
			for req, err := range tc.failOn {
				f.neutron.FailOn(req, err)
			}
			f.recordFault = tc.recordFault
			if tc.afterList != nil {
				tc.afterList(f.neutron)
			}

			out := f.syncIn(tc.network.Namespace, tc.network.Name)
			if out.Requeue != requeues[tc.wantErr] {
				t.Fatalf("requeue = %v (%v), want %q", out.Requeue, out.Err, tc.wantErr)
			}
			if got := f.neutron.Requests(); !slices.Equal(got, tc.wantNeutron) {
				t.Errorf("Neutron requests = %q, want %q", got, tc.wantNeutron)
			}
			if tc.wantReady != "" {
				cond := meta.FindStatusCondition(f.networkIn(tc.network.Namespace, tc.network.Name).Status.Conditions, samplecrdv1.ConditionReady)
				if cond == nil {
					t.Fatalf("no Ready condition, want %s", tc.wantReady)
				}
				if got := string(cond.Status) + "/" + cond.Reason; got != tc.wantReady {
					t.Errorf("Ready = %s (%s), want %s", got, cond.Message, tc.wantReady)
				}
			}
			if got := f.takeEvents(); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events = %q, want %q", got, tc.wantEvents)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}
