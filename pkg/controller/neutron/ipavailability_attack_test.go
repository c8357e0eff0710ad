package neutron

import (
	"context"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnOddCountLosesItsSubnetNotTheList specifies what the client makes
// of a network-ip-availabilities answer that no Neutron should send: a
// count that is no integer, negative, or past every address IPv6 has
// (2^128), or an entry that is no entry, loses that subnet's (or that
// entry's) counts, and nothing else. The list is one per place, shared by
// every namespace the place serves: one odd entry, of a network of
// whoever, must not fail it for all of them.
func TestAnOddCountLosesItsSubnetNotTheList(t *testing.T) {
	huge := strings.Repeat("9", 400)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"network_ip_availabilities": [
			{"network_id": "someone-elses", "subnet_ip_availability": [{"subnet_id": "frac", "total_ips": 1.5, "used_ips": 0}]},
			{"network_id": "not-an-entry", "subnet_ip_availability": "nope"},
			{"network_id": "ours", "subnet_ip_availability": [
				{"subnet_id": "ok", "total_ips": 253, "used_ips": 2},
				{"subnet_id": "negative", "total_ips": 253, "used_ips": -40},
				{"subnet_id": "huge", "total_ips": ` + huge + `, "used_ips": 1},
				{"subnet_id": "exponent", "total_ips": 1e3, "used_ips": 1},
				{"subnet_id": "quoted", "total_ips": "253", "used_ips": "x"},
				{"subnet_id": "all-of-v6", "total_ips": 340282366920938463463374607431768211456, "used_ips": 0}]}]}`))
	}))
	defer srv.Close()
	client, err := NewNoAuthServiceClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGophercloud(client, Place{})

	var got []NetworkIPs
	if err := g.ListIPAvailabilities(context.Background(), func(page []NetworkIPs) error {
		got = append(got, page...)
		return nil
	}); err != nil {
		t.Fatalf("one odd entry failed the whole list: %v", err)
	}
	counted := map[string]SubnetIPs{}
	for _, n := range got {
		for _, s := range n.Subnets {
			counted[s.SubnetID] = s
		}
	}
	if ok, found := counted["ok"]; !found || ok.Total.Cmp(big.NewInt(253)) != 0 || ok.Used.Cmp(big.NewInt(2)) != 0 {
		t.Errorf("the well-formed subnet's counts = %+v (found %t), want 253 and 2", ok, found)
	}
	if _, found := counted["all-of-v6"]; !found {
		t.Errorf("a count of every IPv6 address (2^128) was dropped, want it kept")
	}
	for _, odd := range []string{"frac", "negative", "huge", "exponent", "quoted"} {
		if s, found := counted[odd]; found {
			t.Errorf("subnet %q kept counts total %s used %s, want none", odd, s.Total, s.Used)
		}
	}
}
