package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestConversionWebhookServesBothVersions runs the controller with its
// conversion webhook on 127.0.0.1 and the Network CRD converting through
// it, as `make run` does, on a cluster of its own: the CRD's conversion is
// cluster-wide, the webhook goes when this test's controller does, and on
// a cluster that never converted through the stack's webhook only the
// controller's can have answered.
// A dual-stack v2 Network read through v1, and written back through v1
// with a new label, loses nothing of its v2 spec; a v1 Network is a v2
// Network with one subnet (its create is converted to v2 by the webhook),
// which the controller, reading v2, makes Ready.
func TestConversionWebhookServesBothVersions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	other := startOtherClusterWithoutConversion(ctx, t)
	const ns = "conversion"
	other.namespace(ctx, t, ns)

	cert, err := newServingCertificateIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ports, err := framework.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	c := startControllerOn(t, other.cp, ns, nil, "--conversion-bind-address="+addr,
		"--conversion-tls-cert-file="+cert.CertFile, "--conversion-tls-key-file="+cert.KeyFile)
	c.waitServing(ctx, t)
	if err := framework.UseConversionWebhook(ctx, other.cp.AdminConfig, "https://"+addr+"/convert", cert.CAPEM); err != nil {
		t.Fatal(err)
	}
	v1Networks, v2Networks := other.nc.SamplecrdV1().Networks(ns), other.nc.SamplecrdV2().Networks(ns)

	dualStack := samplecrdv2.NetworkSpec{
		Subnets: []samplecrdv2.SubnetSpec{{
			CIDR: "10.83.0.0/24", Gateway: "10.83.0.1", DNSNameservers: []string{"10.83.0.53"},
			HostRoutes:      []samplecrdv2.HostRoute{{Destination: "10.84.0.0/16", NextHop: "10.83.0.254"}},
			AllocationPools: []samplecrdv2.AllocationPool{{Start: "10.83.0.10", End: "10.83.0.200"}},
			EnableDHCP:      ptr.To(true),
		}, {
			CIDR: "fd00:83::/64", IPv6AddressMode: "slaac", IPv6RAMode: "slaac", DNSNameservers: []string{"fd00:83::53"},
		}},
		MTU:            ptr.To[int32](1400),
		DeletionPolicy: samplecrdv2.DeletionPolicy(samplecrdv1.DeletionPolicyDelete),
	}
	if _, err := v2Networks.Create(ctx, &samplecrdv2.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "dual", Labels: map[string]string{"stack": "dual"}, Annotations: map[string]string{"note": "kept"}},
		Spec:       dualStack,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the v2 Network: %v", err)
	}

	// Read through v1: the first subnet at the top, the second in the
	// annotation. The API server takes up the CRD's new conversion shortly
	// after the update; until then a v1 read is not converted.
	var asV1 *samplecrdv1.Network
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		n, err := v1Networks.Get(ctx, "dual", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		asV1 = n
		return n.Spec.CIDR == "10.83.0.0/24" && n.Annotations[samplecrdv1.SubnetsAnnotation] != "",
			fmt.Sprintf("v1 spec.cidr %q, annotations %v", n.Spec.CIDR, n.Annotations), nil
	})
	if asV1.Spec.Gateway != "10.83.0.1" || asV1.Spec.MTU == nil || *asV1.Spec.MTU != 1400 || asV1.Annotations["note"] != "kept" {
		t.Errorf("the v1 form is not the first subnet and the network's fields: %+v", asV1)
	}

	// Write it back through v1, changing only a label (the controller
	// writes it too, through v2: its finalizer, its status).
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := v1Networks.Get(ctx, "dual", metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Labels["written-through"] = "v1"
		_, err = v1Networks.Update(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("updating the Network through v1: %v", err)
	}

	// A v1 Network, made through v1, is a v2 Network with one subnet, and
	// the controller makes it Ready through the webhook.
	if _, err := v1Networks.Create(ctx, &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "single"},
		Spec:       samplecrdv1.NetworkSpec{CIDR: "10.85.0.0/24", Gateway: "10.85.0.1", DNSNameservers: []string{"10.85.0.53"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the v1 Network: %v", err)
	}
	ready := waitForConditionIn(ctx, t, other.nc, ns, "single", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
	single, err := v2Networks.Get(ctx, "single", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]samplecrdv2.SubnetSpec{{CIDR: "10.85.0.0/24", Gateway: "10.85.0.1", DNSNameservers: []string{"10.85.0.53"}}}, single.Spec.Subnets); d != "" {
		t.Errorf("the v1 Network as v2 (-want +got):\n%s", d)
	}
	if len(single.Status.Subnets) != 1 || single.Status.Subnets[0].ID != ready.Status.SubnetID || single.Status.NetworkID != ready.Status.NetworkID {
		t.Errorf("the v1 Network's status as v2: %+v, want its subnet %s of network %s", single.Status, ready.Status.SubnetID, ready.Status.NetworkID)
	}

	// The dual-stack Network, after the label written through v1 and
	// what the controller wrote through v2, has its whole v2 spec.
	dual, err := v2Networks.Get(ctx, "dual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(dualStack, dual.Spec); d != "" {
		t.Errorf("the v2 spec after a write through v1 (-want +got):\n%s", d)
	}
	if want := map[string]string{"stack": "dual", "written-through": "v1"}; !cmp.Equal(want, dual.Labels) {
		t.Errorf("labels %v, want %v", dual.Labels, want)
	}
	if want := map[string]string{"note": "kept"}; !cmp.Equal(want, dual.Annotations) {
		t.Errorf("annotations %v, want %v (the conversion's own annotation is not stored)", dual.Annotations, want)
	}

	// Both go, through the controller, while the webhook still serves.
	for _, name := range []string{"dual", "single"} {
		if err := v2Networks.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		for _, name := range []string{"dual", "single"} {
			if _, err := v2Networks.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("Network %s still there (%v)", name, err), nil
			}
		}
		return true, "", nil
	})
}

// newServingCertificateIn is a certificate for 127.0.0.1, as the API
// server reaches the webhook out of cluster.
func newServingCertificateIn(dir string) (*framework.ServingCertificate, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return framework.NewServingCertificate(dir, []net.IP{net.ParseIP("127.0.0.1")}, nil)
}
