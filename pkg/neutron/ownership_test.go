package neutron_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/neutron"
)

const uid = types.UID("7d3c2a9e-0b1f-4c1e-9a55-2f0e1d9b8c77")

func mark(t *testing.T, cluster string) neutron.Mark {
	t.Helper()
	m, err := neutron.NewMark(cluster)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewMarkRefusesNamesThatCannotBePartOfTheMark(t *testing.T) {
	for _, cluster := range []string{"", "Prod", "a b", "a,b", "a=b", "x/y", strings.Repeat("a", 64), "-a", "ünï"} {
		if _, err := neutron.NewMark(cluster); err == nil {
			t.Errorf("NewMark(%q) accepted", cluster)
		}
	}
	for _, cluster := range []string{"kubernetes", "e2e-ns-1", strings.Repeat("a", 63)} {
		if _, err := neutron.NewMark(cluster); err != nil {
			t.Errorf("NewMark(%q): %v", cluster, err)
		}
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
			"default/example-network/" + string(uid)},
		{"the longest names are cut in the Network's name only, and say so", longest,
			// 255 = 63 (namespace) + 2 slashes + 36 (UID) + 153 + "~"
			strings.Repeat("n", 63) + "/" + strings.Repeat("a", 153) + "~/" + string(uid)},
	}
	m := mark(t, "kubernetes")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := neutron.ResourceName(tc.owner)
			if got != tc.want {
				t.Errorf("ResourceName = %q, want %q", got, tc.want)
			}
			if len(got) > neutron.MaxNameLength {
				t.Errorf("%d characters, over Neutron's %d", len(got), neutron.MaxNameLength)
			}
			back, ok := m.OwnerOf(got, m.Description())
			if !ok || back.Namespace != tc.owner.Namespace || back.UID != tc.owner.UID {
				t.Errorf("OwnerOf(ResourceName) = %+v, %v; want namespace and UID back", back, ok)
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
