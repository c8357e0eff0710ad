package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/plan"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestPlanSaysWhatASyncWouldDoAndDoesNothing is issue 36's plan on the
// real stack: for a Network that does not exist yet, one whose gateway
// changes, one in sync and one whose subnet was changed in Neutron by
// hand, `network-controller plan -o json` prints the create of a network
// and its subnet, the one update of the gateway (from and to), nothing,
// and the update that repairs the drift. It sends Neutron reads only (counted by a proxy in
// front of it), leaves the API server as it was (no new Network, the
// others' resourceVersions unchanged), and the controller, once the
// change is applied for real, sends the one update it said. A spec the
// API server's CEL refuses and a router no policy grants are refused, each
// with the controller's reason, and the exit code says so; a range that
// overlaps another Network's is planned as Neutron would make it, with a
// warning.
func TestPlanSaysWhatASyncWouldDoAndDoesNothing(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)
	createNetwork(ctx, t, ns, "in-sync", "10.131.0.0/24", "10.131.0.1")
	createNetwork(ctx, t, ns, "moved", "10.132.0.0/24", "10.132.0.1")
	createNetwork(ctx, t, ns, "drifted", "10.140.0.0/24", "10.140.0.1")
	inSync := waitForReady(ctx, t, ns, "in-sync", time.Minute)
	moved := waitForReady(ctx, t, ns, "moved", time.Minute)
	drifted := waitForReady(ctx, t, ns, "drifted", time.Minute)
	// Drift: someone gives drifted's subnet a DNS server in Neutron.
	// The controller would see it at its next list of Neutron, minutes
	// away; the plan lists Neutron itself.
	if _, err := subnets.Update(ctx, stack.Neutron.Client, drifted.Status.SubnetID,
		subnets.UpdateOpts{DNSNameservers: &[]string{"10.140.0.53"}}).Extract(); err != nil {
		t.Fatal(err)
	}

	proxy, err := framework.StartFaultProxy(stack.Neutron.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	runPlan := func(manifests string) ([]plan.Result, int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, controllerBinary, "plan", "-f", "-", "-n", ns, "-o", "json",
			"--kubeconfig="+stack.ControlPlane.AdminKubeconfig, "--cluster-name="+c.cluster, "--neutron-endpoint="+proxy.URL)
		var stdout, stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(manifests), &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("network-controller plan: %v", err)
		}
		var results []plan.Result
		if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
			t.Fatalf("plan's JSON: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		return results, cmd.ProcessState.ExitCode()
	}

	before := neutronState(ctx, t)
	results, code := runPlan(manifest("new-one", `{cidr: 10.133.0.0/24}`) + manifest("moved", `{cidr: 10.132.0.0/24, gateway: 10.132.0.254}`) +
		manifest("in-sync", `{cidr: 10.131.0.0/24, gateway: 10.131.0.1}`) + manifest("drifted", `{cidr: 10.140.0.0/24, gateway: 10.140.0.1}`))
	if code != 0 {
		t.Errorf("plan exited %d for changes that would all be Ready: %+v", code, results)
	}
	want := map[string][]string{
		ns + "/new-one": {"create network", "create subnet: cidr=\"10.133.0.0/24\", gateway=\"10.133.0.1\""},
		ns + "/moved":   {"update subnet " + moved.Status.SubnetID + ": gateway \"10.132.0.1\" -> \"10.132.0.254\""},
		ns + "/in-sync": {},
		ns + "/drifted": {"update subnet " + drifted.Status.SubnetID + ": dnsNameservers [\"10.140.0.53\"] -> []"},
	}
	for _, r := range results {
		if got := summarize(r); !slices.Equal(got, want[r.Network]) || r.Refused || r.Condition.Reason != samplecrdv1.ReasonProvisioned {
			t.Errorf("%s: plan says %q, then %+v; want %q, then Provisioned", r.Network, got, r.Condition, want[r.Network])
		}
		if exists := r.Network != ns+"/new-one"; r.Exists != exists {
			t.Errorf("%s: exists %v, want %v", r.Network, r.Exists, exists)
		}
	}
	if len(results) != len(want) {
		t.Errorf("plan printed %d results, want %d", len(results), len(want))
	}

	// Nothing was written: Neutron was only read, holds what it held,
	// and the API server holds no new Network and the same two.
	sent := proxy.ArrivalsByMethod()
	if sent["GET"] == 0 || len(sent) != 1 {
		t.Errorf("plan sent Neutron %v, want reads (GET) only", sent)
	}
	if after := neutronState(ctx, t); after != before {
		t.Errorf("Neutron changed during the plan:\nbefore %s\nafter  %s", before, after)
	}
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "new-one", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the planned Network new-one is in the API server (%v): the dry run stored it", err)
	}
	for _, n := range []*samplecrdv1.Network{inSync, moved} {
		now, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil || now.ResourceVersion != n.ResourceVersion {
			t.Errorf("%s changed during the plan (resourceVersion %s, was %s; %v)", n.Name, now.ResourceVersion, n.ResourceVersion, err)
		}
	}

	// The plan was the controller's word: applied, the gateway move is
	// the one update it said, on the same subnet.
	puts := c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "PUT"})
	moved.Spec.Gateway = "10.132.0.254"
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Update(ctx, moved, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := networkClient(t).SamplecrdV1().Networks(ns).Get(ctx, "moved", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return n.Status.Gateway == "10.132.0.254" && n.Status.SubnetID == moved.Status.SubnetID, fmt.Sprintf("status %+v", n.Status), nil
	})
	if got := c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "PUT"}) - puts; got != 1 {
		t.Errorf("the controller sent %v updates for the gateway move, the plan said 1", got)
	}

	// Refusals, each the controller's reason, and exit code 1; a range
	// that overlaps another Network's, which Neutron accepts, is made,
	// with a warning.
	results, code = runPlan(manifest("overlapping", `{cidr: 10.131.0.128/25}`) + manifest("outside", `{cidr: 10.134.0.0/24, gateway: 10.135.0.1}`) +
		manifest("routed", `{cidr: 10.136.0.0/24, router: {name: not-granted}}`))
	if code != 1 {
		t.Errorf("plan exited %d for refused changes, want 1", code)
	}
	wantReasons := map[string]string{ns + "/overlapping": samplecrdv1.ReasonProvisioned, ns + "/outside": "Invalid", ns + "/routed": samplecrdv1.ReasonNotAllowed}
	for _, r := range results {
		refused := r.Network != ns+"/overlapping"
		if r.Refused != refused || r.Condition == nil || r.Condition.Reason != wantReasons[r.Network] {
			t.Errorf("%s: refused %v with %+v, want refused %v with %s", r.Network, r.Refused, r.Condition, refused, wantReasons[r.Network])
		}
		if warned := len(r.Warnings) == 1 && strings.Contains(r.Warnings[0], inSync.Status.SubnetID); warned != !refused {
			t.Errorf("%s: warnings %q", r.Network, r.Warnings)
		}
	}
	if sent := proxy.ArrivalsByMethod(); len(sent) != 1 {
		t.Errorf("plan sent Neutron %v, want reads (GET) only", sent)
	}
}

// manifest is a Network manifest named name with spec, a YAML document.
func manifest(name, spec string) string {
	return fmt.Sprintf("---\napiVersion: samplecrd.k8s.io/v1\nkind: Network\nmetadata:\n  name: %s\nspec: %s\n", name, spec)
}

// summarize is a result's requests as a test reads them: action, kind,
// the ID of what an update changes, and the range, gateway and DNS
// servers it sets.
func summarize(r plan.Result) []string {
	out := []string{}
	for _, req := range r.Requests {
		line := req.Action + " " + req.Kind
		if req.Action != "create" {
			line += " " + req.ID
		}
		var fields []string
		for _, f := range req.Fields {
			to, _ := json.Marshal(f.To)
			switch {
			case f.Name != "cidr" && f.Name != "gateway" && f.Name != "dnsNameservers":
			case f.From != nil:
				from, _ := json.Marshal(f.From)
				fields = append(fields, fmt.Sprintf("%s %s -> %s", f.Name, from, to))
			default:
				fields = append(fields, fmt.Sprintf("%s=%s", f.Name, to))
			}
		}
		if len(fields) > 0 {
			line += ": " + strings.Join(fields, ", ")
		}
		out = append(out, line)
	}
	return out
}

// neutronState is every network and subnet of the stack's Neutron as
// JSON, with their revisions: any write changes it.
func neutronState(ctx context.Context, t *testing.T) string {
	t.Helper()
	var state []string
	for _, path := range []string{"networks", "subnets", "ports", "routers"} {
		var body map[string][]map[string]any
		if _, err := stack.Neutron.Client.Get(ctx, stack.Neutron.Client.ServiceURL(path)+"?fields=id&fields=revision_number", &body, nil); err != nil {
			t.Fatal(err)
		}
		for _, item := range body[path] {
			state = append(state, fmt.Sprintf("%s %v@%v", path, item["id"], item["revision_number"]))
		}
	}
	slices.Sort(state)
	return strings.Join(state, "\n")
}

// TestPlanForeseesAQuotaNeutronWouldRefuse: a project whose network quota
// is used up (set to nothing by its administrator), planned through
// Keystone with the project's own credentials, as the controller would
// reach it: the plan reads the quota and says the create would be refused
// as NeutronQuotaExceeded, with exit code 1.
func TestPlanForeseesAQuotaNeutronWouldRefuse(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	tenant, err := stack.Keystone.NewTenant(ctx, "plan-quota-"+ns[len(ns)-5:], "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := quotas.Update(ctx, stack.Neutron.Client, tenant.ProjectID, quotas.UpdateOpts{Network: ptr.To(0)}).Extract(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, controllerBinary, "plan", "-f", "-", "-n", ns, "-o", "json",
		"--kubeconfig="+stack.ControlPlane.AdminKubeconfig, "--os-cloud="+tenant.Cloud)
	cmd.Env = append(os.Environ(), "OS_CLIENT_CONFIG_FILE="+tenant.CloudsYAML)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(manifest("over", `{cidr: 10.141.0.0/24}`)), &stdout, &stderr
	err = cmd.Run()
	var results []plan.Result
	if jsonErr := json.Unmarshal(stdout.Bytes(), &results); jsonErr != nil || len(results) != 1 {
		t.Fatalf("plan: %v, %v\n%s\nstderr:\n%s", err, jsonErr, stdout.String(), stderr.String())
	}
	if r := results[0]; cmd.ProcessState.ExitCode() != 1 || !r.Refused || r.Condition == nil || r.Condition.Reason != samplecrdv1.ReasonNeutronQuotaExceeded || len(r.Requests) != 0 {
		t.Errorf("plan exited %d with %+v, want 1 and a refusal NeutronQuotaExceeded before any request", cmd.ProcessState.ExitCode(), r)
	}
}

// TestPlanSaysANetworkWouldWaitForTheCap (issue 54): in a namespace a
// TenantPolicy caps at 3 Networks, with 3 at work, the plan of a fourth
// says it would be refused for the cap (NotAllowed, naming maxNetworks),
// exits 1, and sends Neutron nothing; the namespace holds 3 Networks
// still.
func TestPlanSaysANetworkWouldWaitForTheCap(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	c := startController(t, ns)
	cleanupNetworks(t, ns)
	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{MaxNetworks: ptr.To[int32](3)})
	for i := range 3 {
		createNetwork(ctx, t, ns, fmt.Sprintf("n%d", i), fmt.Sprintf("10.142.%d.0/24", i), "")
	}
	for i := range 3 {
		waitForReady(ctx, t, ns, fmt.Sprintf("n%d", i), time.Minute)
	}

	cmd := exec.CommandContext(ctx, controllerBinary, "plan", "-f", "-", "-n", ns, "-o", "json",
		"--kubeconfig="+stack.ControlPlane.AdminKubeconfig, "--cluster-name="+c.cluster, "--neutron-endpoint="+stack.Neutron.Endpoint)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(manifest("fourth", `{cidr: 10.142.3.0/24}`)), &stdout, &stderr
	err := cmd.Run()
	var results []plan.Result
	if jsonErr := json.Unmarshal(stdout.Bytes(), &results); jsonErr != nil || len(results) != 1 {
		t.Fatalf("plan: %v, %v\n%s\nstderr:\n%s", err, jsonErr, stdout.String(), stderr.String())
	}
	r := results[0]
	if cmd.ProcessState.ExitCode() != 1 || !r.Refused || r.Condition == nil || r.Condition.Reason != samplecrdv1.ReasonNotAllowed ||
		!strings.Contains(r.Condition.Message, "maxNetworks: 3") || len(r.Requests) != 0 {
		t.Errorf("plan exited %d with %+v, want 1 and a refusal NotAllowed naming maxNetworks: 3, before any request", cmd.ProcessState.ExitCode(), r)
	}
	list, err := networkClient(t).SamplecrdV1().Networks(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 {
		t.Errorf("the namespace holds %d Networks after the plan, want 3: the plan wrote", len(list.Items))
	}
}
