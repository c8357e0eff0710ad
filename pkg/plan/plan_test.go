package plan

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/inventory"
	"github.com/samplecrd/network-controller/pkg/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/reconcile"
)

// writes are the fake's requests that change Neutron: a plan sends none.
var writes = []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet, neutronfake.UpdateSubnet, neutronfake.UpdateNetwork,
	neutronfake.DeleteSubnet, neutronfake.DeleteNetwork, neutronfake.CreateRouter, neutronfake.UpdateRouter, neutronfake.DeleteRouter,
	neutronfake.CreatePort, neutronfake.UpdatePort, neutronfake.DeletePort, neutronfake.AddRouterInterface, neutronfake.RemoveRouterInterface}

// TestWhatASyncWouldDo is the plan's specification: for a Network and what
// Neutron holds, the requests the controller's sync would send, in order,
// and the Ready condition it would then report — while Neutron receives
// reads only.
func TestWhatASyncWouldDo(t *testing.T) {
	web := samplecrdv1.NetworkSpec{CIDR: "10.1.0.0/24", Gateway: "10.1.0.1"}
	moved := web
	moved.Gateway = "10.1.0.254"
	mtu := web
	mtu.MTU = ptrTo(int32(1400))
	overlapping := samplecrdv1.NetworkSpec{CIDR: "10.1.0.128/25"}
	pooled := samplecrdv1.NetworkSpec{SubnetPool: "pool"}

	tests := []struct {
		name string
		// made is a Network the controller made before the plan (its
		// status is the plan's starting point); nil for none.
		made *samplecrdv1.NetworkSpec
		// spec is what is planned, for the Network named "web".
		spec samplecrdv1.NetworkSpec
		// policy is what the namespace's TenantPolicies say of it.
		policy      error
		seed        func(*neutronfake.Neutron)
		want        []string
		wantReason  string
		wantRefused bool
		wantUnknown bool
		// overlaps makes, before the plan, another Network with web's range.
		overlaps bool
		// after changes Neutron once the Networks are made, before the plan.
		after        func(*neutronfake.Neutron)
		wantError    string
		wantWarnings int
	}{{
		name: "a new Network: its place recorded, then a network and a subnet created, in one pass",
		spec: web, want: []string{"create network", "create subnet on network (new network): cidr=\"10.1.0.0/24\", gateway=\"10.1.0.1\""},
		wantReason: samplecrdv1.ReasonProvisioned,
	}, {
		name: "a Network in sync: no request", made: &web, spec: web, wantReason: samplecrdv1.ReasonProvisioned,
	}, {
		name: "a gateway moved: one update of the subnet, from the old gateway", made: &web, spec: moved,
		want: []string{"update subnet: gateway \"10.1.0.1\" -> \"10.1.0.254\""}, wantReason: samplecrdv1.ReasonProvisioned,
	}, {
		name: "an MTU set: one update of the network", made: &web, spec: mtu,
		want: []string{"update network: mtu 1442 -> 1400"}, wantReason: samplecrdv1.ReasonProvisioned,
	}, {
		name: "a range overlapping another Network's subnet: made, as Neutron makes it, with a warning",
		spec: overlapping, overlaps: true,
		want:         []string{"create network", "create subnet on network (new network): cidr=\"10.1.0.128/25\", gateway=\"10.1.0.129\""},
		wantReason:   samplecrdv1.ReasonProvisioned,
		wantWarnings: 1,
	}, {
		name: "a project whose network quota is used up: the create Neutron would refuse, and NeutronQuotaExceeded",
		spec: web, seed: func(f *neutronfake.Neutron) { f.AddNetwork("someone-elses", ""); f.SetNetworkQuota(1) },
		wantReason: samplecrdv1.ReasonNeutronQuotaExceeded, wantRefused: true,
	}, {
		name: "a Network in sync while Neutron cannot be listed: it stays Ready, and the refusal says why",
		made: &web, spec: web, after: func(f *neutronfake.Neutron) { f.FailOn(neutronfake.ListNetworks, errors.New("connection refused")) },
		wantRefused: true, wantError: "connection refused",
	}, {
		name: "a namespace not granted what it names: refused before Neutron is asked", spec: web,
		policy:     &reconcile.NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: "no TenantPolicy grants it"},
		wantReason: samplecrdv1.ReasonNotAllowed, wantRefused: true,
	}, {
		name: "a range from a pool: the plan stops where Neutron chooses it", spec: pooled,
		seed: func(f *neutronfake.Neutron) { f.AddSubnetPool("pool", 26, "10.9.0.0/16") },
		want: []string{"create network", "create subnet on network (new network): subnetPoolID=\"" + "POOL" + "\""}, wantUnknown: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCloud(t, tt.seed)
			if tt.made != nil {
				c.make(t, webNetwork(*tt.made, 1))
			}
			if tt.overlaps {
				c.make(t, &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "other", UID: "0b0b0b0b-0000-4000-8000-00000000000b", Generation: 1}, Spec: web})
			}
			if tt.after != nil {
				tt.after(c.neutron)
			}
			// The API server bumps the generation only when the spec changes.
			generation := int64(2)
			if tt.made != nil && reflect.DeepEqual(*tt.made, tt.spec) {
				generation = 1
			}
			planned := webNetwork(tt.spec, generation)
			if tt.made != nil {
				planned.Status = c.status
			}
			before := len(c.neutron.Requests())

			res := Sync(c.ctx, planned, tt.made != nil, c.project(tt.policy))

			for _, req := range c.neutron.Requests()[before:] {
				if slices.Contains(writes, req) {
					t.Errorf("Neutron received %s: a plan writes nothing", req)
				}
			}
			got := make([]string, 0, len(res.Requests))
			for _, r := range res.Requests {
				got = append(got, c.short(r))
			}
			want := tt.want
			for i := range want {
				want[i] = strings.ReplaceAll(want[i], "POOL", c.pool)
			}
			if !slices.Equal(got, want) {
				t.Errorf("requests:\n got %q\nwant %q", got, want)
			}
			if reason := reasonOf(res); reason != tt.wantReason {
				t.Errorf("condition %+v, want reason %q", res.Condition, tt.wantReason)
			}
			if !strings.Contains(res.Error, tt.wantError) || (res.Error == "") != (tt.wantError == "") {
				t.Errorf("error %q, want one with %q", res.Error, tt.wantError)
			}
			if len(res.Warnings) != tt.wantWarnings {
				t.Errorf("warnings %q, want %d", res.Warnings, tt.wantWarnings)
			}
			if res.Refused != tt.wantRefused || (res.Unknown != "") != tt.wantUnknown {
				t.Errorf("refused %v, unknown %q; want refused %v, unknown %v", res.Refused, res.Unknown, tt.wantRefused, tt.wantUnknown)
			}
		})
	}
}

func reasonOf(res Result) string {
	if res.Condition == nil {
		return ""
	}
	return res.Condition.Reason
}

func ptrTo[T any](v T) *T { return &v }

// webNetwork is the Network "web" of namespace team-a at generation.
func webNetwork(spec samplecrdv1.NetworkSpec, generation int64) *samplecrdv1.Network {
	return &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "0a0a0a0a-0000-4000-8000-00000000000a", Generation: generation}, Spec: spec}
}

// cloud is one project of a fake Neutron, with the controller's
// reconciler on it (to make Networks for real) and a plan's on a DryRun
// over it.
type cloud struct {
	ctx     context.Context
	neutron *neutronfake.Neutron
	mark    neutron.Mark
	real    *reconcile.Reconciler
	// status is the status of the last Network made.
	status samplecrdv1.NetworkStatus
	// pool is the ID of the seeded subnet pool, if any.
	pool string
}

func newCloud(t *testing.T, seed func(*neutronfake.Neutron)) *cloud {
	_, ctx := ktesting.NewTestContext(t)
	mark, err := neutron.NewMark("test", types.UID("c1c1c1c1-0000-4000-8000-0000000000c1"))
	if err != nil {
		t.Fatal(err)
	}
	c := &cloud{ctx: ctx, neutron: neutronfake.New(), mark: mark}
	c.neutron.SetProject("project-a")
	if seed != nil {
		seed(c.neutron)
	}
	if p, err := c.neutron.FindSubnetPool(ctx, "pool"); err == nil {
		c.pool = p.ID
	}
	c.real = reconcile.New(c.listed(t, c.neutron), mark, reconcile.Options{Records: Unwritten{}})
	return c
}

// listed is an inventory over client, listed once as the controller lists
// it before its workers start.
func (c *cloud) listed(t *testing.T, client neutron.Interface) *inventory.Inventory {
	inv := inventory.New(client, c.mark, inventory.Options{})
	if _, err := inv.Refresh(c.ctx); err != nil {
		t.Fatal(err)
	}
	return inv
}

// make has the controller's reconciler make network, pass after pass as
// the controller would, until it is Ready.
func (c *cloud) make(t *testing.T, network *samplecrdv1.Network) {
	t.Helper()
	network = network.DeepCopy()
	for range maxPasses {
		out := c.real.Reconcile(c.ctx, network)
		if err := foldStatus(network, out); err != nil {
			t.Fatal(err)
		}
		if out.Condition.Reason == samplecrdv1.ReasonProvisioned {
			c.status = network.Status
			return
		}
	}
	t.Fatalf("%s never became Ready", network.Name)
}

// project is what the plan asks for each pass: a policy that says
// refused, or the reconciler of a new inventory on a DryRun over the
// fake, listed once (a failed list is Preflight's to report).
func (c *cloud) project(refused error) Project {
	var (
		dry *DryRun
		r   *reconcile.Reconciler
	)
	return func(ctx context.Context, _ *samplecrdv1.Network) (Reconciler, *DryRun, error) {
		if refused != nil {
			return nil, nil, refused
		}
		if dry == nil {
			dry = NewDryRun(c.neutron)
			inv := inventory.New(dry, c.mark, inventory.Options{})
			// A failed list is Preflight's to report, as in runPlan.
			_, _ = inv.Refresh(ctx)
			r = reconcile.New(inv, c.mark, reconcile.Options{Records: Unwritten{}})
		}
		return r, dry, nil
	}
}

// short is a request as a test reads it: the made resources' IDs left
// out, the fields that say what changes kept.
func (c *cloud) short(r Request) string {
	line := r.Action + " " + r.Kind
	var fields []string
	for _, f := range r.Fields {
		switch {
		case f.Name == "networkID" && isPlanned(f.To.(string)):
			line += " on network " + f.To.(string)
		case f.Name == "cidr", f.Name == "gateway", f.Name == "mtu", f.Name == "subnetPoolID":
			if f.From != nil {
				fields = append(fields, f.Name+" "+show(f.From)+" -> "+show(f.To))
			} else {
				fields = append(fields, f.Name+"="+show(f.To))
			}
		}
	}
	if r.Action == "create" && r.Kind == "network" {
		return line // its name is the mark's
	}
	if len(fields) > 0 {
		line += ": " + strings.Join(fields, ", ")
	}
	return line
}
