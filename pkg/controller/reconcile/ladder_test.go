package reconcile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestLostAnswersPauseWritesUntilAListShowsWhatHappened: Neutron completes
// creates whose answers the controller never got. The Network's next pass
// makes no request and says why, and the list begun after shows the late
// creates: they are used, not made again.
func TestLostAnswersPauseWritesUntilAListShowsWhatHappened(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	probe := func() {
		t.Helper()
		f.listAfterTheGrace()
		if err := f.inv.Health().Down; err != nil {
			t.Fatalf("the breaker is open after a successful list: %v", err)
		}
	}

	f.neutron.CompleteLate(neutronfake.CreateNetwork)
	if out := f.sync("net"); out.Err == nil {
		t.Fatal("the pass whose create answer was lost succeeded")
	}
	if out := f.sync("net"); !errors.Is(out.Err, inventory.ErrListPending) {
		t.Fatalf("a pass before a list showed what the lost create did returned %v, want ErrListPending", out.Err)
	}
	if cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady); cond.Reason != samplecrdv1.ReasonNeutronUnavailable {
		t.Errorf("Ready = %s: %s", cond.Reason, cond.Message)
	}
	probe()
	f.neutron.CompleteLate(neutronfake.CreateSubnet)
	if out := f.sync("net"); out.Err == nil {
		t.Fatal("the pass whose subnet answer was lost succeeded")
	}
	probe()
	if out := f.sync("net"); out.Err != nil {
		t.Fatal(out.Err)
	}
	if got := f.neutron.Requests(); !slices.Equal(got, []string{
		neutronfake.CreateNetwork,                                                                                    // completed late
		neutronfake.ListNetworks, neutronfake.ListSubnets, neutronfake.ListRouters, neutronfake.ListIPAvailabilities, // the probe: the network is there
		neutronfake.CreateSubnet,                                                                                     // completed late
		neutronfake.ListNetworks, neutronfake.ListSubnets, neutronfake.ListRouters, neutronfake.ListIPAvailabilities, // the probe: the subnet is there
	}) {
		t.Errorf("Neutron requests = %q", got)
	}
	st := f.network("net").Status
	if n, s := f.neutron.Networks(), f.neutron.Subnets(); len(n) != 1 || len(s) != 1 || n[0].ID != st.NetworkID || s[0].ID != st.SubnetID {
		t.Errorf("Neutron holds %+v and %+v; status names %s/%s", n, s, st.NetworkID, st.SubnetID)
	}
}

// TestLateSubnetFoundOnOverlapRefusal: a subnet create completes after the
// list that closed the breaker began. The retry is refused as an overlap,
// and the reconciler finds its own subnet, carrying its mark, instead of
// failing.
func TestLateSubnetFoundOnOverlapRefusal(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	client := &staleSubnets{Neutron: f.neutron}
	f.connect(client, defaultOptions(), nil)
	f.neutron.CompleteLate(neutronfake.CreateSubnet)
	if out := f.sync("net"); out.Err == nil {
		t.Fatal("the pass whose subnet answer was lost succeeded")
	}
	// The list that closes the breaker read the subnets before the late
	// create completed.
	client.stale = true
	f.listAfterTheGrace()
	f.neutron.ClearRequests()
	if out := f.sync("net"); out.Err != nil {
		t.Fatal(out.Err)
	}
	if got := f.neutron.Requests(); !slices.Equal(got, []string{neutronfake.CreateSubnet, neutronfake.SubnetsOf}) {
		t.Errorf("Neutron requests = %q, want the refused create and one read", got)
	}
	if s := f.neutron.Subnets(); len(s) != 1 || s[0].ID != f.network("net").Status.SubnetID {
		t.Errorf("subnets %+v", s)
	}
}

// TestTheLongestNamesBecomeReady: a 253-character Network in a
// 63-character namespace has Neutron names within Neutron's limit, which
// still name it.
func TestTheLongestNamesBecomeReady(t *testing.T) {
	n := newNetwork("192.168.0.0/16", "192.168.0.1")
	n.Namespace, n.Name = strings.Repeat("n", 63), strings.Repeat("a", 253)
	f := newFixture(t, n, nil)
	if out := f.syncIn(n.Namespace, n.Name); out.Err != nil {
		t.Fatal(out.Err)
	}
	for _, net := range f.neutron.Networks() {
		if len(net.Name) > neutron.MaxNameLength || !strings.HasPrefix(net.Name, n.Namespace+"/aaaa") {
			t.Errorf("network name %q (%d characters)", net.Name, len(net.Name))
		}
	}
	if got := len(f.neutron.Subnets()); got != 1 {
		t.Errorf("%d subnets", got)
	}
}

// TestOverQuotaBecomesReadyOnceRaised: nobody touches the Network; the
// backoff retry finds the raised quota.
func TestOverQuotaBecomesReadyOnceRaised(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), func(n *neutronfake.Neutron) { n.SetNetworkQuota(0) })
	if out := f.sync("net"); out.Requeue != AddRateLimited {
		t.Fatalf("over quota: requeue %v (%v), want AddRateLimited", out.Requeue, out.Err)
	}
	f.neutron.SetNetworkQuota(10)
	if out := f.sync("net"); out.Err != nil {
		t.Fatalf("after the quota was raised: %v", out.Err)
	}
	if cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady); cond.Reason != samplecrdv1.ReasonProvisioned {
		t.Errorf("Ready = %s/%s", cond.Status, cond.Reason)
	}
}

// TestEventWording pins the words of the Event a person reads first, the
// one that names what was made. It is the one test that asserts on an
// Event's wording; the others assert on its type and reason.
func TestEventWording(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	out := f.sync("net")
	want := []Event{{Type: "Normal", Reason: "Created", Message: "Created Neutron network net-1 with subnet subnet-2 (192.168.0.0/16, gateway 192.168.0.1)"}}
	if !slices.Equal(out.Events, want) {
		t.Errorf("events = %+v, want %+v", out.Events, want)
	}
}

// staleSubnets lists no subnets while stale: a list read before a late
// create completed.
type staleSubnets struct {
	*neutronfake.Neutron
	stale bool
}

func (s *staleSubnets) ListSubnets(ctx context.Context, description string, visit func([]neutron.Subnet) error) error {
	if s.stale {
		return s.Neutron.ListSubnets(ctx, description, func([]neutron.Subnet) error { return nil })
	}
	return s.Neutron.ListSubnets(ctx, description, visit)
}

// TestLadder is the table of passes of the ladder: create, update in place, drift and refusals.
func TestLadder(t *testing.T) {
	runPasses(t, []passCase{
		{
			name:        "a new Network gets a network and a subnet marked as ours in the create requests, then Ready",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				n := f.network("net")
				if n.Status.NetworkID != "net-1" || n.Status.SubnetID != "subnet-2" || n.Status.ObservedGeneration != 1 {
					t.Errorf("status = %+v", n.Status)
				}
				net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
				for _, got := range [][2]string{{net.Name, net.Description}, {sub.Name, sub.Description}} {
					if o, ok := ours.OwnerOf(got[0], got[1]); !ok || o.UID != testUID {
						t.Errorf("created %q / %q: not recognisable as this Network's", got[0], got[1])
					}
				}
			},
		},
		{
			name:      "an in-sync Network costs no Neutron request",
			network:   provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed:      inSync("192.168.0.0/16", "192.168.0.1"),
			wantReady: "True/Provisioned",
		},
		{
			name: "a new gateway moves the subnet's gateway in one request and records the new generation",
			network: func() *samplecrdv1.Network {
				n := provisioned(newNetwork("192.168.0.0/16", "192.168.0.254"), seededNet, seededSubnet)
				n.Generation = 2
				return n
			}(),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.UpdateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Updated"},
			check: func(t *testing.T, f *fixture) {
				if got := f.neutron.Subnets()[0].GatewayIP; got != "192.168.0.254" {
					t.Errorf("Neutron gateway = %s", got)
				}
				if got := f.network("net").Status.ObservedGeneration; got != 2 {
					t.Errorf("observedGeneration = %d, want 2", got)
				}
			},
		},
		{
			name:        "every option goes into the two create requests; none needs an update afterwards",
			network:     withSpec(newNetwork("192.168.0.0/16", ""), everyOption),
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
				if net.MTU != 1400 || sub.GatewayIP != "192.168.0.1" || sub.EnableDHCP ||
					!slices.Equal(sub.DNSNameservers, []string{"192.168.0.53", "192.168.0.54"}) || len(sub.HostRoutes) != 1 ||
					!slices.Equal(sub.AllocationPools, []neutron.AllocationPool{{Start: "192.168.1.10", End: "192.168.1.99"}}) {
					t.Errorf("Neutron holds %+v and %+v", net, sub)
				}
				st := f.network("net").Status
				if st.MTU != 1400 || st.Gateway != "192.168.0.1" || st.CIDR != "192.168.0.0/16" || st.NeutronStatus != "ACTIVE" ||
					!slices.Equal(st.AllocationPools, []samplecrdv1.AllocationPool{{Start: "192.168.1.10", End: "192.168.1.99"}}) {
					t.Errorf("status does not say what Neutron holds: %+v", st)
				}
			},
		},
		{
			name:        "a left-out gateway is the first host, and noGateway is none",
			network:     withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) { s.NoGateway = true }),
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				if sub := f.neutron.Subnets()[0]; sub.GatewayIP != "" ||
					!slices.Equal(sub.AllocationPools, []neutron.AllocationPool{{Start: "10.0.0.1", End: "10.0.0.254"}}) {
					t.Errorf("Neutron holds %+v", sub)
				}
			},
		},
		{
			name: "changed DNS, routes and DHCP go in one subnet update, the MTU in one network update; the IDs stay",
			network: withSpec(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet), func(s *samplecrdv1.NetworkSpec) {
				s.DNSNameservers = []string{"192.168.0.53"}
				s.HostRoutes = []samplecrdv1.HostRoute{{Destination: "10.0.0.0/8", NextHop: "192.168.0.254"}}
				s.EnableDHCP = ptr.To(false)
				s.MTU = ptr.To[int32](1300)
			}),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.GetNetwork, neutronfake.UpdateNetwork},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Updated", "Normal Updated"},
			check: func(t *testing.T, f *fixture) {
				st := f.network("net").Status
				if st.NetworkID != seededNet || st.SubnetID != seededSubnet || st.MTU != 1300 {
					t.Errorf("status = %+v", st)
				}
				if sub := f.neutron.Subnets()[0]; sub.EnableDHCP || len(sub.DNSNameservers) != 1 || len(sub.HostRoutes) != 1 {
					t.Errorf("Neutron holds %+v", sub)
				}
			},
		},
		{
			name: "pools Neutron would refuse: Ready=False InvalidSpec, a Warning, no request, no retry",
			network: withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) {
				s.AllocationPools = []samplecrdv1.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.20", End: "10.0.0.30"}}
			}),
			wantErr:    "invalid",
			wantReady:  "False/InvalidSpec",
			wantEvents: []string{"Warning InvalidSpec"},
		},
		{
			name:        "an MTU Neutron refuses is NeutronRejected, with Neutron's words",
			network:     withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) { s.MTU = ptr.To[int32](9000) }),
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Warning NeutronRejected"},
		},
		{
			name:        "Neutron unavailable: Ready=False NeutronUnavailable and a retry with backoff",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			failOn:      map[string]error{neutronfake.CreateNetwork: errUnavailable},
			wantErr:     "backoff",
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronUnavailable",
			wantEvents:  []string{"Warning NeutronUnavailable"},
		},
		{
			name:    "a range that overlaps another tool's subnet, where Neutron refuses overlapping IPs: CIDRConflict in the controller's words, retried only later",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed: func(f *neutronfake.Neutron) {
				f.RefuseOverlappingIPs()
				f.AddSubnet(f.AddNetwork("someone-elses", ""), "someone-elses", "", "192.168.10.0/24", "192.168.10.1")
			},
			wantErr: "retry-after",
			// On an overlap the network's subnets are read once, in case
			// the overlapping subnet is a late create of our own.
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet, neutronfake.SubnetsOf},
			wantReady:   "False/CIDRConflict",
			wantEvents:  []string{"Normal Created", "Warning CIDRConflict"},
			check: func(t *testing.T, f *fixture) {
				if got := f.network("net").Status.NetworkID; got != "net-3" {
					t.Errorf("status.networkID = %q: the network that was made must be recorded", got)
				}
				if len(f.neutron.Subnets()) != 1 {
					t.Errorf("subnets = %+v, want only the other tool's", f.neutron.Subnets())
				}
			},
		},
		{
			name:        "Neutron over quota: NeutronQuotaExceeded with Neutron's words, retried with (capped) backoff, not latched",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        func(f *neutronfake.Neutron) { f.SetNetworkQuota(0) },
			wantErr:     "backoff",
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronQuotaExceeded",
			wantEvents:  []string{"Warning NeutronQuotaExceeded"},
		},
		{
			name:    "an invalid request: NeutronRejected, retried only later",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			failOn: map[string]error{neutronfake.CreateNetwork: neutron.ErrorForResponse("creating network", 400, "InvalidInput",
				"Invalid input for description.")},
			wantErr:     "retry-after",
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Warning NeutronRejected"},
		},
		{
			name:    "a duplicate network (a create that completed after its answer was lost) is deleted; the one status names is kept",
			network: provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				f.AddNetwork(ours.ResourceName(owner), ours.Description())
			},
			wantNeutron: []string{neutronfake.DeleteNetwork}, // as the list read it: onto its revision
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired"},
			check: func(t *testing.T, f *fixture) {
				if n := f.neutron.Networks(); len(n) != 1 || n[0].ID != seededNet {
					t.Errorf("networks = %+v, want only %s", n, seededNet)
				}
			},
		},
		{
			name:        "a new Network beside other tools', other clusters' and look-alikes touches none of them",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        seedForeign,
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check:       untouched,
		},
		{
			name:    "a subnet whose range was changed behind our back is replaced, and the Event says what was created",
			network: provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed:    inSync("10.9.0.0/16", "10.9.0.1"),
			// The ports are read first: a subnet ports use is not deleted.
			wantNeutron: []string{neutronfake.PortsOf, neutronfake.DeleteSubnet, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired", "Normal Created"},
		},
		{
			name:        "a network deleted behind our back is made again, and the Events say so",
			network:     provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), "net-gone", "subnet-gone"),
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired", "Normal Created"},
		},
		{
			name:    "resources of an earlier Network of the same name are not the new one's: it makes its own",
			network: newNetwork("10.1.0.0/16", "10.1.0.1"),
			seed: func(f *neutronfake.Neutron) {
				f.SeedOwned(ours, neutron.Owner{Namespace: "default", Name: "net", UID: otherUID}, "192.168.0.0/16", "192.168.0.1")
			},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
		},
	})
}

// TestCredentialsOfAnotherProjectChangeNothing: credentials changed to
// another project's reach an inventory that holds nothing of the Network.
// Neither a sync nor a delete may act on that: the sync would make a
// second network there, the delete would confirm at once and leave the
// first network behind in its project.
func TestCredentialsOfAnotherProjectChangeNothing(t *testing.T) {
	inProjectA := inPlace("project-a", "")
	nowProjectB := func(f *neutronfake.Neutron) { f.SetProject("project-b") }
	runPasses(t, []passCase{
		{
			name:       "a sync: CredentialsUnavailable naming both projects, nothing asked of Neutron",
			network:    inProjectA(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:       nowProjectB,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				msg := f.network("net").Status.Conditions[0].Message
				if !strings.Contains(msg, "project-a") || !strings.Contains(msg, "project-b") {
					t.Errorf("message %q does not name both projects", msg)
				}
				if len(f.neutron.Networks()) != 0 {
					t.Errorf("made in the other project: %+v", f.neutron.Networks())
				}
			},
		},
		{
			name:       "a delete that finds nothing: the finalizer stays",
			network:    inProjectA(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))),
			seed:       nowProjectB,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released though the network is in a project these credentials do not reach")
				}
			},
		},
		{
			name:    "the controller's clouds.yaml swapped to B after A was listed: a delete sends nothing, and the finalizer stays",
			network: inProjectA(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))),
			seed: func(f *neutronfake.Neutron) {
				f.SetProject("project-a")
				inSync("192.168.0.0/16", "192.168.0.1")(f)
			},
			afterList:  nowProjectB,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released while the network is in a project the credentials no longer reach")
				}
				if len(f.neutron.Networks()) != 1 || len(f.neutron.Subnets()) != 1 {
					t.Errorf("project A's network or subnet is gone: %+v %+v", f.neutron.Networks(), f.neutron.Subnets())
				}
				if !f.inv.ListDue() {
					t.Error("no list of the new project was asked for")
				}
			},
		},
		{
			name:        "a new Network whose credentials name a project: the whole place is stored before anything is made in it, in the same pass",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        func(f *neutronfake.Neutron) { f.SetProject("project-a"); f.SetRegion("region-1") },
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				want := samplecrdv1.Place{AuthURL: neutronfake.FakeAuthURL, Region: "region-1", Interface: "public", ProjectID: "project-a"}
				if got := f.network("net").Status.Place; got == nil || *got != want {
					t.Errorf("status.place = %+v, want %+v", got, want)
				}
				recordedBeforeAnyWrite(t, f)
			},
		},
		{
			name:        "its place already recorded (a crash after the record): the pass makes the network and subnet, and records nothing again",
			network:     inProjectA(newNetwork("192.168.0.0/16", "192.168.0.1")),
			seed:        func(f *neutronfake.Neutron) { f.SetProject("project-a") },
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
		},
		{
			name:    "its project recorded and the subnet refused: a Secret pointed at B later makes nothing there",
			network: inProjectA(newNetwork("192.168.0.0/16", "192.168.0.1")),
			seed: func(f *neutronfake.Neutron) {
				f.SetProject("project-a")
				f.FailOn(neutronfake.CreateSubnet, neutron.ErrorForResponse(neutronfake.CreateSubnet, 409, "OverQuota", "Quota exceeded for resources: ['subnet']."))
			},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantErr:     "backoff",
			wantReady:   "False/NeutronQuotaExceeded",
			wantEvents:  []string{"Normal Created", "Warning NeutronQuotaExceeded"},
			check: func(t *testing.T, f *fixture) {
				f.neutron.SetProject("project-b")
				f.neutron.FailOn(neutronfake.CreateSubnet, nil)
				f.list()
				f.neutron.ClearRequests()
				f.sync("net")
				if reqs := f.neutron.Requests(); len(reqs) != 0 {
					t.Errorf("asked of project B: %q", reqs)
				}
				if st := f.network("net").Status; st.Place == nil || st.Place.ProjectID != "project-a" || st.NetworkID == "" {
					t.Errorf("status = %+v, want project-a's network recorded", st)
				}
			},
		},
		{
			name:        "the same project: a network deleted by hand is made again",
			network:     inProjectA(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:        func(f *neutronfake.Neutron) { f.SetProject("project-a") },
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired", "Normal Created"},
		},
	})
}

// inPlace records in a Network's status that its resources are in project
// of region, of the fake's Keystone, as the ladder records it.
func inPlace(project, region string) func(*samplecrdv1.Network) *samplecrdv1.Network {
	return func(n *samplecrdv1.Network) *samplecrdv1.Network {
		n.Status.ProjectID = project
		n.Status.Place = &samplecrdv1.Place{AuthURL: neutronfake.FakeAuthURL, Region: region, Interface: "public", ProjectID: project}
		return n
	}
}

// TestCredentialsOfAnotherRegionChangeNothing: the same project, reached
// in another region (a clouds.yaml's region_name changed), is another
// Neutron, which holds nothing of the Network and answers 404 for its IDs.
// A sync must not make a second network there, nor a delete count the 404
// as done; both wait, naming both places. A Network made before places
// were recorded gets its whole place recorded by its next pass, before
// anything else.
func TestCredentialsOfAnotherRegionChangeNothing(t *testing.T) {
	inRegion1 := inPlace("project-a", "region-1")
	nowRegion2 := func(f *neutronfake.Neutron) { f.SetRegion("region-2") }
	seedRegion1 := func(f *neutronfake.Neutron) {
		f.SetProject("project-a")
		f.SetRegion("region-1")
		inSync("192.168.0.0/16", "192.168.0.1")(f)
	}
	// movedToRegion2 seeds region 1, then moves the credentials to region
	// 2, where the fixture's first list runs.
	movedToRegion2 := func(f *neutronfake.Neutron) { seedRegion1(f); nowRegion2(f) }
	namesBothRegions := func(t *testing.T, f *fixture) {
		t.Helper()
		msg := f.network("net").Status.Conditions[0].Message
		if !strings.Contains(msg, `"region-1"`) || !strings.Contains(msg, `"region-2"`) {
			t.Errorf("message %q does not name both regions", msg)
		}
	}
	runPasses(t, []passCase{
		{
			name:       "a sync, region 2 listed: CredentialsUnavailable naming both places, and nothing asked of region 2",
			network:    inRegion1(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:       movedToRegion2,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check:      namesBothRegions,
		},
		{
			name:       "a delete, region 2 listed: the 404 of region 2 is not a delete, and the finalizer stays",
			network:    inRegion1(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))),
			seed:       movedToRegion2,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released while the network is in a region the credentials no longer reach")
				}
				namesBothRegions(t, f)
				f.neutron.SetRegion("region-1")
				if len(f.neutron.Networks()) != 1 || len(f.neutron.Subnets()) != 1 {
					t.Errorf("region 1's network or subnet is gone: %+v %+v", f.neutron.Networks(), f.neutron.Subnets())
				}
			},
		},
		{
			name:       "a delete, region 1 listed before the switch: nothing sent, and the finalizer stays",
			network:    inRegion1(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet))),
			seed:       seedRegion1,
			afterList:  nowRegion2,
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) || !f.inv.ListDue() {
					t.Error("finalizer released, or no list of the new region asked for")
				}
				namesBothRegions(t, f)
			},
		},
		{
			name: "a Network made before places were recorded: its next pass stores the whole place first, and goes on",
			network: func() *samplecrdv1.Network {
				n := provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
				n.Status.ProjectID = "project-a"
				return n
			}(),
			seed:      seedRegion1,
			wantReady: "True/Provisioned",
			check: func(t *testing.T, f *fixture) {
				want := samplecrdv1.Place{AuthURL: neutronfake.FakeAuthURL, Region: "region-1", Interface: "public", ProjectID: "project-a"}
				if got := f.network("net").Status.Place; got == nil || *got != want {
					t.Errorf("status.place = %+v, want %+v", got, want)
				}
				if st := f.network("net").Status; st.NetworkID != seededNet || st.SubnetID != seededSubnet {
					t.Errorf("status = %+v: the record dropped what status said", st)
				}
				recordedBeforeAnyWrite(t, f)
			},
		},
		{
			name: "a Network made before places were recorded, whose credentials now reach another project: nothing recorded, nothing made",
			network: func() *samplecrdv1.Network {
				n := newNetwork("192.168.0.0/16", "192.168.0.1")
				n.Status.ProjectID = "project-b"
				return n
			}(),
			seed:       func(f *neutronfake.Neutron) { f.SetProject("project-a") },
			wantErr:    "backoff",
			wantReady:  "False/CredentialsUnavailable",
			wantEvents: []string{"Warning CredentialsUnavailable"},
			check: func(t *testing.T, f *fixture) {
				if p := f.network("net").Status.Place; p != nil {
					t.Errorf("recorded %+v for a Network of another project", p)
				}
			},
		},
	})
}

// TestCredentialsSwappedThereAndBackWaitForAListOfTheirProject: the
// credentials went to project B, Neutron was listed there, and they came
// back to A. The inventory holds B's list, where A's network is not: a
// delete must not take that for "gone", but wait for a list of A, and then
// delete the network there.
func TestCredentialsSwappedThereAndBackWaitForAListOfTheirProject(t *testing.T) {
	n := inPlace("project-a", "")(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)))
	f := newFixture(t, n, func(f *neutronfake.Neutron) {
		f.SetProject("project-a")
		inSync("192.168.0.0/16", "192.168.0.1")(f)
	})
	f.neutron.SetProject("project-b")
	f.list()
	f.neutron.SetProject("project-a")
	f.neutron.ClearRequests()

	out := f.sync("net")
	if out.Finalized || !hasFinalizer(f.network("net")) {
		t.Fatal("the delete confirmed on a list of another project: project A's network is left behind")
	}
	if reqs := f.neutron.Requests(); len(reqs) != 0 {
		t.Errorf("asked of Neutron before a list of project A: %q", reqs)
	}
	if !f.inv.ListDue() {
		t.Error("no list of project A was asked for")
	}
	f.list()
	if out := f.sync("net"); !out.Finalized || len(f.neutron.Networks()) != 0 {
		t.Errorf("after a list of project A: finalized %v, networks %+v; want the network deleted", out.Finalized, f.neutron.Networks())
	}
}
