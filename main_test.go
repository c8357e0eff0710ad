package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2/ktesting"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/options"
	"github.com/samplecrd/network-controller/pkg/controller/plan"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

// resetLogs returns what puts component-base's logging configuration
// back to its defaults, so that a command run in this process may apply
// its own again (logsapi.ResetForTest).
func resetLogs(t *testing.T) func() {
	return func() {
		features := featuregate.NewFeatureGate()
		if err := logsapi.AddFeatureGates(features); err != nil {
			t.Fatal(err)
		}
		if err := logsapi.ResetForTest(features); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTheCommandLine: --help, the controller's and each subcommand's,
// lists the subcommands and flags and exits 0; a word that is no
// subcommand, a typo of one among the controller's flags, or a stray
// argument beside a subcommand's flags exits with the usage and starts no
// controller. The first case shows the controller would be seen starting.
func TestTheCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		started  bool
		// wantOut and wantErr are in stdout and stderr.
		wantOut, wantErr []string
	}{
		{name: "the controller", args: []string{"--kubeconfig=/nonexistent", "--leader-elect-resource-namespace=ns"}, started: true},
		{name: "help lists the subcommands and the flags' sections", args: []string{"--help"},
			wantOut: []string{"Available Commands:", "import", "plan", "version", "Leader election flags:", "--leader-elect-lease-duration"}},
		{name: "plan's help", args: []string{"plan", "--help"}, wantOut: []string{"network-controller plan -f network.yaml", "--filename", "--adoption-namespaces"}},
		{name: "import's help", args: []string{"import", "-h"}, wantOut: []string{"network-controller import", "--name", "--os-cloud"}},
		{name: "help of a subcommand", args: []string{"help", "plan"}, wantOut: []string{"network-controller plan -f network.yaml"}},
		{name: "an unknown command", args: []string{"frobnicate"}, wantCode: command.UsageCode,
			wantErr: []string{`unknown command "frobnicate" for "network-controller"`, "Usage:"}},
		{name: "a typo of a subcommand starts no controller", args: []string{"improt", "--kubeconfig=/nonexistent", "--leader-elect-resource-namespace=ns"},
			wantCode: command.UsageCode, wantErr: []string{`unknown command "improt"`, "did you mean import?"}},
		{name: "a stray argument", args: []string{"plan", "-f", "x.yaml", "extra"}, wantCode: command.UsageCode,
			wantErr: []string{`"network-controller plan" takes no arguments, got ["extra"]`, "network-controller plan -f network.yaml"}},
		{name: "plan without a file", args: []string{"plan"}, wantCode: command.UsageCode, wantErr: []string{"-f (--filename) is required"}},
		{name: "an unknown flag", args: []string{"--bogus"}, wantCode: command.UsageCode, wantErr: []string{"unknown flag: --bogus", "Usage:"}},
		{name: "an invalid flag", args: []string{"--kubeconfig=/nonexistent", "--leader-elect-resource-namespace=ns", "--workers=0"},
			wantCode: command.UsageCode, wantErr: []string{"--workers must be at least 1"}},
		{name: "version", args: []string{"version"}, wantOut: []string{"network-controller "}},
		{name: "--version", args: []string{"--version"}, wantOut: []string{"network-controller "}},
		{name: "version in JSON", args: []string{"version", "-o", "json"}, wantOut: []string{`"gitVersion"`, `"gitCommit"`, `"goVersion"`}},
		{name: "help of a typo of a subcommand", args: []string{"help", "improt"}, wantCode: command.UsageCode,
			wantErr: []string{`unknown help topic "improt" for "network-controller"; did you mean import?`}},
		{name: "bash completion", args: []string{"completion", "bash"}, wantOut: []string{"__start_network-controller"}},
		{name: "zsh completion", args: []string{"completion", "zsh"}, wantOut: []string{"#compdef network-controller"}},
		{name: "fish completion", args: []string{"completion", "fish"}, wantOut: []string{"complete -c network-controller"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A program applies its logging configuration once per
			// process; the cases are many programs in one.
			t.Cleanup(resetLogs(t))
			started := false
			cmd := newCommand(func(context.Context, *options.Options) error {
				started = true
				return nil
			})
			var stdout, stderr bytes.Buffer
			cmd.SetArgs(tc.args)
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			if code := command.Run(cmd); code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr.String())
			}
			if started != tc.started {
				t.Errorf("the controller started: %v, want %v", started, tc.started)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// neutronWrites are the fake's requests that change Neutron.
var neutronWrites = []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet, neutronfake.UpdateSubnet, neutronfake.UpdateNetwork,
	neutronfake.DeleteSubnet, neutronfake.DeleteNetwork, neutronfake.CreateRouter, neutronfake.UpdateRouter, neutronfake.DeleteRouter,
	neutronfake.CreatePort, neutronfake.UpdatePort, neutronfake.DeletePort, neutronfake.AddRouterInterface, neutronfake.RemoveRouterInterface}

// world is one Neutron project (a fake) and the namespaces of a cluster,
// none granted anything by a TenantPolicy: the controller runs on it for
// real (control), and a plan beside it (plan), each through pkg/controller/tenancy's
// projects (tenancy.Build) as main.go builds them.
type world struct {
	t       *testing.T
	ctx     context.Context
	neutron *neutronfake.Neutron
	mark    neutron.Mark
	// policies are the cluster's TenantPolicies.
	policies []runtime.Object
}

func newWorld(t *testing.T, seed func(*neutronfake.Neutron)) *world {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	mark, err := neutron.NewMark("test", types.UID("c1c1c1c1-0000-4000-8000-0000000000c1"))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, ctx: ctx, neutron: neutronfake.New(), mark: mark}
	w.neutron.SetProject("project-a")
	if seed != nil {
		seed(w.neutron)
	}
	return w
}

// parts are the parts of a Set on w's Neutron, with w's TenantPolicies and
// the namespaces and Secrets of live, but for its Networks, which the
// caller gives; start starts their informers.
func (w *world) parts(live *k8sfake.Clientset) (_ tenancy.Parts, start func()) {
	policies := informers.NewSharedInformerFactory(fake.NewClientset(w.policies...), 0)
	namespaces := kubeinformers.NewSharedInformerFactory(live, 0)
	parts := tenancy.Parts{TenantPolicies: policies.Samplecrd().V1().TenantPolicies(), Namespaces: namespaces.Core().V1().Namespaces(),
		Secrets: live.CoreV1(), Mark: w.mark, Own: w.neutron, Reach: &neutron.Reachability{}}
	return parts, func() {
		policies.Start(w.ctx.Done())
		namespaces.Start(w.ctx.Done())
	}
}

// liveCluster is the API server a plan reads: the namespaces of stored
// and of made, the Networks already there, which grant nothing.
func liveCluster(stored *samplecrdv2.Network, made ...*samplecrdv2.Network) (*k8sfake.Clientset, *fake.Clientset) {
	nss := []runtime.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: stored.Namespace}}}
	var objs []runtime.Object
	for _, n := range made {
		objs = append(objs, n)
		if n.Namespace != stored.Namespace {
			nss = append(nss, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.Namespace}})
		}
	}
	return k8sfake.NewClientset(nss...), fake.NewClientset(objs...)
}

// control runs the controller on stored, as the API server holds it:
// syncHandler after syncHandler, each on what the one before wrote, until
// one is not retried at once (at most 5). It returns the Network as the
// controller left it (nil: gone), the last sync's result, and the writes
// Neutron received.
func (w *world) control(stored *samplecrdv2.Network, others ...*samplecrdv2.Network) (*samplecrdv2.Network, result, []string) {
	w.t.Helper()
	cluster := plan.NewCluster()
	if err := cluster.Seed(stored); err != nil {
		w.t.Fatal(err)
	}
	// The policy reads the Networks of a started informer, as the
	// controller's does; the controller's records go to its cluster.
	live, networks := liveCluster(stored, append(others, stored)...)
	factory := informers.NewSharedInformerFactory(networks, 0)
	parts, start := w.parts(live)
	parts.Networks, parts.NetworkClient = factory.Samplecrd().V2().Networks(), cluster.Networks
	set, err := tenancy.Build(parts, tenancy.Config{})
	if err != nil {
		w.t.Fatal(err)
	}
	start()
	factory.Start(w.ctx.Done())
	if err := set.ListOnce(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	c, err := NewController(w.ctx, cluster.Kube, cluster.Networks, cluster.NetworkInformer, cluster.ConfigMapInformer, projectsOf{set}, Options{MaxRetryDelay: time.Minute})
	if err != nil {
		w.t.Fatal(err)
	}
	c.recorder, c.configMaps.Recorder = plan.Unrecorded{}, plan.Unrecorded{}
	before := len(w.neutron.Requests())
	key := cache.ObjectName{Namespace: stored.Namespace, Name: stored.Name}
	var (
		res     result
		network *samplecrdv2.Network
	)
	for range 5 {
		res = c.syncHandler(w.ctx, key)
		if network, err = cluster.CatchUp(w.ctx, key); err != nil {
			w.t.Fatal(err)
		}
		if res.requeue != reconcile.AddRateLimited || res.err != nil {
			break
		}
	}
	var writes []string
	for _, req := range w.neutron.Requests()[before:] {
		if slices.Contains(neutronWrites, req) {
			writes = append(writes, req)
		}
	}
	return network, res, writes
}

// make has the controller make network until it is Ready, and returns it
// as the API server then holds it.
func (w *world) make(network *samplecrdv2.Network, others ...*samplecrdv2.Network) *samplecrdv2.Network {
	w.t.Helper()
	made, _, _ := w.control(network, others...)
	if !readyFor(made) {
		w.t.Fatalf("%s never became Ready: %+v", network.Name, made.Status.Conditions)
	}
	return made
}

// plan runs `network-controller plan` on stored, as Admit returns it, with
// others in the API server: the Planner of pkg/controller/plan, with main.go's
// planSync, over a live cluster that it only reads.
func (w *world) plan(stored *samplecrdv2.Network, exists bool, others ...*samplecrdv2.Network) plan.Result {
	w.t.Helper()
	made := others
	if exists {
		made = append(made, stored)
	}
	kube, networks := liveCluster(stored, made...)
	factory := informers.NewSharedInformerFactory(networks, 0)
	parts, start := w.parts(kube)
	parts.Networks, parts.NetworkClient = factory.Samplecrd().V2().Networks(), networks
	planner, err := plan.NewPlanner(w.ctx, planSync, parts, tenancy.Config{})
	if err != nil {
		w.t.Fatal(err)
	}
	start()
	factory.Start(w.ctx.Done())
	if err := planner.Start(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	kube.ClearActions()
	networks.ClearActions()
	before := len(w.neutron.Requests())

	res := planner.Plan(w.ctx, stored, exists)

	for _, req := range w.neutron.Requests()[before:] {
		if slices.Contains(neutronWrites, req) {
			w.t.Errorf("Neutron received %s: a plan writes nothing", req)
		}
	}
	for _, a := range append(kube.Actions(), networks.Actions()...) {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			w.t.Errorf("the API server received %s %s: a plan writes nothing", v, a.GetResource().Resource)
		}
	}
	return res
}

// readyFor reports whether n is Ready for its generation.
func readyFor(n *samplecrdv2.Network) bool {
	c := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == n.Generation
}

// asNeutronWrite is a planned request as the fake Neutron names it.
func asNeutronWrite(r plan.Request) string {
	switch r.Action + " " + r.Kind {
	case "attach router interface":
		return neutronfake.AddRouterInterface
	case "detach router interface":
		return neutronfake.RemoveRouterInterface
	}
	return r.Action + "-" + r.Kind
}

// withFinalizer is n held by another's finalizer too.
func withFinalizer(n *samplecrdv2.Network, finalizer string) *samplecrdv2.Network {
	n.Finalizers = append(n.Finalizers, finalizer)
	return n
}

// TestPlanAndTheControllerAgree: for each Network of the controller's
// table (controller_test.go), over the real reconciler and projects on a
// fake Neutron, `plan` says what the controller then does: the writes
// Neutron receives, in order, and the Ready condition it reports, or that
// it finalizes the Network, or does nothing; a plan is refused exactly when
// the controller leaves the Network not Ready. The plan runs first and
// writes nothing, so both start from the same Neutron.
func TestPlanAndTheControllerAgree(t *testing.T) {
	edge := func(n *samplecrdv2.Network) *samplecrdv2.Network {
		n.Spec.Router = &samplecrdv2.RouterReference{Name: "edge"}
		return n
	}
	moved := func(n *samplecrdv2.Network) *samplecrdv2.Network {
		n.Spec.Subnets[0].Gateway, n.Generation = "192.168.0.254", n.Generation+1
		return n
	}
	const otherFinalizer = "example.com/keep"
	tests := []struct {
		name string
		// made, when set, has the controller make newNetwork() first;
		// network is then the Network planned, from what it made (or
		// from newNetwork()).
		made    bool
		network func(made *samplecrdv2.Network) *samplecrdv2.Network
		seed    func(*neutronfake.Neutron)
		// after changes Neutron once the Network is made, before the plan.
		after       func(*neutronfake.Neutron)
		wantWrites  []string
		wantReady   string // "Status/Reason" of the condition reported; "" for none
		wantRefused bool
		// wantFinalized: the controller releases its finalizer.
		wantFinalized bool
	}{
		{
			name: "a new Network: a network and a subnet made, Ready", network: func(*samplecrdv2.Network) *samplecrdv2.Network { return newNetwork() },
			wantWrites: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet}, wantReady: "True/Provisioned",
		},
		{
			name: "a router its namespace is not granted: NotAllowed, nothing asked of Neutron", network: func(*samplecrdv2.Network) *samplecrdv2.Network { return edge(newNetwork()) },
			wantReady: "False/NotAllowed", wantRefused: true,
		},
		{
			name: "a deletion is never refused by policy: what a Network made, it removes", made: true,
			network:    func(n *samplecrdv2.Network) *samplecrdv2.Network { return deleting(edge(n)) },
			wantWrites: []string{neutronfake.DeleteNetwork}, wantFinalized: true,
		},
		{
			name: "Neutron cannot be listed: NeutronUnavailable, nothing made", network: func(*samplecrdv2.Network) *samplecrdv2.Network { return newNetwork() },
			seed:      func(f *neutronfake.Neutron) { f.FailOn(neutronfake.ListNetworks, errors.New("connection refused")) },
			wantReady: "False/NeutronUnavailable", wantRefused: true,
		},
		{
			name: "in sync: no write", made: true, network: func(n *samplecrdv2.Network) *samplecrdv2.Network { return n },
			wantReady: "True/Provisioned",
		},
		{
			name: "a gateway moved: one update of the subnet", made: true, network: moved,
			wantWrites: []string{neutronfake.UpdateSubnet}, wantReady: "True/Provisioned",
		},
		{
			name: "in sync while Neutron cannot be listed: it stays Ready, and the plan is refused with no condition", made: true,
			network:     func(n *samplecrdv2.Network) *samplecrdv2.Network { return n },
			after:       func(f *neutronfake.Neutron) { f.FailOn(neutronfake.ListNetworks, errors.New("connection refused")) },
			wantRefused: true,
		},
		{
			name: "a deleted Network finalized: its network deleted, and its subnet with it", made: true, network: deleting,
			wantWrites: []string{neutronfake.DeleteNetwork}, wantFinalized: true,
		},
		{
			name:      "a Network whose credentials cannot be used: CredentialsUnavailable, nothing asked of Neutron",
			network:   func(*samplecrdv2.Network) *samplecrdv2.Network { return withCredentials(newNetwork()) },
			wantReady: "False/CredentialsUnavailable", wantRefused: true,
		},
		{
			name: "a deleted Network without our finalizer (another's holds it), its network still in Neutron: nothing to do, the garbage collector's",
			made: true,
			network: func(n *samplecrdv2.Network) *samplecrdv2.Network {
				n.Finalizers = []string{otherFinalizer}
				return deleting(n)
			},
		},
		{
			name: "a deleted Network held by another's finalizer too: ours released, the rest theirs", made: true,
			network:    func(n *samplecrdv2.Network) *samplecrdv2.Network { return deleting(withFinalizer(n, otherFinalizer)) },
			wantWrites: []string{neutronfake.DeleteNetwork}, wantFinalized: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.seed)
			var stored *samplecrdv2.Network
			if tt.made {
				stored = w.make(newNetwork())
			}
			stored = tt.network(stored)
			if tt.after != nil {
				tt.after(w.neutron)
			}

			planned := w.plan(stored.DeepCopy(), tt.made)
			network, res, writes := w.control(stored.DeepCopy())

			var said []string
			for _, r := range planned.Requests {
				said = append(said, asNeutronWrite(r))
			}
			if !slices.Equal(said, writes) || !slices.Equal(writes, tt.wantWrites) {
				t.Errorf("plan said %q, the controller wrote %q; want %q", said, writes, tt.wantWrites)
			}
			cond := meta.FindStatusCondition(network.Status.Conditions, samplecrdv1.ConditionReady)
			if c := planned.Condition; c != nil {
				if cond == nil || c.Status != cond.Status || c.Reason != cond.Reason || c.Message != cond.Message || c.ObservedGeneration != network.Generation {
					t.Errorf("plan said %+v, the controller reported %+v", c, cond)
				}
			}
			if got := reasonOrNone(planned.Condition); got != tt.wantReady {
				t.Errorf("plan said Ready %q, want %q", got, tt.wantReady)
			}
			finalized := network.DeletionTimestamp != nil && !hasFinalizer(network)
			if finalized != (tt.wantFinalized || network.DeletionTimestamp != nil && !hasFinalizer(stored)) {
				t.Errorf("finalizers %q after the controller, want ours released: %v", network.Finalizers, tt.wantFinalized)
			}
			refused := !finalized && !(readyFor(network) && res.err == nil)
			if planned.Refused != refused || planned.Refused != tt.wantRefused {
				t.Errorf("plan refused %v (%s), the controller left it not Ready: %v (%v); want %v", planned.Refused, planned.Error, refused, res.err, tt.wantRefused)
			}
			if (planned.Error != "") != (planned.Refused && planned.Condition == nil) {
				t.Errorf("plan refused %v with condition %+v and error %q: a refusal says why, once", planned.Refused, planned.Condition, planned.Error)
			}
		})
	}
}

func reasonOrNone(c *metav1.Condition) string {
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

// TestWhatASyncWouldDo is the plan's specification: for a Network and what
// Neutron holds, the requests the controller's sync would send, in order,
// and the Ready condition it would then report — while Neutron receives
// reads only.
func TestWhatASyncWouldDo(t *testing.T) {
	subnet := func(s samplecrdv2.SubnetSpec) []samplecrdv2.SubnetSpec { return []samplecrdv2.SubnetSpec{s} }
	web := samplecrdv2.NetworkSpec{Subnets: subnet(samplecrdv2.SubnetSpec{CIDR: "10.1.0.0/24", Gateway: "10.1.0.1"})}
	moved := web
	moved.Subnets = subnet(samplecrdv2.SubnetSpec{CIDR: "10.1.0.0/24", Gateway: "10.1.0.254"})
	mtu := web
	mtu.MTU = ptrTo(int32(1400))
	overlapping := samplecrdv2.NetworkSpec{Subnets: subnet(samplecrdv2.SubnetSpec{CIDR: "10.1.0.128/25"})}
	pooled := samplecrdv2.NetworkSpec{Subnets: subnet(samplecrdv2.SubnetSpec{SubnetPool: "pool", PrefixLength: ptrTo(int32(24))})}
	dual := web
	dual.Subnets = append(slices.Clone(web.Subnets), samplecrdv2.SubnetSpec{CIDR: "fd00:1::/64", Gateway: "fd00:1::1"})
	routed := web
	routed.Router = &samplecrdv2.RouterReference{Name: "edge"}

	tests := []struct {
		name string
		// made is a Network the controller made before the plan (its
		// status is the plan's starting point); nil for none.
		made *samplecrdv2.NetworkSpec
		// spec is what is planned, for the Network named "web".
		spec samplecrdv2.NetworkSpec
		// grants, when set, are a TenantPolicy's, of every namespace.
		grants      *samplecrdv1.TenantPolicySpec
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
		name: "a dual-stack Network: one network, and each subnet's create with its range",
		spec: dual, want: []string{"create network", "create subnet on network (new network): cidr=\"10.1.0.0/24\", gateway=\"10.1.0.1\"",
			"create subnet on network (new network): cidr=\"fd00:1::/64\", gateway=\"fd00:1::1\""},
		wantReason: samplecrdv1.ReasonProvisioned,
	}, {
		name: "an IPv6 subnet added to a Network in sync: only its create", made: &web, spec: dual,
		want:       []string{"create subnet: cidr=\"fd00:1::/64\", gateway=\"fd00:1::1\""},
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
		name: "a namespace not granted what it names: refused before Neutron is asked", spec: routed,
		wantReason: samplecrdv1.ReasonNotAllowed, wantRefused: true,
	}, {
		name: "a range from a pool: the plan stops where Neutron chooses it", spec: pooled,
		grants: &samplecrdv1.TenantPolicySpec{SubnetPools: []string{"pool"}},
		seed:   func(f *neutronfake.Neutron) { f.AddSubnetPool("pool", 26, "10.9.0.0/16") },
		want:   []string{"create network", "create subnet on network (new network): subnetPoolID=\"" + "POOL" + "\""}, wantUnknown: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.seed)
			if tt.grants != nil {
				w.policies = append(w.policies, &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "grants"}, Spec: *tt.grants})
			}
			var pool string
			if p, err := w.neutron.FindSubnetPool(w.ctx, "pool"); err == nil {
				pool = p.ID
			}
			var others []*samplecrdv2.Network
			if tt.overlaps {
				others = append(others, w.make(&samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "other", UID: "0b0b0b0b-0000-4000-8000-00000000000b", Generation: 1}, Spec: web}))
			}
			planned := webNetwork(tt.spec, 1)
			if tt.made != nil {
				planned = w.make(webNetwork(*tt.made, 1), others...)
				// The API server bumps the generation only when the spec changes.
				if !reflect.DeepEqual(*tt.made, tt.spec) {
					planned.Spec, planned.Generation = tt.spec, 2
				}
			}
			if tt.after != nil {
				tt.after(w.neutron)
			}

			res := w.plan(planned, tt.made != nil, others...)

			got := make([]string, 0, len(res.Requests))
			for _, r := range res.Requests {
				got = append(got, short(r))
			}
			want := tt.want
			for i := range want {
				want[i] = strings.ReplaceAll(want[i], "POOL", pool)
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

func reasonOf(res plan.Result) string {
	if res.Condition == nil {
		return ""
	}
	return res.Condition.Reason
}

func ptrTo[T any](v T) *T { return &v }

// webNetwork is the Network "web" of namespace team-a at generation.
func webNetwork(spec samplecrdv2.NetworkSpec, generation int64) *samplecrdv2.Network {
	return &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "0a0a0a0a-0000-4000-8000-00000000000a", Generation: generation}, Spec: spec}
}

// short is a request as a test reads it: the made resources' IDs left
// out, the fields that say what changes kept.
func short(r plan.Request) string {
	line := r.Action + " " + r.Kind
	var fields []string
	for _, f := range r.Fields {
		switch {
		case f.Name == "networkID" && strings.HasPrefix(f.To.(string), "(new "):
			line += " on network " + f.To.(string)
		case f.Name == "cidr", f.Name == "gateway", f.Name == "mtu", f.Name == "subnetPoolID":
			if f.From != nil {
				fields = append(fields, f.Name+" "+asJSON(f.From)+" -> "+asJSON(f.To))
			} else {
				fields = append(fields, f.Name+"="+asJSON(f.To))
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

func asJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
