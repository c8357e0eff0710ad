package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestAdoptionNeverTakesASharedOrExternalNetwork (issue 40, finding 1): the
// cloud's admin makes a shared network and an external one
// (router:external), each with a subnet the spec matches exactly. A
// namespace that a TenantPolicy grants adoption, and that even names both
// networks by ID, is refused both (AdoptionRefused, saying why), and
// Neutron's JSON of each network and subnet, revision_number included, is
// unchanged afterwards: nothing was marked.
func TestAdoptionNeverTakesASharedOrExternalNetwork(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	startController(t, ns, "--max-retry-delay=2s")
	cleanupNetworks(t, ns)

	isTrue := true
	made := map[string]struct{ network, subnet string }{}
	for _, tc := range []struct {
		name, cidr string
		opts       networks.CreateOptsBuilder
	}{
		{"shared", "10.197.0.0/24", networks.CreateOpts{Name: "platform-" + ns, Shared: &isTrue}},
		{"external", "10.197.1.0/24", external.CreateOptsExt{CreateOptsBuilder: networks.CreateOpts{Name: "public-" + ns}, External: &isTrue}},
	} {
		n, err := networks.Create(ctx, stack.Neutron.Client, tc.opts).Extract()
		if err != nil {
			t.Fatalf("creating the %s network: %v", tc.name, err)
		}
		gateway := strings.TrimSuffix(tc.cidr, "0/24") + "1"
		s, err := subnets.Create(ctx, stack.Neutron.Client, subnets.CreateOpts{NetworkID: n.ID, CIDR: tc.cidr, GatewayIP: &gateway,
			IPVersion: gophercloud.IPv4}).Extract()
		if err != nil {
			t.Fatalf("creating the subnet of the %s network: %v", tc.name, err)
		}
		t.Cleanup(func() {
			_ = subnets.Delete(context.Background(), stack.Neutron.Client, s.ID).ExtractErr()
			_ = networks.Delete(context.Background(), stack.Neutron.Client, n.ID).ExtractErr()
		})
		made[tc.name] = struct{ network, subnet string }{n.ID, s.ID}
	}
	before := map[string]string{}
	for _, m := range made {
		for _, path := range []string{"networks/" + m.network, "subnets/" + m.subnet} {
			before[path] = neutronJSON(ctx, t, path)
		}
	}

	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{Adoption: true, AdoptNetworks: []string{made["shared"].network, made["external"].network}})
	for _, tc := range []struct{ name, cidr string }{{"shared", "10.197.0.0/24"}, {"external", "10.197.1.0/24"}} {
		createRouted(ctx, t, ns, tc.name, samplecrdv1.NetworkSpec{CIDR: tc.cidr, Gateway: strings.TrimSuffix(tc.cidr, "0/24") + "1",
			Adopt: &samplecrdv1.Adoption{NetworkID: made[tc.name].network}})
	}
	for _, tc := range []struct{ name, says string }{
		{"shared", "shared with every project"},
		{"external", "external network (router:external)"},
	} {
		n := waitForCondition(ctx, t, ns, tc.name, time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonAdoptionRefused)
		if msg := readyCondition(n).Message; !strings.Contains(msg, tc.says) {
			t.Errorf("%s: message %q, want one that says %q", tc.name, msg, tc.says)
		}
		if n.Status.Adopted != nil || n.Status.NetworkID != "" {
			t.Errorf("%s: status records an adoption: %+v", tc.name, n.Status)
		}
	}
	for path, was := range before {
		if now := neutronJSON(ctx, t, path); now != was {
			t.Errorf("%s changed:\nbefore %s\nafter  %s", path, was, now)
		}
	}
}
