package reconcile

import (
	"errors"
	"fmt"
	"strings"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
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

// externalNetworkError is a router of the Network's own that cannot be
// made: spec.router.externalNetwork names no external network, or one the
// administrator does not allow.
type externalNetworkError struct{ msg string }

func (e *externalNetworkError) Error() string { return e.msg }

func externalNetworkRefused(format string, args ...any) error {
	return &externalNetworkError{msg: fmt.Sprintf(format, args...)}
}

// recordError is a record that the API server did not store: nothing was
// made or marked in Neutron, and the next pass tries again.
type recordError struct {
	what string
	err  error
}

func (e *recordError) Error() string {
	return fmt.Sprintf("recording %s in status before anything is done in Neutron: %v; nothing was done there", e.what, e.err)
}

func (e *recordError) Unwrap() error { return e.err }

// subnetRemovalBlockedError is a subnet that spec.subnets no longer names
// and that ports still use: it is left in Neutron until they are gone.
type subnetRemovalBlockedError struct {
	subnet neutron.Subnet
	// ports are the blocking ports, as "ID (device_owner)".
	ports []string
}

// Error lists the ports as far as boundList does: they are anyone's who
// may make ports on the network, and the text is logged on every pass.
func (e *subnetRemovalBlockedError) Error() string {
	return fmt.Sprintf("Neutron subnet %s (%s) is no longer in spec.subnets, but ports are on it: %s; it is deleted once they are gone",
		e.subnet.ID, e.subnet.CIDR, boundList(e.ports))
}

// boundList joins at most maxListed items, then says how many more there
// are.
func boundList(items []string) string {
	const maxListed = 10
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}
