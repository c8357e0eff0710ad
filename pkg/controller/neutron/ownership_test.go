package neutron_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

const (
	uid        = types.UID("7d3c2a9e-0b1f-4c1e-9a55-2f0e1d9b8c77")
	clusterUID = types.UID("c1c1c1c1-0000-4000-8000-0000000000c1")
	// otherClusterUID is another cluster's kube-system namespace.
	otherClusterUID = types.UID("c2c2c2c2-0000-4000-8000-0000000000c2")
)

func mark(t *testing.T, cluster string) neutron.Mark {
	t.Helper()
	return markOf(t, cluster, clusterUID)
}

func markOf(t *testing.T, cluster string, clusterUID types.UID) neutron.Mark {
	t.Helper()
	m, err := neutron.NewMark(cluster, clusterUID)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewMarkRefusesNamesThatCannotBePartOfTheMark(t *testing.T) {
	for _, cluster := range []string{"Prod", "a b", "a,b", "a=b", "x/y", strings.Repeat("a", 64), "-a", "ünï"} {
		if _, err := neutron.NewMark(cluster, clusterUID); err == nil {
			t.Errorf("NewMark(%q) accepted", cluster)
		}
	}
	for _, cluster := range []string{"kubernetes", "e2e-ns-1", strings.Repeat("a", 63)} {
		if _, err := neutron.NewMark(cluster, clusterUID); err != nil {
			t.Errorf("NewMark(%q): %v", cluster, err)
		}
	}
	for _, bad := range []types.UID{"", "kube-system", types.UID(strings.ToUpper(string(clusterUID)))} {
		if _, err := neutron.NewMark("kubernetes", bad); err == nil {
			t.Errorf("NewMark with cluster UID %q accepted", bad)
		}
	}
}

// TestTheDefaultIdentityIsTheClustersOwn: without a cluster name, the mark
// is the kube-system namespace's UID, which two clusters never share, so
// two clusters left at their defaults never see each other's resources.
func TestTheDefaultIdentityIsTheClustersOwn(t *testing.T) {
	a, b := markOf(t, "", clusterUID), markOf(t, "", otherClusterUID)
	if want := "managed-by=network-controller,cluster=" + string(clusterUID); a.Description() != want {
		t.Errorf("default mark = %q, want %q", a.Description(), want)
	}
	if a.Description() == b.Description() {
		t.Errorf("two clusters' default marks are both %q", a.Description())
	}
	if _, ok := a.OwnerOf(b.ResourceName(neutron.Owner{Namespace: "default", Name: "net", UID: uid}), b.Description()); ok {
		t.Error("a cluster's default mark recognises another cluster's resource")
	}
}

// TestOnlyThisClusterMayCollect: two clusters given one --cluster-name
// share a mark, but a resource's name records the cluster that made it,
// and only that cluster may collect it once its Network is gone. A name
// from before names recorded it proves no cluster.
func TestOnlyThisClusterMayCollect(t *testing.T) {
	ours, theirs := markOf(t, "shared", clusterUID), markOf(t, "shared", otherClusterUID)
	owner := neutron.Owner{Namespace: "default", Name: "net", UID: uid}
	tests := []struct {
		name, resourceName string
		want               bool
	}{
		{"made by this cluster", ours.ResourceName(owner), true},
		{"made by another cluster with the same name", theirs.ResourceName(owner), false},
		{"made before names recorded the cluster", "default/net/" + string(uid), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ok := ours.OwnerOf(tc.resourceName, ours.Description())
			if !ok {
				t.Fatalf("OwnerOf(%q) refused a resource with the shared mark", tc.resourceName)
			}
			if got := ours.Collectable(o); got != tc.want {
				t.Errorf("Collectable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResourceNameFitsNeutronAndKeepsIdentity(t *testing.T) {
	longest := neutron.Owner{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("a", 253), UID: uid}
	tests := []struct {
		name  string
		owner neutron.Owner
		want  string
	}{
		{"a short name is whole", neutron.Owner{Namespace: "default", Name: "example-network", UID: uid},
			"default/example-network/" + string(uid) + "/" + string(clusterUID)},
		{"the longest names are cut in the Network's name only, and say so", longest,
			// 255 = 63 (namespace) + 3 slashes + 36 (UID) + 36 (cluster UID) + 116 + "~"
			strings.Repeat("n", 63) + "/" + strings.Repeat("a", 116) + "~/" + string(uid) + "/" + string(clusterUID)},
	}
	m := mark(t, "kubernetes")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.ResourceName(tc.owner)
			if got != tc.want {
				t.Errorf("ResourceName = %q, want %q", got, tc.want)
			}
			if len(got) > neutron.MaxNameLength {
				t.Errorf("%d characters, over Neutron's %d", len(got), neutron.MaxNameLength)
			}
			back, ok := m.OwnerOf(got, m.Description())
			if !ok || back.Namespace != tc.owner.Namespace || back.UID != tc.owner.UID || back.ClusterUID != clusterUID {
				t.Errorf("OwnerOf(ResourceName) = %+v, %v; want namespace, UID and cluster UID back", back, ok)
			}
			if cut := strings.HasSuffix(tc.owner.Name, "a") && len(tc.owner.Name) > 116; back.Truncated() != cut {
				t.Errorf("Truncated = %v, want %v", back.Truncated(), cut)
			}
		})
	}
}

// TestOwnerOfTouchesOnlyWhatIsProvablyOurs: the cases of issue 11, and every
// way a look-alike can differ from what this cluster's controller creates.
func TestOwnerOfTouchesOnlyWhatIsProvablyOurs(t *testing.T) {
	ours := mark(t, "prod")
	other := mark(t, "staging")
	name := "default/net/" + string(uid)
	tests := []struct {
		name, resourceName, description string
		want                            bool
	}{
		{"ours", name, ours.Description(), true},
		{"another cluster's mark", name, other.Description(), false},
		{"no mark (a person's or another tool's)", name, "", false},
		{"a mark that only starts like ours", name, ours.Description() + "x", false},
		{"Cluster API's naming, unmarked", "k8s-clusterapi-cluster-default-foo", "", false},
		{"Cluster API's naming, marked", "k8s-clusterapi-cluster-default-foo", ours.Description(), false},
		{"the old k8s-<uid> scheme, marked", "k8s-" + string(uid), ours.Description(), false},
		{"an identity that is not a UUID", "default/net/clusterapi-cluster-default-foo", ours.Description(), false},
		{"a UUID in upper case", "default/net/" + strings.ToUpper(string(uid)), ours.Description(), false},
		{"a UUID in braces", "default/net/{" + string(uid) + "}", ours.Description(), false},
		{"an invalid namespace", "Default/net/" + string(uid), ours.Description(), false},
		{"an extra segment", "default/net/x/" + string(uid), ours.Description(), false},
		{"a cluster UID that is not a UUID", "default/net/" + string(uid) + "/kubernetes", ours.Description(), false},
		{"five segments", "default/net/" + string(uid) + "/" + string(clusterUID) + "/x", ours.Description(), false},
		{"no Network name", "default//" + string(uid), ours.Description(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := ours.OwnerOf(tc.resourceName, tc.description); got != tc.want {
				t.Errorf("OwnerOf(%q, %q) = %v, want %v", tc.resourceName, tc.description, got, tc.want)
			}
		})
	}
}

// TestReleasedFromNamesOnlyThisClustersReleasingNamespace: the namespace of
// a release is read back only from this cluster's own release mark, whole
// even where the Network's name was cut; anything else is no proof.
func TestReleasedFromNamesOnlyThisClustersReleasingNamespace(t *testing.T) {
	m, other := mark(t, "east"), mark(t, "west")
	long := neutron.Owner{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("x", 253), UID: uid}
	for _, tc := range []struct {
		name, description, wantNamespace string
		wantReleased                     bool
	}{
		{"this cluster's release", m.Released(neutron.Owner{Namespace: "team-a", Name: "net", UID: uid}), "team-a", true},
		{"a release whose Network name was cut", m.Released(long), long.Namespace, true},
		{"another cluster's release", other.Released(neutron.Owner{Namespace: "team-a", Name: "net", UID: uid}), "", true},
		{"the mark itself", m.Description(), "", false},
		{"a person's text", "made by hand", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, ok := m.ReleasedFrom(tc.description)
			if ns != tc.wantNamespace || ok != (tc.wantNamespace != "") {
				t.Errorf("ReleasedFrom = %q, %v; want %q", ns, ok, tc.wantNamespace)
			}
			if got := neutron.IsReleased(tc.description); got != tc.wantReleased {
				t.Errorf("IsReleased = %v, want %v", got, tc.wantReleased)
			}
		})
	}
}
