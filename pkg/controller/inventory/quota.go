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
type quotaWatch struct {
	mu sync.Mutex
	// latest is the latest quota read; nil before the first.
	latest *neutron.Quota
	// exported is the place whose series were set, zero for none.
	exported neutron.Place
}

// update reads client's quota and exports it, and reports whether what
// is nearly full (neutron.Quota.NearlyFull, figures included) differs
// from the read before, or this is the first read: the project's
// Networks have a condition to say again. It reads nothing when the
// client reads no quota (a plan's) or knows no project (a noauth
// Neutron). A read that fails keeps the last figures: Neutron's default
// policy lets a project's members read its quota, and an operator's
// policy that does not is no reason to fail the list.
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
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Reading the project's quota failed; its metrics and conditions keep the last figures", "err", err)
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range q.Resources() {
		metrics.SetNeutronQuota(place.Region, place.ProjectID, r.Resource, r.Limit, r.InUse())
	}
	w.exported = place
	changed = w.latest == nil || !slices.Equal(w.latest.NearlyFull(), q.NearlyFull())
	w.latest = &q
	return changed
}

// quota returns a copy of the latest quota read, nil before the first.
func (w *quotaWatch) quota() *neutron.Quota {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latest == nil {
		return nil
	}
	q := *w.latest
	return &q
}

// forget removes the exported series once the inventory stops listing
// (its namespace's credential went, or the leader stopped): the series
// are as many as the places listed now, not all there ever were.
func (w *quotaWatch) forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.exported.IsZero() {
		metrics.ForgetNeutronQuota(w.exported.Region, w.exported.ProjectID)
		w.exported = neutron.Place{}
	}
}
