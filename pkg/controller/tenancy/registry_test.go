package tenancy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

const keystone = "https://keystone.example:5000/v3"

// controllerNamespace is where the Keeper keeps its copies.
const controllerNamespace = "network-controller-system"

// fixture is a Registry over a fake API server holding secrets, with the
// clock, the Secret reads and the projects built on view.
type fixture struct {
	*Registry
	kube  *fake.Clientset
	clock *testingclock.FakeClock
	built []*Project
	// loop is the context each project's loop runs in; inheritedFrom
	// the project each one replaced, if any.
	loop          map[*Project]context.Context
	inheritedFrom map[*Project]*Project
	// paces are the list pace each project was built with.
	paces map[*Project]*inventory.Pace
	// place is where every credential connected from now on reaches (a
	// Keystone answers with the project of the credentials it is given).
	place neutron.Place
}

// placed is a Neutron client that knows only its place.
type placed struct {
	neutron.Interface
	place neutron.Place
}

func (p placed) Place(context.Context) (neutron.Place, error) { return p.place, nil }

// projectA is where the fixture's credentials reach unless told otherwise.
var projectA = neutron.Place{AuthURL: keystone, Interface: "public", ProjectID: "project-a"}

func newFixture(t *testing.T, max int, secrets ...*corev1.Secret) *fixture {
	t.Helper()
	return newBoundedFixture(t, max, 0, secrets...)
}

// newBoundedFixture is newFixture with at most perNamespace credentials
// of one namespace held (0: Max).
func newBoundedFixture(t *testing.T, max, perNamespace int, secrets ...*corev1.Secret) *fixture {
	t.Helper()
	objs := make([]runtime.Object, len(secrets))
	for i, s := range secrets {
		objs[i] = s
	}
	f := &fixture{kube: fake.NewClientset(objs...), clock: testingclock.NewFakeClock(time.Now()), place: projectA,
		loop: map[*Project]context.Context{}, inheritedFrom: map[*Project]*Project{}, paces: map[*Project]*inventory.Pace{}}
	own := &Project{}
	f.Registry = NewRegistry(own, RegistryOptions{
		Secrets: f.kube.CoreV1(),
		Own:     ownCloud(t),
		Connect: func(*neutron.Cloud) neutron.Interface { return placed{place: f.place} },
		Build: func(key Key, _ neutron.Interface, pace *inventory.Pace) *Project {
			p := &Project{Key: key}
			f.paces[p] = pace
			f.built = append(f.built, p)
			return p
		},
		Inherit:         func(old, new *Project) { f.inheritedFrom[new] = old },
		Keeper:          SecretKeeper{Secrets: f.kube.CoreV1(), Namespace: controllerNamespace},
		Max:             max,
		MaxPerNamespace: perNamespace,
		RereadAfter:     10 * time.Second,
		Clock:           f.clock,
	})
	f.Start(t.Context(), func(ctx context.Context, _ Key, p *Project) { f.loop[p] = ctx })
	return f
}

// ownCloud is the controller's cloud, read as ReadCloud reads it.
func ownCloud(t *testing.T) *neutron.Cloud {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clouds.yaml")
	// The controller's user is its own: a namespace's may not be it.
	own := strings.Replace(string(cloudsYAML("own", keystone)), "username: u", "username: controller", 1)
	if err := os.WriteFile(path, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", path)
	cloud, err := neutron.ReadCloud("own")
	if err != nil {
		t.Fatal(err)
	}
	return cloud
}

func cloudsYAML(name, authURL string) []byte {
	return []byte("clouds:\n  " + name + ":\n    auth:\n      auth_url: " + authURL +
		"\n      username: u\n      password: p\n      project_name: " + name + "\n")
}

// secret is a credentials Secret holding a clouds.yaml with cloud "team".
func secret(namespace, name, authURL string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data: map[string][]byte{samplecrdv1.CloudsYAMLKey: cloudsYAML("team", authURL)}}
}

// naming is a Network of namespace that names Secret secretName's cloud
// "team"; no Secret at all when secretName is "".
func naming(namespace, secretName string) *samplecrdv2.Network {
	n := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "n"}}
	if secretName != "" {
		n.Spec.CloudCredentialsRef = &samplecrdv2.CloudCredentialsReference{SecretName: secretName, CloudName: "team"}
	}
	return n
}

func deleting(n *samplecrdv2.Network) *samplecrdv2.Network {
	n.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	return n
}

// gets counts the reads of namespaces' Secrets the fake API server
// answered (not the Keeper's).
func (f *fixture) gets() int {
	n := 0
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" && a.GetNamespace() != controllerNamespace {
			n++
		}
	}
	return n
}

func TestANetworkWithoutCredentialsUsesTheControllersOwn(t *testing.T) {
	f := newFixture(t, 10)
	p, err := f.For(t.Context(), naming("team-a", ""))
	if err != nil || p != f.Own() {
		t.Fatalf("For = %v, %v; want the own project", p, err)
	}
	if f.gets() != 0 {
		t.Errorf("%d Secret reads for a Network that names none", f.gets())
	}
}

func TestCredentialsThatCannotBeUsedSayWhy(t *testing.T) {
	forbidden := func(f *fixture) {
		f.kube.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "cloud", nil)
		})
	}
	noKey := secret("team-a", "cloud", keystone)
	noKey.Data = map[string][]byte{"clouds.yml": nil}
	for _, tc := range []struct {
		name    string
		secrets []*corev1.Secret
		setUp   func(*fixture)
		network *samplecrdv2.Network
		want    string
	}{
		{"no such Secret", nil, nil, naming("team-a", "cloud"), "Secret team-a/cloud does not exist"},
		{"not granted to the controller", nil, forbidden, naming("team-a", "cloud"), "may not read Secret team-a/cloud"},
		{"no clouds.yaml in it", []*corev1.Secret{noKey}, nil, naming("team-a", "cloud"), `has no key "clouds.yaml"`},
		{"another Keystone", []*corev1.Secret{secret("team-a", "cloud", "https://elsewhere.example/v3")}, nil, naming("team-a", "cloud"), "only the controller's own Keystone"},
		{"a Secret of another namespace, by the same name", []*corev1.Secret{secret("team-a", "cloud", keystone)}, nil, naming("team-b", "cloud"), "Secret team-b/cloud does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 10, tc.secrets...)
			if tc.setUp != nil {
				tc.setUp(f)
			}
			_, err := f.For(t.Context(), tc.network)
			if !neutron.IsCredentialsError(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a CredentialsError that says %q", err, tc.want)
			}
			if len(f.built) != 0 {
				t.Errorf("built %d projects from credentials that cannot be used", len(f.built))
			}
		})
	}
}

func TestACredentialIsBuiltOnceAndReadAgainOnlyAfterAWhile(t *testing.T) {
	f := newFixture(t, 10, secret("team-a", "cloud", keystone))
	first, err := f.For(t.Context(), naming("team-a", "cloud"))
	if err != nil || first.Key != (Key{"team-a", "cloud", "team"}) || f.loop[first] == nil {
		t.Fatalf("For = %+v, %v; want team-a's project, started", first, err)
	}
	again, _ := f.For(t.Context(), naming("team-a", "cloud"))
	if again != first || f.gets() != 1 {
		t.Errorf("a second Network within RereadAfter: same project %v, %d reads; want true, 1", again == first, f.gets())
	}

	f.clock.Step(10 * time.Second)
	same, _ := f.For(t.Context(), naming("team-a", "cloud"))
	if same != first || f.gets() != 2 || len(f.built) != 1 {
		t.Errorf("after RereadAfter, the same Secret: same project %v, %d reads, %d built; want true, 2, 1", same == first, f.gets(), len(f.built))
	}
}

func TestAChangedSecretReplacesItsProject(t *testing.T) {
	f := newFixture(t, 10, secret("team-a", "cloud", keystone))
	old, _ := f.For(t.Context(), naming("team-a", "cloud"))
	changed := secret("team-a", "cloud", keystone)
	changed.Data[samplecrdv1.CloudsYAMLKey] = []byte(strings.Replace(string(changed.Data[samplecrdv1.CloudsYAMLKey]), "password: p", "password: rotated", 1))
	if _, err := f.kube.CoreV1().Secrets("team-a").Update(t.Context(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(10 * time.Second)
	p, err := f.For(t.Context(), naming("team-a", "cloud"))
	if err != nil || p == old {
		t.Fatalf("For = %v, %v; want a new project for the rotated password", p, err)
	}
	if f.inheritedFrom[p] != old {
		t.Error("the new project did not inherit from the one it replaced (its writes whose answers were lost)")
	}
	if f.loop[old].Err() == nil {
		t.Error("the replaced project's loop still runs")
	}
}

func TestASecretGoneHoldsOnlyNetworksThatAreNotBeingDeleted(t *testing.T) {
	f := newFixture(t, 10, secret("team-a", "cloud", keystone))
	p, _ := f.For(t.Context(), naming("team-a", "cloud"))
	if err := f.kube.CoreV1().Secrets("team-a").Delete(t.Context(), "cloud", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(10 * time.Second)
	if _, err := f.For(t.Context(), naming("team-a", "cloud")); !neutron.IsCredentialsError(err) {
		t.Errorf("a live Network after its Secret went: %v, want a CredentialsError", err)
	}
	if got, err := f.For(t.Context(), deleting(naming("team-a", "cloud"))); err != nil || got != p {
		t.Errorf("a Network being deleted after its Secret went: %v, %v; want the project it was made in, to delete from", got, err)
	}
	f.clock.Step(10 * time.Second) // the deleting Network reads the Secret itself
	if got, err := f.For(t.Context(), deleting(naming("team-a", "cloud"))); err != nil || got != p {
		t.Errorf("a Network being deleted, reading the Secret that went: %v, %v; want the project it was made in", got, err)
	}
	if f.loop[p].Err() != nil {
		t.Error("the project's loop was stopped though a Network may still need it")
	}
}

// TestTheLeastRecentlyUsedCredentialIsLetGoBeyondMax: where namespaces
// hold as many each (here one), the least recently used of theirs goes.
func TestTheLeastRecentlyUsedCredentialIsLetGoBeyondMax(t *testing.T) {
	f := newFixture(t, 1, secret("team-a", "cloud", keystone), secret("team-b", "cloud", keystone))
	a, _ := f.For(t.Context(), naming("team-a", "cloud"))
	f.clock.Step(time.Second)
	if _, err := f.For(t.Context(), naming("team-b", "cloud")); err != nil {
		t.Fatal(err)
	}
	if f.loop[a].Err() == nil {
		t.Error("team-a's loop still runs beyond Max")
	}
	if _, ok := f.Get(Key{"team-a", "cloud", "team"}); ok {
		t.Error("Get still finds team-a's project")
	}
	if _, ok := f.Get(Key{"team-b", "cloud", "team"}); !ok {
		t.Error("Get does not find team-b's project")
	}
}

// TestOneNamespaceCannotPushOutAnother: a namespace naming 257
// credentials (one Secret each, all usable) lets go only its own: another
// namespace's single credential stays built, its loop running, whichever
// bound stops the first. The last one named is held.
func TestOneNamespaceCannotPushOutAnother(t *testing.T) {
	const many = 257
	for name, tc := range map[string]struct {
		max, perNamespace int
		// held is how many of team-a's credentials are held at the end.
		held int
	}{
		"the per-namespace bound":      {max: 256, perNamespace: 4, held: 4},
		"the total bound alone":        {max: 256, perNamespace: 0, held: 255},
		"a per-namespace bound of one": {max: 2, perNamespace: 1, held: 1},
	} {
		t.Run(name, func(t *testing.T) {
			secrets := []*corev1.Secret{secret("team-b", "cloud", keystone)}
			for i := range many {
				secrets = append(secrets, secret("team-a", fmt.Sprintf("cloud-%d", i), keystone))
			}
			f := newBoundedFixture(t, tc.max, tc.perNamespace, secrets...)
			b, err := f.For(t.Context(), naming("team-b", "cloud"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range many {
				f.clock.Step(time.Millisecond)
				if _, err := f.For(t.Context(), naming("team-a", fmt.Sprintf("cloud-%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if f.loop[b].Err() != nil {
				t.Error("team-b's loop was stopped to make room for team-a's credentials")
			}
			if _, ok := f.Get(Key{"team-b", "cloud", "team"}); !ok {
				t.Error("Get no longer finds team-b's project")
			}
			held := 0
			for i := range many {
				if _, ok := f.Get(Key{"team-a", fmt.Sprintf("cloud-%d", i), "team"}); ok {
					held++
				}
			}
			if held != tc.held {
				t.Errorf("team-a holds %d credentials, want %d", held, tc.held)
			}
			if _, ok := f.Get(Key{"team-a", fmt.Sprintf("cloud-%d", many-1), "team"}); !ok {
				t.Error("team-a's last credential, just built, is not held")
			}
		})
	}
}

// TestThePerNamespaceBoundLetsGoTheNamespacesOwn: beyond its bound a
// namespace's least recently used credential is let go, though the total
// is far below Max, and no other namespace's.
func TestThePerNamespaceBoundLetsGoTheNamespacesOwn(t *testing.T) {
	f := newBoundedFixture(t, 10, 2, secret("team-a", "one", keystone), secret("team-a", "two", keystone),
		secret("team-a", "three", keystone), secret("team-b", "cloud", keystone))
	b, _ := f.For(t.Context(), naming("team-b", "cloud"))
	var a []*Project
	for _, name := range []string{"one", "two", "three"} {
		f.clock.Step(time.Second)
		p, err := f.For(t.Context(), naming("team-a", name))
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, p)
	}
	if f.loop[a[0]].Err() == nil {
		t.Error("team-a's least recently used credential still runs beyond its namespace's bound")
	}
	for _, held := range []struct {
		key Key
		ctx context.Context
	}{{Key{"team-a", "two", "team"}, f.loop[a[1]]}, {Key{"team-a", "three", "team"}, f.loop[a[2]]}, {Key{"team-b", "cloud", "team"}, f.loop[b]}} {
		if _, ok := f.Get(held.key); !ok || held.ctx.Err() != nil {
			t.Errorf("%s was let go", held.key)
		}
	}
}

// TestBeyondMaxTheNamespaceHoldingTheMostGivesWay: the credential let go
// beyond Max is the least recently used of the namespace that holds the
// most, not the least recently used of all.
func TestBeyondMaxTheNamespaceHoldingTheMostGivesWay(t *testing.T) {
	f := newFixture(t, 3, secret("team-b", "cloud", keystone), secret("team-a", "one", keystone),
		secret("team-a", "two", keystone), secret("team-c", "cloud", keystone))
	b, _ := f.For(t.Context(), naming("team-b", "cloud"))
	f.clock.Step(time.Second)
	a1, _ := f.For(t.Context(), naming("team-a", "one"))
	f.clock.Step(time.Second)
	a2, _ := f.For(t.Context(), naming("team-a", "two"))
	f.clock.Step(time.Second)
	if _, err := f.For(t.Context(), naming("team-c", "cloud")); err != nil {
		t.Fatal(err)
	}
	if f.loop[b].Err() != nil {
		t.Error("team-b's only credential, the least recently used of all, was let go though team-a holds more")
	}
	if f.loop[a1].Err() == nil {
		t.Error("team-a's least recently used credential still runs beyond Max")
	}
	if f.loop[a2].Err() != nil {
		t.Error("team-a's more recently used credential was let go")
	}
}

func TestWithoutKeystoneNoNetworkMayNameCredentials(t *testing.T) {
	r := NewRegistry(&Project{}, RegistryOptions{Secrets: fake.NewClientset().CoreV1(), Max: 1})
	if _, err := r.For(t.Context(), naming("team-a", "cloud")); !neutron.IsCredentialsError(err) || !strings.Contains(err.Error(), "--os-cloud") {
		t.Errorf("error %v, want a CredentialsError that asks for --os-cloud", err)
	}
}

func TestReadsThatFailHoldNoPlace(t *testing.T) {
	f := newFixture(t, 2, secret("team-a", "cloud", keystone), secret("team-c", "cloud", keystone))
	a, err := f.For(t.Context(), naming("team-a", "cloud"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		f.clock.Step(time.Millisecond)
		if _, err := f.For(t.Context(), naming("team-b", fmt.Sprintf("missing-%d", i))); !neutron.IsCredentialsError(err) {
			t.Fatalf("a Secret that does not exist: %v, want a CredentialsError", err)
		}
	}
	// A second credential that works fits beside team-a's: the 300 that
	// did not work took no place, so nothing is let go for it.
	if _, err := f.For(t.Context(), naming("team-c", "cloud")); err != nil {
		t.Fatal(err)
	}
	if f.loop[a].Err() != nil {
		t.Error("team-a's project was let go to make room for Secrets that do not exist")
	}
	if _, ok := f.Get(Key{"team-a", "cloud", "team"}); !ok {
		t.Error("Get no longer finds team-a's project")
	}
}

func TestACredentialIsKeptBeforeItIsUsed(t *testing.T) {
	f := newFixture(t, 10, secret("team-a", "cloud", keystone))
	if _, err := f.For(t.Context(), naming("team-a", "cloud")); err != nil {
		t.Fatal(err)
	}
	kept, err := f.kube.CoreV1().Secrets(controllerNamespace).Get(t.Context(), KeptName(Key{"team-a", "cloud", "team"}), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no kept copy after the credential was handed out: %v", err)
	}
	if one, _ := neutron.OneCloud(cloudsYAML("team", keystone), "team"); !bytes.Equal(kept.Data[samplecrdv1.CloudsYAMLKey], one) {
		t.Errorf("kept %q", kept.Data[samplecrdv1.CloudsYAMLKey])
	}
	writes := f.secretWrites()
	f.clock.Step(10 * time.Second)
	if _, err := f.For(t.Context(), naming("team-a", "cloud")); err != nil {
		t.Fatal(err)
	}
	if f.secretWrites() != writes {
		t.Error("the unchanged credential was kept again")
	}
}

func TestADeletingNetworkFindsItsCredentialAfterARestart(t *testing.T) {
	for name, gone := range map[string]func(*fixture){
		"the Secret deleted with its namespace": func(f *fixture) {
			if err := f.kube.CoreV1().Secrets("team-a").Delete(context.Background(), "cloud", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		"the grant to read it deleted first": func(f *fixture) {
			f.kube.PrependReactor("get", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetNamespace() != "team-a" {
					return false, nil, nil
				}
				return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "cloud", nil)
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := newFixture(t, 10, secret("team-a", "cloud", keystone))
			if _, err := before.For(t.Context(), naming("team-a", "cloud")); err != nil {
				t.Fatal(err)
			}
			gone(before)
			// A new process, or a new leader: nothing in memory, the same
			// API server.
			after := newFixture(t, 10)
			after.kube = before.kube
			after.Registry.opts.Secrets, after.Registry.opts.Keeper = before.kube.CoreV1(), SecretKeeper{Secrets: before.kube.CoreV1(), Namespace: controllerNamespace}
			p, err := after.For(t.Context(), deleting(naming("team-a", "cloud")))
			if err != nil || p == nil || p.Key != (Key{"team-a", "cloud", "team"}) {
				t.Fatalf("a deleting Network after a restart: %+v, %v; want its project, from the kept copy", p, err)
			}
			if _, err := after.For(t.Context(), naming("team-a", "cloud")); !neutron.IsCredentialsError(err) {
				t.Errorf("a live Network got the kept copy: %v, want the Secret's refusal", err)
			}
		})
	}
}

// TestCredentialsMovedElsewhereKeepTheirCopy: a Secret edited to
// credentials of another place (project or region) is refused, naming
// both places, and overwrites nothing: the copy kept for deletions still
// holds the first credential, so that a Network made with it can be
// deleted after its namespace is gone, even after a restart. A password
// rotated in the same place updates the copy.
func TestCredentialsMovedElsewhereKeepTheirCopy(t *testing.T) {
	key := Key{"team-a", "cloud", "team"}
	withPassword := func(password string) *corev1.Secret {
		s := secret("team-a", "cloud", keystone)
		s.Data[samplecrdv1.CloudsYAMLKey] = []byte(strings.Replace(string(s.Data[samplecrdv1.CloudsYAMLKey]), "password: p", "password: "+password, 1))
		return s
	}
	keptData := func(f *fixture) string {
		t.Helper()
		kept, err := f.kube.CoreV1().Secrets(controllerNamespace).Get(t.Context(), KeptName(key), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(kept.Data[samplecrdv1.CloudsYAMLKey])
	}
	for _, tc := range []struct {
		name  string
		place neutron.Place
		moved bool
	}{
		{"another project", neutron.Place{AuthURL: keystone, Interface: "public", ProjectID: "project-b"}, true},
		{"another region of the same project", neutron.Place{AuthURL: keystone, Region: "region-2", Interface: "public", ProjectID: "project-a"}, true},
		{"the same place, a rotated password", projectA, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 10, withPassword("first"))
			made, err := f.For(t.Context(), naming("team-a", "cloud"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.kube.CoreV1().Secrets("team-a").Update(t.Context(), withPassword("second"), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			f.place = tc.place
			f.clock.Step(10 * time.Second)
			_, err = f.For(t.Context(), naming("team-a", "cloud"))
			if !tc.moved {
				if err != nil || !strings.Contains(keptData(f), "password: second") {
					t.Fatalf("a rotated password: %v, kept %q; want it used and kept", err, keptData(f))
				}
				return
			}
			if !neutron.IsCredentialsError(err) || !strings.Contains(err.Error(), "project-a") || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.place.ProjectID)) {
				t.Errorf("a live Network: %v, want a CredentialsError naming both places", err)
			}
			if !strings.Contains(keptData(f), "password: first") {
				t.Errorf("the kept copy was overwritten: %q", keptData(f))
			}
			if p, err := f.For(t.Context(), deleting(naming("team-a", "cloud"))); err != nil || p != made {
				t.Errorf("a deleting Network: %v, %v; want the project it was made in", p, err)
			}
			// A restart, the namespace's Secret still the moved one: a
			// deleting Network gets the kept copy, a live one the refusal.
			after := newFixture(t, 10)
			after.kube, after.place = f.kube, tc.place
			after.Registry.opts.Secrets, after.Registry.opts.Keeper = f.kube.CoreV1(), SecretKeeper{Secrets: f.kube.CoreV1(), Namespace: controllerNamespace}
			p, err := after.For(t.Context(), deleting(naming("team-a", "cloud")))
			if err != nil || p == nil || !strings.Contains(keptData(after), "password: first") {
				t.Fatalf("a deleting Network after a restart: %+v, %v; want its project from the kept copy", p, err)
			}
			if _, err := after.For(t.Context(), naming("team-a", "cloud")); !neutron.IsCredentialsError(err) {
				t.Errorf("a live Network after a restart: %v, want the refusal", err)
			}
		})
	}
}

// TestCredentialsKeystoneRefusesAreNotKept: a credential whose place
// cannot be learnt (Keystone refuses it) is neither built nor copied.
func TestCredentialsKeystoneRefusesAreNotKept(t *testing.T) {
	f := newFixture(t, 10, secret("team-a", "cloud", keystone))
	f.Registry.opts.Connect = func(*neutron.Cloud) neutron.Interface { return refused{} }
	if _, err := f.For(t.Context(), naming("team-a", "cloud")); !neutron.IsAuthError(err) {
		t.Fatalf("For = %v, want Keystone's refusal", err)
	}
	if _, err := f.kube.CoreV1().Secrets(controllerNamespace).Get(t.Context(), KeptName(Key{"team-a", "cloud", "team"}), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a copy of credentials Keystone refused was kept: %v", err)
	}
	if len(f.built) != 0 {
		t.Errorf("built %d projects", len(f.built))
	}
}

// refused is a client whose credentials Keystone refuses.
type refused struct{ neutron.Interface }

func (refused) Place(context.Context) (neutron.Place, error) {
	return neutron.Place{}, &neutron.AuthError{Op: "authenticating", Err: errors.New("401")}
}

func TestReleaseForgetsTheKeptCopy(t *testing.T) {
	f := newFixture(t, 10, secret("team-a", "cloud", keystone))
	p, err := f.For(t.Context(), naming("team-a", "cloud"))
	if err != nil {
		t.Fatal(err)
	}
	key := Key{"team-a", "cloud", "team"}
	if err := f.Release(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kube.CoreV1().Secrets(controllerNamespace).Get(t.Context(), KeptName(key), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the kept copy is still there: %v", err)
	}
	if f.loop[p].Err() == nil {
		t.Error("the released project's loop still runs")
	}
}

// secretWrites counts the Secret creates and updates the fake API server
// answered.
func (f *fixture) secretWrites() int {
	n := 0
	for _, a := range f.kube.Actions() {
		if (a.GetVerb() == "create" || a.GetVerb() == "update") && a.GetResource().Resource == "secrets" {
			n++
		}
	}
	return n
}
