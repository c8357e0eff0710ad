package reconcile

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// isNeutronWrite reports whether a fake Neutron request changes Neutron.
func isNeutronWrite(req string) bool {
	for _, verb := range []string{"create-", "update-", "delete-", "add-", "remove-"} {
		if strings.HasPrefix(req, verb) {
			return true
		}
	}
	return false
}

// recordedBeforeAnyWrite checks that the pass wrote a record to status, and
// that no write had reached Neutron when the API server received it.
func recordedBeforeAnyWrite(t *testing.T, f *fixture) {
	t.Helper()
	if len(f.records) == 0 {
		t.Fatal("no record was written to status")
	}
	for i, before := range f.records {
		for _, req := range before {
			if isNeutronWrite(req) {
				t.Errorf("record %d reached the API server after Neutron was sent %s (all: %q)", i, req, before)
			}
		}
	}
}

// TestNothingIsDoneInNeutronBeforeItsRecordIsStored: the place of a new
// Network, and an adoption's names, are written to status within the pass,
// and the pass goes on to Neutron only once the API server has stored
// them. When the API server refuses the write, nothing is made or marked:
// the pass ends Provisioning, with a real error, retried with backoff, and
// status does not claim what was not stored.
func TestNothingIsDoneInNeutronBeforeItsRecordIsStored(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("etcd is down")
	refused := apierrors.NewInvalid(schema.GroupKind{Group: samplecrdv1.SchemeGroupVersion.Group, Kind: "Network"}, "net", nil)
	inKeystone := func(f *neutronfake.Neutron) { f.SetProject("project-a"); f.SetRegion("region-1") }
	handmade := func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
	}
	nothingRecorded := func(t *testing.T, f *fixture) {
		t.Helper()
		if len(f.records) != 1 {
			t.Errorf("%d record writes, want the one refused", len(f.records))
		}
		st := f.network("net").Status
		if st.Place != nil || st.Adopted != nil {
			t.Errorf("status says place %+v, adopted %+v: a record the API server refused", st.Place, st.Adopted)
		}
		if len(f.neutron.Networks()) > 1 || len(f.neutron.Subnets()) > 1 {
			t.Errorf("made in Neutron: %+v %+v", f.neutron.Networks(), f.neutron.Subnets())
		}
	}
	runPasses(t, []passCase{
		{
			name:        "a new Network's place is stored, then its network and subnet made, in one pass",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        inKeystone,
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				recordedBeforeAnyWrite(t, f)
				want := samplecrdv1.Place{AuthURL: neutronfake.FakeAuthURL, Region: "region-1", Interface: "public", ProjectID: "project-a"}
				if got := f.network("net").Status.Place; got == nil || *got != want {
					t.Errorf("status.place = %+v, want %+v", got, want)
				}
			},
		},
		{
			name:        "the place write fails (API server unavailable): nothing is made in Neutron",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        inKeystone,
			recordFault: unavailable,
			wantErr:     "backoff",
			wantNeutron: nil,
			wantReady:   "False/Provisioning",
			wantEvents:  []string{"Warning Provisioning"},
			check:       nothingRecorded,
		},
		{
			name:        "the place write refused (a place already stored that the cache had not brought): nothing is made",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        inKeystone,
			recordFault: refused,
			wantErr:     "backoff",
			wantNeutron: nil,
			wantReady:   "False/Provisioning",
			wantEvents:  []string{"Warning Provisioning"},
			check:       nothingRecorded,
		},
		{
			name:        "an adoption's record write fails: read, and nothing marked",
			network:     adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet),
			seed:        handmade,
			recordFault: unavailable,
			wantErr:     "backoff",
			wantNeutron: []string{neutronfake.GetNetwork, neutronfake.PortsOf, neutronfake.SubnetsOf},
			wantReady:   "False/Provisioning",
			wantEvents:  []string{"Warning Provisioning"},
			check: func(t *testing.T, f *fixture) {
				nothingRecorded(t, f)
				for _, n := range f.neutron.Networks() {
					if _, ok := ours.OwnerOf(n.Name, n.Description); ok {
						t.Errorf("network %s marked without its names recorded", n.ID)
					}
				}
			},
		},
		{
			name:        "a Neutron without Keystone has no place: nothing to record, made in one pass",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			recordFault: unavailable,
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				if len(f.records) != 0 {
					t.Errorf("%d record writes on a Neutron without Keystone", len(f.records))
				}
			},
		},
	})
}
