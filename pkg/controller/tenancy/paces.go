package tenancy

import (
	"time"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
)

// paceKey is one namespace at one project, by the project's ID: another
// spelling of Keystone's URL, or another interface or region of its
// catalog, reaches the same project and must not buy a pace of its own.
type paceKey struct{ namespace, projectID string }

// paces are the list paces (inventory.Pace) of each namespace at each
// project. A namespace's credentials at one project share one, and it
// outlives them: a credential built again (deleted and named again, let
// go and named again, its Secret rotated) lists on its namespace's pace,
// not on a new one. A pace is forgotten once no credential of its
// namespace at its project is built and it is idle, so the map holds at
// most one per built credential, and those whose last list is less than
// one gap old.
type paces map[paceKey]*inventory.Pace

// of is the pace of namespace at projectID, made if there is none.
func (p paces) of(namespace, projectID string) *inventory.Pace {
	key := paceKey{namespace, projectID}
	pace, ok := p[key]
	if !ok {
		pace = &inventory.Pace{}
		p[key] = pace
	}
	return pace
}

// prune forgets the paces that no built credential keeps (kept) and that
// are idle at now, share(key) namespaces listing their project: the share
// its namespace would have there back, counted among them, since a pace
// no credential keeps is one whose namespace is not counted now, and a
// credential of it built again must wait for the gap it has then.
func (p paces) prune(now time.Time, kept func(paceKey) bool, share func(paceKey) int) {
	for key, pace := range p {
		if !kept(key) && pace.Idle(now, share(key)) {
			delete(p, key)
		}
	}
}
