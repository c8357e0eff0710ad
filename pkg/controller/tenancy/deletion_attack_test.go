package tenancy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

// TestADeletionNeverReadsCredentialsThePolicyRefused: a Network that was
// refused before anything was made (its status records no place, no
// project, no network) gets no project built on the credentials it names
// once it is being deleted.
//
// The attack: the author of a Network may write its metadata.finalizers,
// so any Network can be made "deleting" at will: create it (refused, no
// finalizer from the controller), add the controller's finalizer (or any
// finalizer, then the controller's), delete it. Check returns nil for a
// deleting Network, so Set.For goes straight to Registry.For, which reads
// the Secret the Network names and connects to Keystone with it.
//
//   - In the controller's own namespace (row 1), whose Secrets are the
//     controller's, the Network names a kept copy
//     (network-controller-credentials-<digest>) of team-a's credential:
//     the controller reads it, authenticates as team-a at Keystone and
//     starts a list loop of team-a's project under a key the author
//     controls, which is exactly what Check's controller-namespace rule
//     ("before any Secret is read", docs/tenancy.md) exists to forbid.
//   - In a namespace whose policy says credentials: Controller (row 2),
//     the Network has its namespace's Secret read, authenticated and a
//     project (list loop, inventory) built and held, spending the global
//     --max-cloud-credentials bound that such a namespace should never
//     take a place in.
//
// Impact: the controller-namespace rule and credentials: Controller are
// bypassed by anyone who may write Networks there; another namespace's
// kept credential is put to work for a Network its namespace does not own.
// No Neutron write follows (the new UID owns nothing), but the read, the
// Keystone authentication and the held project are the breach.
//
// The fix should guarantee: a deleting Network whose status records no
// place, project or network (so nothing was ever made for it anywhere)
// is finalized through the controller's own project (whose Delete finds
// nothing of its UID) without reading any Secret; or the
// controller-namespace rule holds for deleting Networks too.
func TestADeletionNeverReadsCredentialsThePolicyRefused(t *testing.T) {
	teamA := Key{"team-a", "cloud", "team"}
	keptCopy := secret(controllerNamespace, KeptName(teamA), keystone)
	for _, tc := range []struct {
		name     string
		secrets  []*corev1.Secret
		policies []*samplecrdv1.TenantPolicy
		network  *samplecrdv2.Network
	}{
		{
			name:    "a Network of the controller's namespace naming a kept copy of team-a's credential",
			secrets: []*corev1.Secret{keptCopy},
			network: naming(controllerNamespace, KeptName(teamA)),
		},
		{
			name:     "a Network of a namespace whose policy allows only the controller's cloud",
			secrets:  []*corev1.Secret{secret("team-b", "cloud", keystone)},
			policies: []*samplecrdv1.TenantPolicy{forTeam("b", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsController})},
			network:  naming("team-b", "cloud"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 10, tc.secrets...)
			policy := newPolicy(t, Defaults{ControllerNamespace: controllerNamespace}, tc.policies...)
			nets := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Samplecrd().V2().Networks()
			s, err := newSet(nets, f.Registry, policy, setOptions{Recorder: record.NewFakeRecorder(10)})
			if err != nil {
				t.Fatal(err)
			}
			_, ctx := ktesting.NewTestContext(t)
			live := tc.network
			live.UID = types.UID("a77ac4e0-0000-4000-8000-000000000001")
			if _, err := s.For(ctx, live); !reconcile.IsNotAllowed(err) {
				t.Fatalf("the live Network: %v, want NotAllowed", err)
			}
			// Its author adds the controller's finalizer and deletes it.
			gone := live.DeepCopy()
			gone.Finalizers = []string{samplecrdv1.NetworkFinalizer}
			gone.DeletionTimestamp = &metav1.Time{}
			_, _ = s.For(ctx, gone)
			reads := 0
			for _, a := range f.kube.Actions() {
				if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" && a.GetNamespace() == live.Namespace {
					reads++
				}
			}
			if reads != 0 || len(f.built) != 0 {
				t.Errorf("deleting a Network refused before anything was made: %d reads of Secrets of %s, %d projects built; want 0, 0",
					reads, live.Namespace, len(f.built))
			}
		})
	}
}
