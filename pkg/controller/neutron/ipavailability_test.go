package neutron

import (
	"context"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestIPAvailabilitiesDecodeWithoutLoss specifies the client's list of
// network-ip-availabilities: the counts of an IPv6 /64, past int64 and
// past what float64 holds exactly, arrive to the last digit; the list is
// narrowed to the client's project and follows Neutron's next link as the
// other lists do; Neutron's 403 (a member) and 404 (no extension) are
// told apart from other failures.
func TestIPAvailabilitiesDecodeWithoutLoss(t *testing.T) {
	const (
		// A /64 with the gateway on ::1: ::2 to the last address.
		total64 = "18446744073709551614"
		free64  = "18446744073709551611"
	)
	var (
		mu      sync.Mutex
		queries []string
		status  = http.StatusOK
	)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		code := status
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if code != http.StatusOK {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(`{"NeutronError": {"type": "PolicyNotAuthorized", "message": "rule:get_network_ip_availability is disallowed by policy"}}`))
			return
		}
		if r.URL.Query().Get("marker") == "" {
			_, _ = w.Write([]byte(`{"network_ip_availabilities": [{"network_id": "net-1", "subnet_ip_availability": [
				{"subnet_id": "v4", "cidr": "10.0.0.0/24", "ip_version": 4, "total_ips": 253, "used_ips": 2},
				{"subnet_id": "v6", "cidr": "fd00::/64", "ip_version": 6, "total_ips": ` + total64 + `, "used_ips": 3}],
				"total_ips": 18446744073709551867, "used_ips": 5}],
				"network_ip_availabilities_links": [{"rel": "next", "href": "` + srv.URL + `/v2.0/network-ip-availabilities?limit=1000&marker=net-1&project_id=project-a"}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"network_ip_availabilities": [{"network_id": "net-2", "subnet_ip_availability": [], "total_ips": 0, "used_ips": 0}]}`))
	}))
	defer srv.Close()
	client, err := NewNoAuthServiceClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGophercloud(client, Place{AuthURL: "https://keystone/v3", ProjectID: "project-a"})

	var got []NetworkIPs
	if err := g.ListIPAvailabilities(context.Background(), func(page []NetworkIPs) error {
		got = append(got, page...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].NetworkID != "net-1" || got[1].NetworkID != "net-2" || len(got[0].Subnets) != 2 {
		t.Fatalf("listed %+v, want net-1 with two subnets and, from the next page, net-2", got)
	}
	v4, v6 := got[0].Subnets[0], got[0].Subnets[1]
	if v4.Total.String() != "253" || v4.Used.String() != "2" || v4.Free().String() != "251" {
		t.Errorf("the /24: total %s used %s free %s, want 253, 2, 251", v4.Total, v4.Used, v4.Free())
	}
	if v6.Total.String() != total64 || v6.Free().String() != free64 {
		t.Errorf("the /64: total %s free %s, want %s and %s exactly", v6.Total, v6.Free(), total64, free64)
	}
	if q := queries[0]; !strings.Contains(q, "project_id=project-a") || !strings.Contains(q, "limit=") {
		t.Errorf("the first page was asked with %q, want the project and a page size", q)
	}

	tests := []struct {
		code                  int
		forbidden, notFound   bool
		unreachableNotRefused bool
	}{
		{code: http.StatusForbidden, forbidden: true},
		{code: http.StatusNotFound, notFound: true},
		{code: http.StatusInternalServerError, unreachableNotRefused: true},
	}
	for _, tt := range tests {
		mu.Lock()
		status = tt.code
		mu.Unlock()
		err := g.ListIPAvailabilities(context.Background(), func([]NetworkIPs) error { return nil })
		if IsForbidden(err) != tt.forbidden || IsNotFound(err) != tt.notFound || Unreachable(err) != tt.unreachableNotRefused {
			t.Errorf("HTTP %d: err %v: forbidden %t, not found %t, unreachable %t", tt.code, err, IsForbidden(err), IsNotFound(err), Unreachable(err))
		}
	}
}

// TestAFreeCountIsNeverNegative: Neutron counts a port on an address
// outside the pools (a router on the gateway) as used, not in the total.
func TestAFreeCountIsNeverNegative(t *testing.T) {
	s := SubnetIPs{Total: bigOf(t, "1"), Used: bigOf(t, "2")}
	if s.Free().Sign() != 0 {
		t.Errorf("free = %s, want 0", s.Free())
	}
}

func bigOf(t *testing.T, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("%q is no integer", s)
	}
	return n
}
