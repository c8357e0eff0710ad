package neutron

import (
	"net/netip"
	"reflect"
	"testing"
)

func TestDefaultAllocationPoolsAreNeutrons(t *testing.T) {
	pool := func(start, end string) AllocationPool { return AllocationPool{Start: start, End: end} }
	tests := []struct {
		name, cidr, gateway string
		want                []AllocationPool
	}{
		{"IPv4 gateway first: one pool after it", "192.168.0.0/16", "192.168.0.1",
			[]AllocationPool{pool("192.168.0.2", "192.168.255.254")}},
		{"IPv4 gateway last: one pool before it", "10.0.0.0/24", "10.0.0.254",
			[]AllocationPool{pool("10.0.0.1", "10.0.0.253")}},
		{"IPv4 gateway inside: two pools around it", "10.0.0.0/24", "10.0.0.100",
			[]AllocationPool{pool("10.0.0.1", "10.0.0.99"), pool("10.0.0.101", "10.0.0.254")}},
		{"IPv4 without a gateway: the whole host range", "10.0.0.0/24", "",
			[]AllocationPool{pool("10.0.0.1", "10.0.0.254")}},
		{"IPv6 keeps the last address", "fd00:10::/64", "fd00:10::1",
			[]AllocationPool{pool("fd00:10::2", "fd00:10::ffff:ffff:ffff:ffff")}},
		{"IPv6 without a gateway", "fd00:10::/120", "",
			[]AllocationPool{pool("fd00:10::1", "fd00:10::ff")}},
		{"a /31 has no host range", "10.0.0.0/31", "10.0.0.1", nil},
		{"a /30 with its gateway first leaves one address", "10.0.0.4/30", "10.0.0.5",
			[]AllocationPool{pool("10.0.0.6", "10.0.0.6")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw, _ := netip.ParseAddr(tc.gateway)
			got := DefaultAllocationPools(netip.MustParsePrefix(tc.cidr), gw)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DefaultAllocationPools(%s, %s) = %v, want %v", tc.cidr, tc.gateway, got, tc.want)
			}
		})
	}
}
