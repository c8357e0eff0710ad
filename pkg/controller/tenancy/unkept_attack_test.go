package tenancy

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// TestACredentialIsNotHandedOutBeforeItIsKept: attack on the Keeper's
// promise that a credential is kept before anything is made with it. The
// kept copy's create fails once (the API server busy): the first For
// says so. But the project was built and cached before the keep, so a
// second For, within the reading's RereadAfter, hands it out with no copy
// kept: a Network is made with it, and if its namespace's Secret (or the
// grant to read it) then goes before the Secret is read again, that
// Network can never be deleted (its finalizer stays, or a person removes
// it and its network is stranded in the namespace's project).
//
// The fix should guarantee: For returns a live Network's project only once
// the Keeper holds a copy of the credential it was built from, bound to
// the place Keystone said it reaches; until then each For tries to keep
// it again, and fails while it cannot. (A reading of the same Secret
// after RereadAfter kept it already, but with a zero place: the place is
// learnt only when a credential is built.)
func TestACredentialIsNotHandedOutBeforeItIsKept(t *testing.T) {
	f := newFixture(t, 10, secret("team-a", "cloud", keystone))
	busy := true
	f.kube.PrependReactor("create", "secrets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetNamespace() != controllerNamespace || !busy {
			return false, nil, nil
		}
		busy = false
		return true, nil, apierrors.NewServerTimeout(schema.GroupResource{Resource: "secrets"}, "create", 1)
	})
	if _, err := f.For(t.Context(), naming("team-a", "cloud")); err == nil {
		t.Fatal("the first For kept no copy and said nothing")
	}
	p, err := f.For(t.Context(), naming("team-a", "cloud"))
	_, getErr := f.kube.CoreV1().Secrets(controllerNamespace).Get(t.Context(), KeptName(Key{"team-a", "cloud", "team"}), metav1.GetOptions{})
	if err == nil && apierrors.IsNotFound(getErr) {
		t.Errorf("For handed out %+v with no copy of its credential kept", p)
	}
	if err != nil {
		t.Errorf("the second For, the API server no longer busy: %v, want the project, its copy kept", err)
	}
	// Kept late, the copy still records the place the credential was
	// bound to: a zero place would let any other overwrite it.
	if _, place, ok, err := (SecretKeeper{Secrets: f.kube.CoreV1(), Namespace: controllerNamespace}).Kept(t.Context(), Key{"team-a", "cloud", "team"}); err == nil && ok && place != projectA {
		t.Errorf("the copy kept late records %s, want %s", place, projectA)
	}
}
