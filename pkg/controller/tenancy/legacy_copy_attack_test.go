package tenancy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// TestACopyKeptBeforePlacesIsNotOverwrittenByAnotherPlace: attack on the
// Keeper's binding to places. A controller before places kept team-a's
// credential (project A) with no place. After the upgrade, team-a's
// Secret is edited to credentials of project B. The registry compares
// the new place with the kept copy's, which is unknown (zero), and
// neutron.CheckPlace lets a zero place through: the credential is built,
// and the Keeper, which skips its own check for a copy of unknown place,
// overwrites the only credential of project A with project B's. When
// team-a puts its Secret back, the copy (now B's) refuses it as moved,
// for every Network, and a deleting Network gets B's credentials: the
// Networks made in project A can be neither synced nor deleted again,
// whatever the namespace does.
//
// The fix should guarantee: a kept copy whose place is unknown is asked
// where it reaches (as every credential is, before anything is built on
// it) before credentials are compared with it; credentials of another
// place are refused, and the copy is kept as it was.
func TestACopyKeptBeforePlacesIsNotOverwrittenByAnotherPlace(t *testing.T) {
	key := Key{"team-a", "cloud", "team"}
	projectB := neutron.Place{AuthURL: keystone, Interface: "public", ProjectID: "project-b"}
	withPassword := func(password string) *corev1.Secret {
		s := secret("team-a", "cloud", keystone)
		s.Data[samplecrdv1.CloudsYAMLKey] = []byte(strings.Replace(string(s.Data[samplecrdv1.CloudsYAMLKey]), "password: p", "password: "+password, 1))
		return s
	}
	first, err := neutron.OneCloud(withPassword("first").Data[samplecrdv1.CloudsYAMLKey], "team")
	if err != nil {
		t.Fatal(err)
	}
	// As a controller before places kept it: no place annotation.
	legacy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: KeptName(key)},
		Data: map[string][]byte{samplecrdv1.CloudsYAMLKey: first}}
	f := newFixture(t, 10, withPassword("second"), legacy)
	firstCloud, err := neutron.ParseTenantCloud(f.opts.Own, first, "team")
	if err != nil {
		t.Fatal(err)
	}
	// Keystone scopes the first password to project A, the second to B.
	f.opts.Connect = func(cloud *neutron.Cloud) neutron.Interface {
		if reflect.DeepEqual(cloud, firstCloud) {
			return placed{place: projectA}
		}
		return placed{place: projectB}
	}
	keptData := func() string {
		t.Helper()
		kept, err := f.kube.CoreV1().Secrets(controllerNamespace).Get(t.Context(), KeptName(key), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(kept.Data[samplecrdv1.CloudsYAMLKey])
	}

	if _, err := f.For(t.Context(), naming("team-a", "cloud")); !neutron.IsCredentialsError(err) {
		t.Errorf("credentials of project B against a copy of project A: %v, want a CredentialsError", err)
	}
	if !strings.Contains(keptData(), "password: first") {
		t.Errorf("the copy of project A's credential was overwritten: %q", keptData())
	}

	// team-a puts its Secret back.
	if _, err := f.kube.CoreV1().Secrets("team-a").Update(t.Context(), withPassword("first"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(10 * time.Second)
	if _, err := f.For(t.Context(), naming("team-a", "cloud")); err != nil {
		t.Errorf("the Secret put back to project A's credentials: %v, want them used", err)
	}
}
