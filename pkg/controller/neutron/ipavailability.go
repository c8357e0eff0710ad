package neutron

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gophercloud/gophercloud/v2"
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

// AnsweredBadly reports whether err is Neutron's own failure to answer:
// it answered a server error (5xx), or an answer past MaxResponseBytes.
// Not a request refused before it was sent, nor an expired context.
func AnsweredBadly(err error) bool {
	var code gophercloud.ErrUnexpectedResponseCode
	var tooLarge *http.MaxBytesError
	return errors.As(err, &code) && code.Actual >= 500 || errors.As(err, &tooLarge)
}

// ListIPAvailabilities lists the address counts of the networks of the
// client's project (of every project the credential sees for the zero
// Place), a page at a time as ListNetworks does. The pages are followed by
// their next links (eachPage) with the client's page size, as the other lists are;
// neutron-server answers this collection in one page today, whatever the
// limit. The counts are decoded from Neutron's JSON numbers without going
// through float64 (gophercloud decodes pages with UseNumber).
//
// The list is one per place, shared by every namespace the place serves,
// and counts only decorate status: an entry that is no entry, or a count
// that is no count of addresses (countOf), loses its own counts and
// nothing else, instead of failing the list for everyone.
func (g *Gophercloud) ListIPAvailabilities(ctx context.Context, visit func([]NetworkIPs) error) error {
	q := url.Values{"limit": {strconv.Itoa(g.pageSize)}}
	if g.projectID != "" {
		q.Set("project_id", g.projectID)
	}
	pager := pagination.NewPager(g.client, g.client.ServiceURL("network-ip-availabilities")+"?"+q.Encode(),
		func(r pagination.PageResult) pagination.Page {
			return ipAvailabilityPage{pagination.LinkedPageBase{PageResult: r}}
		})
	err := eachPage(ctx, g.client, pager, func(page pagination.Page) error {
		entries, err := extractIPAvailabilities(page)
		if err != nil {
			return err
		}
		out := make([]NetworkIPs, 0, len(entries))
		for _, raw := range entries {
			if n, ok := networkIPsFrom(raw); ok {
				out = append(out, n)
			}
		}
		return visit(out)
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

// extractIPAvailabilities returns the page's entries undecoded: each is
// decoded alone (networkIPsFrom), so that one odd entry is that entry's
// loss. networkipavailabilities' types are not used: they fail the whole
// page on one count that is no integer.
func extractIPAvailabilities(page pagination.Page) ([]json.RawMessage, error) {
	var s struct {
		Availabilities []json.RawMessage `json:"network_ip_availabilities"`
	}
	err := page.(ipAvailabilityPage).ExtractInto(&s)
	return s.Availabilities, err
}

// networkIPsFrom decodes one entry of the list; ok is false when it is no
// entry. A subnet whose counts are no counts (countOf) is left out.
func networkIPsFrom(raw json.RawMessage) (_ NetworkIPs, ok bool) {
	var a struct {
		NetworkID string `json:"network_id"`
		Subnets   []struct {
			SubnetID string          `json:"subnet_id"`
			Total    json.RawMessage `json:"total_ips"`
			Used     json.RawMessage `json:"used_ips"`
		} `json:"subnet_ip_availability"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.NetworkID == "" {
		return NetworkIPs{}, false
	}
	out := NetworkIPs{NetworkID: a.NetworkID}
	for _, s := range a.Subnets {
		total, ok1 := countOf(s.Total)
		used, ok2 := countOf(s.Used)
		if ok1 && ok2 && s.SubnetID != "" {
			out.Subnets = append(out.Subnets, SubnetIPs{SubnetID: s.SubnetID, Total: total, Used: used})
		}
	}
	return out, true
}

// maxAddresses is how many addresses IPv6 has, 2^128: no subnet counts
// more, of either kind.
var maxAddresses = new(big.Int).Lsh(big.NewInt(1), 128)

// maxCountDigits is how many decimal digits maxAddresses has: a number
// sent longer is refused before big.Int parses it.
const maxCountDigits = 39

// countOf reads a count of addresses: a JSON integer from 0 to 2^128,
// written in decimal digits only (no sign, fraction, exponent or quotes).
func countOf(raw json.RawMessage) (*big.Int, bool) {
	if len(raw) == 0 || len(raw) > maxCountDigits {
		return nil, false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(string(raw), 10)
	if !ok || n.Cmp(maxAddresses) > 0 {
		return nil, false
	}
	return n, true
}

// ListIPAvailabilities implements Interface.
func (s *Session) ListIPAvailabilities(ctx context.Context, visit func([]NetworkIPs) error) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.ListIPAvailabilities(ctx, visit) })
	return err
}
