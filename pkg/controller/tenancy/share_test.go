package tenancy

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// projectB is a second project of the fixture's Keystone.
var projectB = neutron.Place{AuthURL: keystone, Interface: "public", ProjectID: "project-b"}

// TestAProjectsListRateIsSharedByNamespace: each namespace's credentials
// at one project list it on one pace (paces.go), its cycle multiplied by
// the number of namespaces there (Registry.Share), so that together they
// start no more lists of a project than one namespace, none more than an
// equal part, and a namespace's many credentials split its own part,
// never another's. The project is the unit, however its credential
// reached it. A credential of another project, or the own, shares
// nothing.
func TestAProjectsListRateIsSharedByNamespace(t *testing.T) {
	type credential struct {
		namespace, secret string
		place             neutron.Place
	}
	for _, tc := range []struct {
		name        string
		credentials []credential
		// share is each credential's share, in order; pace the pace it
		// lists on, numbered in order of first appearance.
		share, pace []int
	}{
		{"alone at its project", []credential{{"team-a", "s1", projectA}}, []int{1}, []int{0}},
		{"two namespaces at one project: half each",
			[]credential{{"team-a", "s1", projectA}, {"team-b", "s1", projectA}}, []int{2, 2}, []int{0, 1}},
		{"a namespace's three credentials split its half on one pace; the other's keeps its half",
			[]credential{{"team-a", "s1", projectA}, {"team-a", "s2", projectA}, {"team-a", "s3", projectA}, {"team-b", "s1", projectA}},
			[]int{2, 2, 2, 2}, []int{0, 0, 0, 1}},
		{"the same project by another interface and Keystone URL shares",
			[]credential{{"team-a", "s1", projectA}, {"team-b", "s1", neutron.Place{AuthURL: keystone + "/", Interface: "internal", ProjectID: projectA.ProjectID}}},
			[]int{2, 2}, []int{0, 1}},
		{"another project shares nothing",
			[]credential{{"team-a", "s1", projectA}, {"team-a", "s2", projectB}, {"team-b", "s1", projectB}},
			[]int{1, 2, 2}, []int{0, 1, 2}},
		{"no known project shares nothing",
			[]credential{{"team-a", "s1", neutron.Place{AuthURL: keystone}}, {"team-b", "s1", neutron.Place{AuthURL: keystone}}},
			[]int{1, 1}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var secrets []*corev1.Secret
			for _, c := range tc.credentials {
				secrets = append(secrets, secret(c.namespace, c.secret, keystone))
			}
			f := newFixture(t, 10, secrets...)
			keys := make([]Key, len(tc.credentials))
			var paces []*inventory.Pace
			for i, c := range tc.credentials {
				f.place = c.place
				network := naming(c.namespace, c.secret)
				p, err := f.For(t.Context(), network)
				if err != nil {
					t.Fatalf("For %s/%s: %v", c.namespace, c.secret, err)
				}
				keys[i] = KeyOf(network)
				n := slices.Index(paces, f.paces[p])
				if n < 0 {
					n, paces = len(paces), append(paces, f.paces[p])
				}
				if n != tc.pace[i] {
					t.Errorf("%v lists on pace %d, want %d", keys[i], n, tc.pace[i])
				}
			}
			for i, key := range keys {
				if got := f.Share(key); got != tc.share[i] {
					t.Errorf("Share(%v) = %d, want %d", key, got, tc.share[i])
				}
			}
			if got := f.Share(Key{}); got != 1 {
				t.Errorf("the own project's share = %d, want 1", got)
			}
		})
	}
}
