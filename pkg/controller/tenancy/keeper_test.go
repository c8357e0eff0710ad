package tenancy

import (
	"bytes"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// TestAKeptCopyIsNeverOverwrittenByCredentialsOfAnotherPlace: the Keeper
// itself, whoever asks it, writes over a kept copy only credentials that
// reach the copy's place (a password rotated there); credentials of any
// other place are refused and the copy stays as it was.
func TestAKeptCopyIsNeverOverwrittenByCredentialsOfAnotherPlace(t *testing.T) {
	key := Key{Namespace: "team-a", Secret: "cloud", Cloud: "team"}
	first, rotated := []byte("clouds: {team: {password: one}}"), []byte("clouds: {team: {password: two}}")
	cases := []struct {
		name      string
		place     neutron.Place
		wantError bool
	}{
		{"the same place, a rotated password: kept", projectA, false},
		{"another project: refused", neutron.Place{AuthURL: keystone, Interface: "public", ProjectID: "project-b"}, true},
		{"another region of the same project: refused", neutron.Place{AuthURL: keystone, Region: "region-2", Interface: "public", ProjectID: "project-a"}, true},
		{"another interface: refused", neutron.Place{AuthURL: keystone, Interface: "internal", ProjectID: "project-a"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := SecretKeeper{Secrets: fake.NewClientset().CoreV1(), Namespace: controllerNamespace}
			if err := k.Keep(t.Context(), key, first, projectA); err != nil {
				t.Fatal(err)
			}
			err := k.Keep(t.Context(), key, rotated, tc.place)
			if tc.wantError != neutron.IsCredentialsError(err) {
				t.Fatalf("Keep of credentials reaching %s: %v; want a CredentialsError: %v", tc.place, err, tc.wantError)
			}
			data, place, ok, err := k.Kept(t.Context(), key)
			if err != nil || !ok {
				t.Fatalf("Kept: %v, %v", ok, err)
			}
			want, wantPlace := rotated, tc.place
			if tc.wantError {
				want, wantPlace = first, projectA
			}
			if !bytes.Equal(data, want) || place != wantPlace {
				t.Errorf("the kept copy holds %q at %s, want %q at %s", data, place, want, wantPlace)
			}
		})
	}
}
