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

// Exceeded reports whether n more would exceed the limit.
func (u Usage) Exceeded(n int) bool { return u.Limit >= 0 && u.Used+u.Reserved+n > u.Limit }

// Unlimited is a Quota that limits nothing: what a client that knows no
// project reads.
var Unlimited = Quota{Networks: Usage{Limit: -1}, Subnets: Usage{Limit: -1}, Ports: Usage{Limit: -1}, Routers: Usage{Limit: -1}}

// QuotaReader reads the quota of the client's project. It is asked only by
// network-controller plan, which foresees a create that Neutron would
// refuse over quota; the controller learns it from Neutron's refusal.
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
