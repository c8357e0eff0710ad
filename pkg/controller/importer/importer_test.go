package importer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// project is a fake Neutron holding what a project made by hand might.
func project(t *testing.T) (*neutronfake.Neutron, map[string]string) {
	t.Helper()
	f := neutronfake.New()
	ids := map[string]string{}
	ids["plain"] = f.AddNetwork("app plain", "made by hand")
	f.AddSubnet(ids["plain"], "app-plain-subnet", "", "10.1.0.0/24", "10.1.0.1")
	ids["options"] = f.AddNetwork("db", "made by Terraform")
	opts := f.AddSubnet(ids["options"], "db-subnet", "", "10.2.0.0/24", "10.2.0.254")
	routes := []neutron.HostRoute{{Destination: "10.9.0.0/16", NextHop: "10.2.0.254"}}
	pools := []neutron.AllocationPool{{Start: "10.2.0.10", End: "10.2.0.99"}}
	if _, err := f.UpdateSubnet(context.Background(), opts, neutron.SubnetUpdate{DNSNameservers: &[]string{"10.2.0.53"}, HostRoutes: &routes,
		AllocationPools: &pools, EnableDHCP: ptr.To(false)}); err != nil {
		t.Fatal(err)
	}
	ids["two"] = f.AddNetwork("two-subnets", "")
	f.AddSubnet(ids["two"], "a", "", "10.3.0.0/24", "10.3.0.1")
	f.AddSubnet(ids["two"], "b", "", "10.4.0.0/24", "10.4.0.1")
	ids["none"] = f.AddNetwork("empty", "")
	ids["shared"] = f.AddNetwork("shared", "")
	f.AddSubnet(ids["shared"], "s", "", "10.5.0.0/24", "10.5.0.1")
	f.ShareNetwork(ids["shared"])
	mark, err := neutron.NewMark("other", "c1c1c1c1-0000-4000-8000-0000000000c1")
	if err != nil {
		t.Fatal(err)
	}
	ids["marked"] = f.AddNetwork("ns/x/uid/other", mark.Description())
	f.AddSubnet(ids["marked"], "ns/x/uid/other", mark.Description(), "10.6.0.0/24", "10.6.0.1")
	return f, ids
}

// TestWhatIsImportedAndWhatIsSkipped is the specification of import:
// a Network for each network a Network can adopt, with a spec that says
// exactly what Neutron holds (checked as adoption checks it), and a
// reason for each other; Neutron is only read.
func TestWhatIsImportedAndWhatIsSkipped(t *testing.T) {
	f, ids := project(t)
	f.ClearRequests()
	cs, err := Candidates(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Candidate{}
	for _, c := range cs {
		byID[c.NetworkID] = c
	}
	for key, wantSkip := range map[string]string{
		"plain": "", "options": "",
		"two": "2 subnets", "none": "no subnet", "shared": "shared with every project", "marked": "already marked",
	} {
		c, ok := byID[ids[key]]
		switch {
		case !ok:
			t.Errorf("%s: not among the candidates", key)
		case wantSkip == "" && c.Network == nil:
			t.Errorf("%s: skipped (%s), want a Network", key, c.Skipped)
		case wantSkip != "" && (c.Network != nil || !strings.Contains(c.Skipped, wantSkip)):
			t.Errorf("%s: %+v, want skipped for %q", key, c, wantSkip)
		}
	}
	for _, req := range f.Requests() {
		if req != neutronfake.ListNetworks && req != neutronfake.ListSubnets {
			t.Errorf("import made request %s: it must only read", req)
		}
	}

	// The spec is what adoption compares: no field differs.
	subnets := map[string]neutron.Subnet{}
	for _, s := range f.Subnets() {
		subnets[s.NetworkID] = s
	}
	for _, key := range []string{"plain", "options"} {
		n := byID[ids[key]].Network
		want, err := desired.SubnetOf(desired.FromV1(n.Spec), n.Spec.CIDR)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if _, diffs := want.Update(subnets[ids[key]]); len(diffs) > 0 {
			t.Errorf("%s: the imported spec differs from Neutron in %v", key, diffs)
		}
		if n.Spec.Adopt == nil || n.Spec.Adopt.NetworkID != ids[key] {
			t.Errorf("%s: adopts %+v, want %s", key, n.Spec.Adopt, ids[key])
		}
	}
	if got := byID[ids["plain"]].Network.Name; got != "app-plain" {
		t.Errorf("the Network of %q is named %q, want app-plain", "app plain", got)
	}
	if opts := byID[ids["options"]].Network.Spec; *opts.EnableDHCP || len(opts.HostRoutes) != 1 || opts.Gateway != "10.2.0.254" {
		t.Errorf("the options were not imported: %+v", opts)
	}
}

// TestTheOutputIsWhatKubectlApplies: the manifests parse as Networks,
// with apiVersion and kind, no status, no namespace (kubectl apply -n
// chooses it); the filter by name keeps only the matching networks.
func TestTheOutputIsWhatKubectlApplies(t *testing.T) {
	f, _ := project(t)
	cs, err := Candidates(context.Background(), f, []string{"db", "two-*"})
	if err != nil {
		t.Fatal(err)
	}
	var manifests, skipped bytes.Buffer
	if err := Write(&manifests, &skipped, cs); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(manifests.String(), "\n---\n")
	if len(docs) != 1 {
		t.Fatalf("%d manifests, want the one of db:\n%s", len(docs), manifests.String())
	}
	var n samplecrdv1.Network
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &n); err != nil {
		t.Fatalf("%v:\n%s", err, docs[0])
	}
	if n.Kind != "Network" || n.APIVersion != "samplecrd.k8s.io/v1" || n.Name != "db" || n.Namespace != "" || strings.Contains(docs[0], "status") {
		t.Errorf("manifest:\n%s", docs[0])
	}
	if !strings.Contains(skipped.String(), "two-subnets") || strings.Contains(skipped.String(), "shared") {
		t.Errorf("skipped: %q, want only two-subnets, the one filtered in", skipped.String())
	}
}

// TestNamesAreNetworkNames: any Neutron name becomes a valid, unique
// Network name.
func TestNamesAreNetworkNames(t *testing.T) {
	taken := map[string]bool{}
	for _, tc := range []struct{ neutron, id, want string }{
		{"App_Net 1", "aaaaaaaa-1", "app-net-1"},
		{"app-net-1", "bbbbbbbb-2", "app-net-1-bbbbbbbb"},
		{"", "cccccccc-3", "network-cccccccc"},
		{"---", "dddddddd-4", "network-dddddddd"},
		{strings.Repeat("x", 300), "eeeeeeee-5", strings.Repeat("x", 253)},
	} {
		if got := kubernetesName(neutron.Network{Name: tc.neutron, ID: tc.id}, taken); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.neutron, got, tc.want)
		}
	}
}
