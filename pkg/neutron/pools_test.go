package neutron

import (
	"reflect"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

func TestAllocationPoolsLeaveOutTheGateway(t *testing.T) {
	pool := func(start, end string) subnets.AllocationPool { return subnets.AllocationPool{Start: start, End: end} }
	tests := []struct {
		name, cidr, gateway string
		want                []subnets.AllocationPool
	}{
		{"IPv4 gateway first: one pool after it", "192.168.0.0/16", "192.168.0.1",
			[]subnets.AllocationPool{pool("192.168.0.2", "192.168.255.254")}},
		{"IPv4 gateway last: one pool before it", "10.0.0.0/24", "10.0.0.254",
			[]subnets.AllocationPool{pool("10.0.0.1", "10.0.0.253")}},
		{"IPv4 gateway inside: two pools around it", "10.0.0.0/24", "10.0.0.100",
			[]subnets.AllocationPool{pool("10.0.0.1", "10.0.0.99"), pool("10.0.0.101", "10.0.0.254")}},
		{"IPv6 keeps the last address", "fd00:10::/64", "fd00:10::1",
			[]subnets.AllocationPool{pool("fd00:10::2", "fd00:10::ffff:ffff:ffff:ffff")}},
		{"a /31 has no host address besides the gateway", "10.0.0.0/31", "10.0.0.1", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AllocationPools(tc.cidr, tc.gateway)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("AllocationPools(%s, %s) = %v, want %v", tc.cidr, tc.gateway, got, tc.want)
			}
		})
	}
}
