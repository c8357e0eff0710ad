package neutron

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/networkipavailabilities"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// IsForbidden reports whether err is Neutron's 403: the policy refuses the
// credentials what they asked (an administrator's API asked by a member).
func IsForbidden(err error) bool {
	var rejected *RejectedError
	if errors.As(err, &rejected) {
		return rejected.StatusCode == http.StatusForbidden
	}
	return gophercloud.ResponseCodeIs(err, http.StatusForbidden)
}

// ListIPAvailabilities lists the address counts of the networks of the
// client's project (of every project the credential sees for the zero
// Place), a page at a time as ListNetworks does. The pages are followed by
// their next links with the client's page size, as the other lists are;
// neutron-server answers this collection in one page today, whatever the
// limit. The counts are decoded from Neutron's JSON numbers without going
// through float64 (gophercloud decodes pages with UseNumber, and
// networkipavailabilities keeps them as decimal strings).
func (g *Gophercloud) ListIPAvailabilities(ctx context.Context, visit func([]NetworkIPs) error) error {
	q := url.Values{"limit": {strconv.Itoa(g.pageSize)}}
	if g.projectID != "" {
		q.Set("project_id", g.projectID)
	}
	pager := pagination.NewPager(g.client, g.client.ServiceURL("network-ip-availabilities")+"?"+q.Encode(),
		func(r pagination.PageResult) pagination.Page {
			return ipAvailabilityPage{pagination.LinkedPageBase{PageResult: r}}
		})
	err := pager.EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		as, err := extractIPAvailabilities(page)
		if err != nil {
			return false, err
		}
		out := make([]NetworkIPs, 0, len(as))
		for _, a := range as {
			n, err := networkIPsFrom(a)
			if err != nil {
				return false, err
			}
			out = append(out, n)
		}
		return true, visit(out)
	})
	if err != nil {
		return classify("listing network IP availabilities", err)
	}
	return nil
}

// ipAvailabilityPage is a page of network-ip-availabilities that follows
// Neutron's next link (network_ip_availabilities_links), which
// networkipavailabilities' single page does not.
type ipAvailabilityPage struct {
	pagination.LinkedPageBase
}

// NextPageURL implements pagination.Page.
func (p ipAvailabilityPage) NextPageURL() (string, error) {
	var s struct {
		Links []gophercloud.Link `json:"network_ip_availabilities_links"`
	}
	if err := p.ExtractInto(&s); err != nil {
		return "", err
	}
	return gophercloud.ExtractNextURL(s.Links)
}

// IsEmpty implements pagination.Page.
func (p ipAvailabilityPage) IsEmpty() (bool, error) {
	if p.StatusCode == http.StatusNoContent {
		return true, nil
	}
	as, err := extractIPAvailabilities(p)
	return len(as) == 0, err
}

func extractIPAvailabilities(page pagination.Page) ([]networkipavailabilities.NetworkIPAvailability, error) {
	var s struct {
		Availabilities []networkipavailabilities.NetworkIPAvailability `json:"network_ip_availabilities"`
	}
	err := page.(ipAvailabilityPage).ExtractInto(&s)
	return s.Availabilities, err
}

// networkIPsFrom reads a's counts, which networkipavailabilities decodes
// into decimal strings.
func networkIPsFrom(a networkipavailabilities.NetworkIPAvailability) (NetworkIPs, error) {
	out := NetworkIPs{NetworkID: a.NetworkID}
	for _, s := range a.SubnetIPAvailabilities {
		total, ok1 := new(big.Int).SetString(s.TotalIPs, 10)
		used, ok2 := new(big.Int).SetString(s.UsedIPs, 10)
		if !ok1 || !ok2 {
			return NetworkIPs{}, fmt.Errorf("subnet %s: total_ips %q, used_ips %q: %w", s.SubnetID, s.TotalIPs, s.UsedIPs, errNotACount)
		}
		out.Subnets = append(out.Subnets, SubnetIPs{SubnetID: s.SubnetID, Total: total, Used: used})
	}
	return out, nil
}

// errNotACount is a count Neutron sent that is no integer.
var errNotACount = errors.New("not an integer count of addresses")

// ListIPAvailabilities implements Interface.
func (s *Session) ListIPAvailabilities(ctx context.Context, visit func([]NetworkIPs) error) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.ListIPAvailabilities(ctx, visit) })
	return err
}
