package fake

import "github.com/samplecrd/network-controller/pkg/controller/neutron"

// Revisions, as neutron-server's revision plugin keeps them: every network
// and subnet has a revision_number (RevisionNumber) that each change
// raises by one, and a subnet made, changed or deleted raises its
// network's too (Neutron's Subnet model revises its network). An update
// that names a revision (If-Match: revision_number=N, IfRevision) is made
// only while the resource is still at N, and is otherwise refused with the
// real client's 412 (neutron.IsStale); one that names none is made
// whatever the revision, as Neutron makes it.

// ifMatch is Neutron's check of an update's condition: nil when the
// update names no revision or the one the resource is at (current), else
// the 412 the real client returns for req.
func ifMatch(req string, revision *int, current int) error {
	if revision == nil || *revision == current {
		return nil
	}
	return neutron.StaleError(req, *revision, current)
}
