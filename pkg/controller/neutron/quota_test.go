package neutron

import (
	"slices"
	"testing"
)

// TestAQuotaIsNearlyFullAtNinetyPercentInUse: a quota is nearly full once
// used and reserved reach 90% of a positive limit, as the
// NetworkControllerNeutronQuotaNearlyFull alert says; no limit and a
// limit of 0 never are.
func TestAQuotaIsNearlyFullAtNinetyPercentInUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    Usage
		want bool
	}{
		{"8 of 10", Usage{Limit: 10, Used: 8}, false},
		{"9 of 10", Usage{Limit: 10, Used: 9}, true},
		{"10 of 10", Usage{Limit: 10, Used: 10}, true},
		{"reserved counts", Usage{Limit: 10, Used: 7, Reserved: 2}, true},
		{"4 of 5", Usage{Limit: 5, Used: 4}, false},
		{"5 of 5", Usage{Limit: 5, Used: 5}, true},
		{"over the limit", Usage{Limit: 5, Used: 7}, true},
		{"899 of 1000", Usage{Limit: 1000, Used: 899}, false},
		{"900 of 1000", Usage{Limit: 1000, Used: 900}, true},
		{"no limit", Usage{Limit: -1, Used: 1 << 20}, false},
		{"a limit of 0", Usage{Limit: 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.u.NearlyFull(); got != tc.want {
				t.Errorf("%+v NearlyFull() = %v, want %v", tc.u, got, tc.want)
			}
		})
	}
}

// TestNearlyFullNamesEachFullResourceInOrder: NearlyFull names the
// resources that are nearly full, in Resources' order, and none of a
// quota with room.
func TestNearlyFullNamesEachFullResourceInOrder(t *testing.T) {
	q := Unlimited
	if got := q.NearlyFull(); got != nil {
		t.Errorf("Unlimited.NearlyFull() = %v, want none", got)
	}
	q.Routers = Usage{Limit: 2, Used: 2}
	q.Networks = Usage{Limit: 10, Used: 9}
	q.Subnets = Usage{Limit: 100, Used: 50}
	want := []FullResource{{"networks", 9, 10}, {"routers", 2, 2}}
	if got := q.NearlyFull(); !slices.Equal(got, want) {
		t.Errorf("NearlyFull() = %v, want %v", got, want)
	}
}
