package reconcile

import (
	"testing"

	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
)

// TestSubnetPools is the table of passes of ranges allocated from a subnet pool.
func TestSubnetPools(t *testing.T) {
	runPasses(t, []passCase{
		{
			name:        "a range from a pool: the pool is found, the subnet allocated in one request, and status says which range",
			network:     withSpec(newNetwork("", ""), func(s *samplecrdv1.NetworkSpec) { s.SubnetPool = "tenant-pool" }),
			seed:        func(f *neutronfake.Neutron) { f.AddSubnetPool("tenant-pool", 26, "10.100.0.0/16") },
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.FindSubnetPool, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				if st := f.network("net").Status; st.CIDR != "10.100.0.0/26" || st.Gateway != "10.100.0.1" {
					t.Errorf("status = %+v", st)
				}
			},
		},
		{
			name: "a duplicate from a pool (a create that completed after its answer was lost) is deleted; the subnet status names is kept",
			network: withSpec(provisioned(newNetwork("10.100.0.64/26", ""), seededNet, "subnet-3"), func(s *samplecrdv1.NetworkSpec) {
				s.CIDR, s.SubnetPool = "", "tenant-pool"
			}),
			seed: func(f *neutronfake.Neutron) {
				netID, _ := f.SeedOwned(ours, owner, "10.100.0.0/26", "10.100.0.1")
				f.AddSubnet(netID, ours.ResourceName(owner), ours.Description(), "10.100.0.64/26", "10.100.0.65")
			},
			wantNeutron: []string{neutronfake.DeleteSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired"},
			check: func(t *testing.T, f *fixture) {
				if subs := f.neutron.Subnets(); len(subs) != 1 || subs[0].ID != "subnet-3" {
					t.Errorf("Neutron holds %v", subs)
				}
			},
		},
		{
			name:        "a pool that does not exist is NeutronRejected, and no subnet is made",
			network:     withSpec(newNetwork("", ""), func(s *samplecrdv1.NetworkSpec) { s.SubnetPool = "no-such-pool" }),
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.FindSubnetPool},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Normal Created", "Warning NeutronRejected"},
		},
	})
}
