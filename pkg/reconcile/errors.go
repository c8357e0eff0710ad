package reconcile

import (
	"errors"
	"fmt"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// The errors by which a pass says why it stopped, besides Neutron's and
// the inventory's: classify (outcome.go) turns each into a reason and a
// retry.

// adoptionError is an adoption that cannot proceed; its reason is one of
// the Ready condition's. Retried every few minutes (someone may fix
// Neutron) and at once on a spec change.
type adoptionError struct{ reason, msg string }

func (e *adoptionError) Error() string { return e.msg }

func adoptionRefused(format string, args ...any) error {
	return &adoptionError{reason: samplecrdv1.ReasonAdoptionRefused, msg: fmt.Sprintf(format, args...)}
}

// errAdoptionRecordPending is a pass that found a resource marked by an
// adoption whose record has not reached the cache yet: the next pass, a
// moment later, has it.
var errAdoptionRecordPending = errors.New("the adoption record written to status is not in the cache yet")

// errAdoptionChanged is an adoption whose network or subnet changed between
// the pass's checks and its mark, which Neutron therefore refused (If-Match
// on the revision read): another Network's adoption may have marked it. It
// is never marked over; the next pass, a moment later, reads it again.
var errAdoptionChanged = errors.New("the Neutron network or its subnet changed since it was read, and was not marked; it is read again")

// adoptionRecord ends the pass that found the network and subnet to adopt:
// their own names go into status before either is marked.
type adoptionRecord struct{ adopted *samplecrdv1.AdoptedResources }

func (r *adoptionRecord) Error() string {
	return "Adopting Neutron network " + r.adopted.NetworkID + ": its own names are recorded before it is marked"
}

// placeRecord ends the pass that would make a Network's first Neutron
// resource, or the first pass of a Network made before places were
// recorded: the place goes into status before anything (more) is done
// there.
type placeRecord struct{ place neutron.Place }

func (r *placeRecord) Error() string {
	return "Recording the Network's place, " + r.place.String() + ", in status before anything is made there"
}

// externalNetworkError is a router of the Network's own that cannot be
// made: spec.router.externalNetwork names no external network, or one the
// administrator does not allow.
type externalNetworkError struct{ msg string }

func (e *externalNetworkError) Error() string { return e.msg }

func externalNetworkRefused(format string, args ...any) error {
	return &externalNetworkError{msg: fmt.Sprintf(format, args...)}
}
