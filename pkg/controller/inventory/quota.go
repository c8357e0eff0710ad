package inventory

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// readQuota reads the quota of the project client lists in, once per
// successful list (never per sync), and exports it
// (network_controller_neutron_quota_limit and _used): how full the
// project is, whoever fills it, before a create is refused over it. It
// returns the place it exported, for forgetQuota; nothing when the client
// reads no quota (a plan's) or knows no project (a noauth Neutron). A
// read that fails leaves the last figures: Neutron's default policy lets
// a project's members read its quota, and an operator's policy that does
// not is no reason to fail the list.
func readQuota(ctx context.Context, client neutron.Interface) (neutron.Place, bool) {
	reader, ok := client.(neutron.QuotaReader)
	if !ok {
		return neutron.Place{}, false
	}
	place, err := client.Place(ctx)
	if err != nil || place.ProjectID == "" {
		return neutron.Place{}, false
	}
	q, err := reader.Quota(ctx)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Reading the project's quota failed; its metrics keep the last figures", "err", err)
		return place, true
	}
	for resource, u := range map[string]neutron.Usage{"networks": q.Networks, "subnets": q.Subnets, "ports": q.Ports, "routers": q.Routers} {
		metrics.SetNeutronQuota(place.Region, place.ProjectID, resource, u.Limit, u.Used+u.Reserved)
	}
	return place, true
}

// forgetQuota removes the series of place once the inventory stops
// listing it (its namespace's credential went, or the leader stopped):
// the series are as many as the places listed now, not all there ever
// were.
func forgetQuota(place neutron.Place) {
	metrics.ForgetNeutronQuota(place.Region, place.ProjectID)
}
