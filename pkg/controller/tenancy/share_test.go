package tenancy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// projectB is a second project of the fixture's Keystone.
var projectB = neutron.Place{AuthURL: keystone, Interface: "public", ProjectID: "project-b"}

// TestAProjectsListRateIsSharedByNamespaceThenCredential: each credential
// spaces its lists by its share of its project (Registry.Share), so that a
// project is listed no more often than by one credential, every namespace
// that reaches it gets an equal part, and a namespace's many credentials
// split its own part, never another's. The project is the share's unit,
// however its credential reached it. A credential of another project, or
// the own, shares nothing.
func TestAProjectsListRateIsSharedByNamespaceThenCredential(t *testing.T) {
	type credential struct {
		namespace, secret string
		place             neutron.Place
	}
	for _, tc := range []struct {
		name        string
		credentials []credential
		// want is each credential's share, in order.
		want []int
	}{
		{"alone at its place", []credential{{"team-a", "s1", projectA}}, []int{1}},
		{"two namespaces at one place: half each",
			[]credential{{"team-a", "s1", projectA}, {"team-b", "s1", projectA}}, []int{2, 2}},
		{"a namespace's three credentials split its half; the other's one keeps its half",
			[]credential{{"team-a", "s1", projectA}, {"team-a", "s2", projectA}, {"team-a", "s3", projectA}, {"team-b", "s1", projectA}},
			[]int{6, 6, 6, 2}},
		{"the same project by another interface and Keystone URL shares",
			[]credential{{"team-a", "s1", projectA}, {"team-b", "s1", neutron.Place{AuthURL: keystone + "/", Interface: "internal", ProjectID: projectA.ProjectID}}},
			[]int{2, 2}},
		{"another project shares nothing",
			[]credential{{"team-a", "s1", projectA}, {"team-a", "s2", projectB}, {"team-b", "s1", projectB}},
			[]int{1, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var secrets []*corev1.Secret
			for _, c := range tc.credentials {
				secrets = append(secrets, secret(c.namespace, c.secret, keystone))
			}
			f := newFixture(t, 10, secrets...)
			keys := make([]Key, len(tc.credentials))
			for i, c := range tc.credentials {
				f.place = c.place
				network := naming(c.namespace, c.secret)
				if _, err := f.For(t.Context(), network); err != nil {
					t.Fatalf("For %s/%s: %v", c.namespace, c.secret, err)
				}
				keys[i] = KeyOf(network)
			}
			for i, key := range keys {
				if got := f.Share(key); got != tc.want[i] {
					t.Errorf("Share(%v) = %d, want %d", key, got, tc.want[i])
				}
			}
			if got := f.Share(Key{}); got != 1 {
				t.Errorf("the own project's share = %d, want 1", got)
			}
		})
	}
}
