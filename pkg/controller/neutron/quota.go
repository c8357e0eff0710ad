package neutron

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
)

// Quota is what a project may hold of what the controller makes, and what
// it holds: Neutron's quota details.
type Quota struct {
	Networks, Subnets, Ports, Routers Usage
}

// Usage is one resource's quota: its limit (-1: none) and how many are
// used and reserved.
type Usage struct {
	Limit, Used, Reserved int
}

// InUse is how many count against the limit: the used and the reserved.
func (u Usage) InUse() int { return u.Used + u.Reserved }

// Exceeded reports whether n more would exceed the limit.
func (u Usage) Exceeded(n int) bool { return u.Limit >= 0 && u.InUse()+n > u.Limit }

// NearlyFullPercent is how much of a quota is in use when it is nearly
// full: a Network of the project says so (the QuotaNearlyFull condition),
// and NetworkControllerNeutronQuotaNearlyFull (artifacts/prometheus)
// fires at the same figure.
const NearlyFullPercent = 90

// NearlyFull reports whether at least NearlyFullPercent of a limit is in
// use. No limit (-1) is never full, and neither is a limit of 0, as in
// the alert: an operator who allows a project no routers has not filled
// anything.
func (u Usage) NearlyFull() bool { return u.Limit > 0 && u.InUse()*100 >= u.Limit*NearlyFullPercent }

// ResourceUsage is the quota of one resource, by Neutron's plural name.
type ResourceUsage struct {
	Resource string
	Usage
}

// Resources are q's quotas, one per resource, always in the same order.
func (q Quota) Resources() []ResourceUsage {
	return []ResourceUsage{{"networks", q.Networks}, {"subnets", q.Subnets}, {"ports", q.Ports}, {"routers", q.Routers}}
}

// FullResource is a resource whose quota is nearly full: how many are in
// use (used and reserved: a reservation that becomes a use is no change)
// of its limit.
type FullResource struct {
	Resource     string
	InUse, Limit int
}

// NearlyFull are q's quotas that are nearly full (Usage.NearlyFull), in
// Resources' order; nil when none is.
func (q Quota) NearlyFull() []FullResource {
	var full []FullResource
	for _, r := range q.Resources() {
		if r.NearlyFull() {
			full = append(full, FullResource{Resource: r.Resource, InUse: r.InUse(), Limit: r.Limit})
		}
	}
	return full
}

// Unlimited is a Quota that limits nothing: what a client that knows no
// project reads.
var Unlimited = Quota{Networks: Usage{Limit: -1}, Subnets: Usage{Limit: -1}, Ports: Usage{Limit: -1}, Routers: Usage{Limit: -1}}

// QuotaReader reads the quota of the client's project. The inventory
// asks it once per list (pkg/controller/inventory, quota.go), for the
// quota metrics and the QuotaNearlyFull condition; network-controller
// plan asks it to foresee a create that Neutron would refuse over quota.
type QuotaReader interface {
	Quota(ctx context.Context) (Quota, error)
}

var (
	_ QuotaReader = &Gophercloud{}
	_ QuotaReader = &Session{}
)

// Quota implements QuotaReader: GET /v2.0/quotas/{project}/details, which
// a project's own members may read. A client that knows no project (a
// noauth server) reads Unlimited, without a request.
func (g *Gophercloud) Quota(ctx context.Context) (Quota, error) {
	if g.projectID == "" {
		return Unlimited, nil
	}
	d, err := quotas.GetDetail(ctx, g.client, g.projectID).Extract()
	if err != nil {
		return Quota{}, classify("reading the quota of project "+g.projectID, err)
	}
	usage := func(q quotas.QuotaDetail) Usage { return Usage{Limit: q.Limit, Used: q.Used, Reserved: q.Reserved} }
	return Quota{Networks: usage(d.Network), Subnets: usage(d.Subnet), Ports: usage(d.Port), Routers: usage(d.Router)}, nil
}

// Quota implements QuotaReader.
func (s *Session) Quota(ctx context.Context) (Quota, error) {
	return call(ctx, s, func(g *Gophercloud) (Quota, error) { return g.Quota(ctx) })
}
