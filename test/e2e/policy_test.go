package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/subnetpools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// Who may use what (issue 34): a TenantPolicy grants a namespace what its
// Networks may name outside themselves, and every lookup stays inside the
// Network's project.

// neutronJSON is Neutron's own JSON of the resource at path (e.g.
// "routers/<id>"), read as an operator, without what Neutron changes on
// its own (neutronsOwn): what the controller must not change.
func neutronJSON(ctx context.Context, t *testing.T, path string) string {
	t.Helper()
	var v any
	if _, err := stack.Neutron.Client.Get(ctx, stack.Neutron.Client.ServiceURL(strings.Split(path, "/")...), &v, nil); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	out, _ := json.Marshal(withoutNeutronsOwn(v))
	return string(out)
}

// neutronsOwn are the fields Neutron and OVN change on their own, which a
// resource untouched by the controller may show changed: a router's port
// goes ACTIVE once OVN binds it, seconds after it is made, raising its
// revision. Anything the controller could do shows in the other fields.
var neutronsOwn = []string{"status", "revision_number", "updated_at"}

// withoutNeutronsOwn is v, decoded JSON, without neutronsOwn at any depth.
func withoutNeutronsOwn(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range neutronsOwn {
			delete(v, k)
		}
		for k, e := range v {
			v[k] = withoutNeutronsOwn(e)
		}
	case []any:
		for i, e := range v {
			v[i] = withoutNeutronsOwn(e)
		}
	}
	return v
}

// TestANamespaceReachesOnlyWhatItIsGranted runs one controller with the
// cloud admin's credential, which can read every project's resources by
// ID: the case that makes every lookup's project matter. Namespace a has
// a Network with a router of its own. Namespace b, even where a careless
// policy grants it, cannot attach to a's router, reach a router, a network
// to adopt or a subnet pool of another project, or name a router no policy
// grants it; each is refused with a reason and Neutron's JSON of the
// resource is unchanged. A router of the controller's project that the
// administrator grants b is used, and b's Network is Ready on it.
func TestANamespaceReachesOnlyWhatItIsGranted(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	a, b := newNamespace(ctx, t), newNamespace(ctx, t)
	admin, err := stack.Keystone.AdminCloudsYAML()
	if err != nil {
		t.Fatal(err)
	}
	cloudsYAML := filepath.Join(stack.Dir, a+"-admin-clouds.yaml")
	if err := os.WriteFile(cloudsYAML, admin, 0o600); err != nil {
		t.Fatal(err)
	}
	public := externalNetwork(ctx, t, "public-"+a, "172.24.95.0/24")
	withCloud(t, a, cloudsYAML, framework.AdminCloud, "--namespace=")
	cleanupNetworks(t, a)
	cleanupNetworks(t, b)
	grant(ctx, t, a, samplecrdv1.TenantPolicySpec{ExternalNetworks: []string{public.Name}})

	createRouted(ctx, t, a, "own", samplecrdv1.NetworkSpec{CIDR: "10.95.0.0/24", Gateway: "10.95.0.1",
		Router: &samplecrdv1.RouterReference{ExternalNetwork: public.Name}})
	own := waitForReady(ctx, t, a, "own", 2*time.Minute)
	victim := own.Status.Router.ID
	project := own.Status.ProjectID

	// What lies in another project (the noauth server's own), which the
	// admin credential can read by ID.
	theirRouter := othersRouter(ctx, t, "theirs-"+b)
	theirNet, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{Name: "theirs-" + b}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = networks.Delete(context.Background(), stack.Neutron.Client, theirNet.ID).ExtractErr() })
	theirPool, err := subnetpools.Create(ctx, stack.Neutron.Client, subnetpools.CreateOpts{Name: "theirs-" + b,
		Prefixes: []string{"10.210.0.0/16"}, DefaultPrefixLen: 24}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = subnetpools.Delete(context.Background(), stack.Neutron.Client, theirPool.ID).ExtractErr() })
	if theirNet.ProjectID == project {
		t.Fatalf("the other resources are in the controller's project %s: the test needs two", project)
	}
	// A router of the controller's project, made by another tool, that
	// the administrator shares with b.
	shared, err := routers.Create(ctx, stack.Neutron.Client, routers.CreateOpts{Name: "shared-" + b, ProjectID: project}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = routers.Delete(context.Background(), stack.Neutron.Client, shared.ID).ExtractErr() })

	before := map[string]string{}
	for _, path := range []string{"routers/" + victim, "routers/" + theirRouter.ID, "networks/" + theirNet.ID, "subnetpools/" + theirPool.ID} {
		before[path] = neutronJSON(ctx, t, path)
	}
	victimPorts := neutronJSON(ctx, t, "ports?device_id="+victim)

	// A careless policy grants b a's router and the other project's
	// resources by ID; it does not grant "unlisted".
	grant(ctx, t, b, samplecrdv1.TenantPolicySpec{Routers: []string{victim, theirRouter.ID, shared.Name},
		Adoption: true, SubnetPools: []string{theirPool.ID}})
	for _, tc := range []struct {
		name, reason, says string
		spec               samplecrdv1.NetworkSpec
	}{
		{"on-a", samplecrdv1.ReasonNotAllowed, "made by a network-controller for a Network of its own",
			samplecrdv1.NetworkSpec{CIDR: "10.96.0.0/24", Router: &samplecrdv1.RouterReference{ID: victim}}},
		{"their-router", samplecrdv1.ReasonRouterNotFound, "0 routers of the project",
			samplecrdv1.NetworkSpec{CIDR: "10.96.1.0/24", Router: &samplecrdv1.RouterReference{ID: theirRouter.ID}}},
		{"unlisted", samplecrdv1.ReasonNotAllowed, `spec.router.name "unlisted-` + b + `" is not granted`,
			samplecrdv1.NetworkSpec{CIDR: "10.96.2.0/24", Router: &samplecrdv1.RouterReference{Name: "unlisted-" + b}}},
		{"adopter", samplecrdv1.ReasonAdoptionRefused, "does not exist",
			samplecrdv1.NetworkSpec{CIDR: "10.96.3.0/24", Adopt: &samplecrdv1.Adoption{NetworkID: theirNet.ID}}},
		{"pooled", samplecrdv1.ReasonNeutronRejected, "0 subnet pools of the project or shared",
			samplecrdv1.NetworkSpec{SubnetPool: theirPool.ID}},
	} {
		createRouted(ctx, t, b, tc.name, tc.spec)
		n := waitForCondition(ctx, t, b, tc.name, time.Minute, metav1.ConditionFalse, tc.reason)
		if msg := readyCondition(n).Message; !strings.Contains(msg, tc.says) || strings.Contains(msg, a) {
			t.Errorf("%s: message %q, want one that says %q and names nothing of namespace %s", tc.name, msg, tc.says, a)
		}
	}
	for path, was := range before {
		if now := neutronJSON(ctx, t, path); now != was {
			t.Errorf("%s changed:\nbefore %s\nafter  %s", path, was, now)
		}
	}
	if now := neutronJSON(ctx, t, "ports?device_id="+victim); now != victimPorts {
		t.Errorf("the ports of a's router changed:\nbefore %s\nafter  %s", victimPorts, now)
	}

	createRouted(ctx, t, b, "shared", samplecrdv1.NetworkSpec{CIDR: "10.96.4.0/24", Gateway: "10.96.4.1",
		Router: &samplecrdv1.RouterReference{Name: shared.Name}})
	n := waitForReady(ctx, t, b, "shared", time.Minute)
	if n.Status.Router == nil || n.Status.Router.ID != shared.ID {
		t.Fatalf("status.router = %+v, want the shared router %s", n.Status.Router, shared.ID)
	}
	port, err := ports.Get(ctx, stack.Neutron.Client, n.Status.Router.InterfacePortID).Extract()
	if err != nil || port.DeviceID != shared.ID {
		t.Errorf("b's interface %+v (%v) is not on the shared router", port, err)
	}
}
