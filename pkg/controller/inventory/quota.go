package inventory

import (
	"context"
	"slices"
	"sync"

	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// quotaWatch reads the quota of the project an inventory lists in, once
// per successful list (never per sync), exports it
// (network_controller_neutron_quota_limit and _used), and keeps the
// latest read for the status of the project's Networks (their
// QuotaNearlyFull condition): how full the project is, whoever fills it,
// before a create is refused over it.
// QuotaExports counts, by place, the inventories that export that
// place's quota series. Credentials of several namespaces may reach one
// project, as may a credential built again beside the one it replaces:
// each lists the project and sets the same series, which go when the
// last of them stops listing it, not the first. It holds a place only
// while an inventory exports it. The zero value is ready to use; an
// inventory without one shares it with no other.
type QuotaExports struct {
	mu sync.Mutex
	by map[neutron.Place]int
}

// hold counts one more inventory exporting place.
func (e *QuotaExports) hold(place neutron.Place) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.by == nil {
		e.by = map[neutron.Place]int{}
	}
	e.by[place]++
}

// release counts one inventory fewer exporting place, and removes the
// place's series when it was the last.
func (e *QuotaExports) release(place neutron.Place) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.by[place]--; e.by[place] > 0 {
		return
	}
	delete(e.by, place)
	metrics.ForgetNeutronQuota(place.Region, place.ProjectID)
}

type quotaWatch struct {
	mu sync.Mutex
	// latest is the latest quota read, of place; nil before the first.
	// A first read that fails reads a quota that limits nothing.
	latest *neutron.Quota
	place  neutron.Place
	// exported is the place whose series were set, zero for none, held
	// in exports.
	exported neutron.Place
	exports  *QuotaExports
}

// update reads client's quota and exports it, and reports whether what
// is nearly full (neutron.Quota.NearlyFull, figures included) differs
// from the read before, or this is the first read: the project's
// Networks have a condition to say again. It reads nothing when the
// client reads no quota (a plan's) or knows no project (a noauth
// Neutron). A read that fails keeps the figures of this process's last
// read that succeeded: Neutron's default policy lets a project's members
// read its quota, and an operator's policy that does not is no reason to
// fail the list. Before one has, it reads a quota that limits nothing,
// so that a QuotaNearlyFull no read of this process made does not stay.
func (w *quotaWatch) update(ctx context.Context, client neutron.Interface) (changed bool) {
	reader, ok := client.(neutron.QuotaReader)
	if !ok {
		return false
	}
	place, err := client.Place(ctx)
	if err != nil || place.ProjectID == "" {
		return false
	}
	q, err := reader.Quota(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Reading the project's quota failed; its metrics and conditions keep the last figures", "err", err)
		if w.latest != nil && w.place == place {
			return false
		}
		q = neutron.Unlimited
	} else {
		for _, r := range q.Resources() {
			metrics.SetNeutronQuota(place.Region, place.ProjectID, r.Resource, r.Limit, r.InUse())
		}
		if w.exported != place {
			w.exports.hold(place)
			if !w.exported.IsZero() {
				w.exports.release(w.exported)
			}
			w.exported = place
		}
	}
	changed = w.latest == nil || w.place != place || !slices.Equal(w.latest.NearlyFull(), q.NearlyFull())
	w.latest, w.place = &q, place
	return changed
}

// quotaOf returns a copy of the latest quota read if it is of recorded,
// a Network's recorded place, as neutron.CheckPlace compares them (a
// zero place is a Network not yet made, which is made in this one); nil
// before the first read. Of another place it returns a quota that limits
// nothing: the credentials reach another project than the Network's, and
// no figure of that one speaks of it.
func (w *quotaWatch) quotaOf(recorded neutron.Place) *neutron.Quota {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latest == nil {
		return nil
	}
	q := *w.latest
	if neutron.CheckPlace(recorded, w.place) != nil {
		q = neutron.Unlimited
	}
	return &q
}

// forget releases the exported series once the inventory stops listing
// (its namespace's credential went, or the leader stopped), which removes
// them unless another inventory still exports that place: the series are
// as many as the places listed now, not all there ever were.
func (w *quotaWatch) forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.exported.IsZero() {
		w.exports.release(w.exported)
		w.exported = neutron.Place{}
	}
}
