package reconcile

import "errors"

// NotAllowedError is a Network that names what its namespace is not
// granted (pkg/controller/tenancy's policy, or a router another Network made).
// Nothing was asked of Neutron, or nothing was written.
type NotAllowedError struct {
	// Reason is the Ready condition's reason: AdoptionRefused and
	// ExternalNetworkNotAllowed, as before policies, for those fields;
	// NotAllowed for the others.
	Reason string
	// Message names the field, what it names, and the grant it needs.
	Message string
	// Router says that spec.router is what is not granted, and nothing
	// else: a grant withdrawn from a Network attached to that router, or
	// to a router of its own on that external network, means it detaches
	// (pkg/controller/tenancy's withdrawn.go), keeping its network and subnet.
	Router bool
}

func (e *NotAllowedError) Error() string { return e.Message }

// NothingAsked ends the message of every refusal by policy: nothing was
// asked of Neutron. A withdrawn router's refusal says what was asked
// instead.
const NothingAsked = "; nothing was asked of Neutron (docs/tenancy.md)"

// IsNotAllowed reports whether err is, or wraps, a NotAllowedError.
func IsNotAllowed(err error) bool {
	var na *NotAllowedError
	return errors.As(err, &na)
}
