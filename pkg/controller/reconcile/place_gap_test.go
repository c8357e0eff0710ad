package reconcile

import (
	"testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestARecordedPlaceHoldsBeforeTheFirstNetworkIsKnown: a Network's place
// is stored in status before its network is made (in the same pass);
// status.networkID is written only after the create is answered. Between
// those writes (a crash, a create whose answer was lost) the Network has a
// place and no networkID, and the ladder's
// samePlace (like the delete's) is asked only when status names a
// network. So:
//
//   - credentials moved to another region (or project) between the pass
//     that records the place (and died before its create) and the pass
//     that creates make the network in
//     the new place, and status then says place = region 1 while the
//     network is in region 2: the record the whole design rests on lies,
//     and every later check compares against the wrong place;
//   - a create whose answer was lost (or a crash after it) leaves a marked
//     network in region 1 and no networkID; a delete after the credentials
//     moved finds nothing in region 2 and finalizes, stranding region 1's
//     network where nothing lists it again.
//
// Whoever can move the credentials (a namespace's own Secret, or an
// operator's clouds.yaml edit, which strands every namespace caught in the
// window) gets around CheckPlace. The fix should guarantee that every
// create, and every delete that finds nothing, compares status.place with
// the place the credentials reach (CheckPlace, and ListedIn), whether or
// not status.networkID is set: recordPlace should check a recorded place
// too, not only record a missing one.
func TestARecordedPlaceHoldsBeforeTheFirstNetworkIsKnown(t *testing.T) {
	inRegion1 := inPlace("project-a", "region-1")
	seedRegion1Empty := func(f *neutronfake.Neutron) {
		f.SetProject("project-a")
		f.SetRegion("region-1")
	}
	movedToRegion2 := func(f *neutronfake.Neutron) { seedRegion1Empty(f); f.SetRegion("region-2") }
	createdInRegion1ThenMoved := func(f *neutronfake.Neutron) {
		seedRegion1Empty(f)
		inSync("192.168.0.0/16", "192.168.0.1")(f)
		f.SetRegion("region-2")
	}
	withFinalizer := func(n *samplecrdv1.Network) *samplecrdv1.Network {
		n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
		return n
	}
	runPasses(t, []passCase{
		{
			name:       "place recorded in region 1, nothing made yet, credentials now in region 2: nothing is made in region 2",
			network:    inRegion1(withFinalizer(newNetwork("192.168.0.0/16", "192.168.0.1"))),
			seed:       movedToRegion2,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				if n := len(f.neutron.Networks()); n != 0 {
					t.Errorf("region 2 holds %d networks of a Network whose status.place is region 1: %+v", n, f.neutron.Networks())
				}
			},
		},
		{
			name:       "a delete whose create's answer was lost (place recorded, no networkID), credentials now in region 2: the finalizer stays",
			network:    inRegion1(deleting(withFinalizer(newNetwork("192.168.0.0/16", "192.168.0.1")))),
			seed:       createdInRegion1ThenMoved,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released while the Network's network is in region 1, which the credentials no longer reach")
				}
				f.neutron.SetRegion("region-1")
				if len(f.neutron.Networks()) != 1 {
					t.Errorf("region 1's network is gone: %+v", f.neutron.Networks())
				}
			},
		},
	})
}
