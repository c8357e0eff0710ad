package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestImportBringsAProjectUnderManagement is issue 36's import: a project
// holds networks made by hand — one plain, one with options, one with two
// subnets — and `network-controller import` prints a Network for each of
// the first two and says why it skips the third. kubectl applies the
// output as printed in a namespace granted adoption; each Network becomes
// Ready with the hand-made IDs, and the controller's only writes to
// Neutron are the four marks. Deleting the Networks gives the networks
// back under their own names.
func TestImportBringsAProjectUnderManagement(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t)
	prefix := "imp-" + ns[len(ns)-6:] + "-"
	type made struct{ networkID, subnetID string }
	handMade := func(name string, subnetOpts ...subnets.CreateOpts) made {
		t.Helper()
		n, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{Name: prefix + name, Description: "made by hand"}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = networks.Delete(context.Background(), stack.Neutron.Client, n.ID).ExtractErr() })
		var m made
		for _, o := range subnetOpts {
			o.NetworkID, o.IPVersion, o.Name = n.ID, 4, prefix+name+"-subnet"
			s, err := subnets.Create(ctx, stack.Neutron.Client, o).Extract()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = subnets.Delete(context.Background(), stack.Neutron.Client, s.ID).ExtractErr() })
			m = made{n.ID, s.ID}
		}
		return m
	}
	plain := handMade("plain", subnets.CreateOpts{CIDR: "10.121.0.0/24", GatewayIP: ptr.To("10.121.0.1")})
	options := handMade("options", subnets.CreateOpts{CIDR: "10.122.0.0/24", GatewayIP: ptr.To("10.122.0.254"),
		DNSNameservers: []string{"10.122.0.53"}, HostRoutes: []subnets.HostRoute{{DestinationCIDR: "10.200.0.0/16", NextHop: "10.122.0.254"}},
		AllocationPools: []subnets.AllocationPool{{Start: "10.122.0.10", End: "10.122.0.99"}}, EnableDHCP: ptr.To(false)})
	two := handMade("two", subnets.CreateOpts{CIDR: "10.123.0.0/24"}, subnets.CreateOpts{CIDR: "10.124.0.0/24"})

	cmd := exec.CommandContext(ctx, controllerBinary, "import", "--neutron-endpoint="+stack.Neutron.Endpoint, "--name="+prefix+"*")
	var manifests, skipped bytes.Buffer
	cmd.Stdout, cmd.Stderr = &manifests, &skipped
	if err := cmd.Run(); err != nil {
		t.Fatalf("network-controller import: %v\n%s", err, skipped.String())
	}
	if !strings.Contains(skipped.String(), two.networkID) || !strings.Contains(skipped.String(), "2 subnets") {
		t.Errorf("import did not say why it skipped the network with two subnets: %q", skipped.String())
	}
	if n := strings.Count(manifests.String(), "kind: Network\n"); n != 2 {
		t.Fatalf("import printed %d Networks, want 2:\n%s", n, manifests.String())
	}

	grant(ctx, t, ns, samplecrdv1.TenantPolicySpec{Adoption: true})
	c := startController(t, ns)
	cleanupNetworks(t, ns)
	apply := exec.CommandContext(ctx, "kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig, "-n", ns, "apply", "-f", "-")
	apply.Stdin = bytes.NewReader(manifests.Bytes())
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply of import's output: %v\n%s", err, out)
	}
	for name, want := range map[string]made{prefix + "plain": plain, prefix + "options": options} {
		n := waitForReady(ctx, t, ns, name, time.Minute)
		if n.Status.NetworkID != want.networkID || n.Status.SubnetID != want.subnetID {
			t.Errorf("%s: status names %s/%s, want the hand-made %s/%s", name, n.Status.NetworkID, n.Status.SubnetID, want.networkID, want.subnetID)
		}
	}
	creates := c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "POST"})
	updates := c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"method": "PUT"})
	if creates != 0 || updates != 4 {
		t.Errorf("the controller sent %v creates and %v updates to Neutron, want none and the 4 marks", creates, updates)
	}

	// Released (deletionPolicy Orphan, an adopted network's default): the
	// hand-made names come back.
	for _, name := range []string{"plain", "options"} {
		if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, prefix+name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForGone(ctx, t, ns, prefix+name, time.Minute)
	}
	for name, m := range map[string]made{"plain": plain, "options": options} {
		if n, err := networks.Get(ctx, stack.Neutron.Client, m.networkID).Extract(); err != nil || n.Name != prefix+name || n.Description != "made by hand" {
			t.Errorf("released network %s is %+v (%v), want its own name and description back", m.networkID, n, err)
		}
		if s := neutronSubnet(ctx, t, m.subnetID); s.Name != prefix+name+"-subnet" {
			t.Errorf("released subnet %s is named %q, want its own name back", m.subnetID, s.Name)
		}
	}
}

// TestImportPrintsOnlyNetworks is issue 40's finding 2 against the real
// Neutron: a network whose name holds newlines and a document (a binding
// of cluster-admin) is imported, and what import prints, read by a YAML
// decoder and by kubectl apply --dry-run=server, is one Network per
// importable network and nothing else; its stderr has one line per
// skipped network, whatever its name.
func TestImportPrintsOnlyNetworks(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	ns := newNamespace(ctx, t)
	prefix := "hostile-" + ns[len(ns)-6:] + "-"
	// Neutron keeps names of up to 255 characters, newlines included;
	// the last # makes a comment of what a raw print would add after it.
	hostile := prefix + "app\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: pwned}\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: User, name: mallory}]\n#"
	makeNetwork := func(cidr string) string {
		t.Helper()
		n, err := networks.Create(ctx, stack.Neutron.Client, networks.CreateOpts{Name: hostile, Description: hostile}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = networks.Delete(context.Background(), stack.Neutron.Client, n.ID).ExtractErr() })
		if n.Name != hostile {
			t.Fatalf("Neutron keeps the name as %q, want %q", n.Name, hostile)
		}
		if cidr != "" {
			s, err := subnets.Create(ctx, stack.Neutron.Client, subnets.CreateOpts{NetworkID: n.ID, IPVersion: 4, CIDR: cidr, Name: hostile}).Extract()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = subnets.Delete(context.Background(), stack.Neutron.Client, s.ID).ExtractErr() })
		}
		return n.ID
	}
	importable := makeNetwork("10.125.0.0/24")
	skippedID := makeNetwork("") // no subnet: skipped

	// path.Match's * stops at a slash: the second pattern takes the
	// name's apiVersion.
	cmd := exec.CommandContext(ctx, controllerBinary, "import", "--neutron-endpoint="+stack.Neutron.Endpoint, "--name="+prefix+"*", "--name="+prefix+"*/*")
	var manifests, skipped bytes.Buffer
	cmd.Stdout, cmd.Stderr = &manifests, &skipped
	if err := cmd.Run(); err != nil {
		t.Fatalf("network-controller import: %v\n%s", err, skipped.String())
	}
	if lines := strings.Split(strings.TrimSuffix(skipped.String(), "\n"), "\n"); len(lines) != 1 || !strings.Contains(lines[0], skippedID) {
		t.Errorf("stderr has %d lines, want the one of the network without a subnet, %s:\n%s", len(lines), skippedID, skipped.String())
	}

	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests.Bytes()), 4096)
	var docs []samplecrdv1.Network
	for {
		var n samplecrdv1.Network
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("import's output does not parse: %v\n%s", err, manifests.String())
		}
		docs = append(docs, n)
	}
	if len(docs) != 1 || docs[0].Kind != "Network" || docs[0].Spec.Adopt == nil || docs[0].Spec.Adopt.NetworkID != importable {
		t.Fatalf("import printed %d documents, want one Network that adopts %s:\n%s", len(docs), importable, manifests.String())
	}

	apply := exec.CommandContext(ctx, "kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig, "-n", ns,
		"apply", "--dry-run=server", "-o", "name", "-f", "-")
	apply.Stdin = bytes.NewReader(manifests.Bytes())
	var applied, applyErr bytes.Buffer
	apply.Stdout, apply.Stderr = &applied, &applyErr
	if err := apply.Run(); err != nil {
		t.Fatalf("kubectl apply --dry-run=server of import's output: %v\n%s\n%s", err, applied.String(), applyErr.String())
	}
	if got, want := strings.TrimSpace(applied.String()), "network.samplecrd.k8s.io/"+docs[0].Name; got != want {
		t.Errorf("kubectl apply --dry-run=server would apply:\n%s\nwant only %s", got, want)
	}
}
