package collector

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Sight takes the UIDs that a list of Neutron, begun at started, found
// without a Network in the informer's cache, and returns those to queue
// for collection: the ones in the controller's scope. It starts the
// list's budget, and asks for a second list a grace period later when a
// UID is new.
func (o *Orphans) Sight(started time.Time, missing []types.UID) []types.UID {
	orphaned := slices.DeleteFunc(slices.Clone(missing), func(uid types.UID) bool { return !o.manages(o.inv.Get(uid).Owner) })
	if len(o.tracker.NewList(started, orphaned)) > 0 {
		o.inv.RequestRefresh(o.cfg.GracePeriod)
	}
	return orphaned
}
