package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/test/cases"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestAPIServerEnforcesTheNetworkSchema sends the shared table of valid and
// invalid specs (test/cases) through the real kube-apiserver: what the CRD's
// unit test proves with the apiextensions validators, the server must do too.
func TestAPIServerEnforcesTheNetworkSchema(t *testing.T) {
	ctx := framework.TestContext(t, time.Minute)
	ns := newNamespace(ctx, t)
	networksClient := dynamicClient(t).Resource(networksResource).Namespace(ns)

	examples, err := cases.Examples(stack.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples {
		if _, err := networksClient.Create(ctx, ex, metav1.CreateOptions{}); err != nil {
			t.Errorf("example %s refused: %v", ex.GetName(), err)
		}
	}
	i := 0
	for name, spec := range cases.ValidSpecs() {
		i++
		if _, err := networksClient.Create(ctx, cases.Object("valid-"+string(rune('a'+i)), spec), metav1.CreateOptions{}); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
	for i, u := range cases.ValidUpdates() {
		name := "update-" + string(rune('a'+i))
		created, err := networksClient.Create(ctx, cases.Object(name, u.Old), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: creating the old object: %v", u.Name, err)
		}
		updated := cases.Object(name, u.New)
		updated.SetResourceVersion(created.GetResourceVersion())
		if _, err := networksClient.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
			t.Errorf("%s: refused: %v", u.Name, err)
		}
	}

	for i, tc := range cases.InvalidSpecs() {
		t.Run(tc.Name, func(t *testing.T) {
			name := fmt.Sprintf("invalid-%d", i)
			var err error
			if tc.Old == nil {
				_, err = networksClient.Create(ctx, cases.Object(name, tc.Spec), metav1.CreateOptions{})
			} else {
				created, cerr := networksClient.Create(ctx, cases.Object(name, tc.Old), metav1.CreateOptions{})
				if cerr != nil {
					t.Fatalf("creating the old object: %v", cerr)
				}
				obj := cases.Object(name, tc.Spec)
				obj.SetResourceVersion(created.GetResourceVersion())
				_, err = networksClient.Update(ctx, obj, metav1.UpdateOptions{})
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v; want 422 Invalid on %s saying %q", err, tc.Field, tc.Message)
			}
			if !strings.Contains(err.Error(), tc.Field+":") || !strings.Contains(err.Error(), tc.Message) {
				t.Errorf("got %q; want it to name %s and say %q", err, tc.Field, tc.Message)
			}
		})
	}
}

// TestNeutronNetworkAppearsInOVN proves the Neutron half of the harness: a
// network and subnet made through the real neutron-server become a logical
// switch and DHCP options in OVN's Northbound database, and go away again.
func TestNeutronNetworkAppearsInOVN(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	client := stack.Neutron.Client

	network, err := networks.Create(ctx, client, networks.CreateOpts{Name: "harness-network"}).Extract()
	if err != nil {
		t.Fatalf("creating a network: %v", err)
	}
	subnet, err := subnets.Create(ctx, client, subnets.CreateOpts{
		NetworkID: network.ID, CIDR: "10.77.0.0/24", IPVersion: gophercloud.IPv4, GatewayIP: ptr.To("10.77.0.1"),
	}).Extract()
	if err != nil {
		t.Fatalf("creating a subnet: %v", err)
	}
	got, err := subnets.Get(ctx, client, subnet.ID).Extract()
	if err != nil {
		t.Fatalf("reading the subnet back: %v", err)
	}
	if got.CIDR != "10.77.0.0/24" || got.GatewayIP != "10.77.0.1" || got.NetworkID != network.ID {
		t.Errorf("subnet reads back as cidr %s gateway %s network %s", got.CIDR, got.GatewayIP, got.NetworkID)
	}

	switchName := "neutron-" + network.ID
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Switch", "name="+switchName)
		return strings.TrimSpace(out) == switchName, "logical switch " + switchName + " in NB: " + out, err
	})
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		out, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=options", "find", "DHCP_Options", `cidr="10.77.0.0/24"`)
		return strings.Contains(out, "router=10.77.0.1"), "DHCP_Options for 10.77.0.0/24 with router=10.77.0.1: " + out, err
	})

	if err := subnets.Delete(ctx, client, subnet.ID).ExtractErr(); err != nil {
		t.Fatalf("deleting the subnet: %v", err)
	}
	if err := networks.Delete(ctx, client, network.ID).ExtractErr(); err != nil {
		t.Fatalf("deleting the network: %v", err)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		ls, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Switch", "name="+switchName)
		if err != nil {
			return false, "", err
		}
		dhcp, err := stack.Neutron.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "DHCP_Options", `cidr="10.77.0.0/24"`)
		return strings.TrimSpace(ls+dhcp) == "", "still in NB: " + ls + dhcp, err
	})
}

// TestNeutronServerRestartIsSurvived stops neutron-server and starts it
// again on the same port and database: what existed before is still there
// and new requests work (the outage tests restart the Keystone one alike).
func TestNeutronServerRestartIsSurvived(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	client := stack.Neutron.Client

	before, err := networks.Create(ctx, client, networks.CreateOpts{Name: "before-restart"}).Extract()
	if err != nil {
		t.Fatalf("creating a network: %v", err)
	}
	t.Cleanup(func() { _ = networks.Delete(context.Background(), client, before.ID).ExtractErr() })

	if err := stack.Neutron.StopServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := networks.Get(ctx, client, before.ID).Extract(); err == nil {
		t.Fatal("neutron-server answered while stopped")
	}
	if err := stack.Neutron.StartServer(ctx); err != nil {
		t.Fatalf("restarting neutron-server: %v", err)
	}

	if _, err := networks.Get(ctx, client, before.ID).Extract(); err != nil {
		t.Errorf("the network made before the restart is gone: %v", err)
	}
	after, err := networks.Create(ctx, client, networks.CreateOpts{Name: "after-restart"}).Extract()
	if err != nil {
		t.Fatalf("creating a network after the restart: %v", err)
	}
	if err := networks.Delete(ctx, client, after.ID).ExtractErr(); err != nil {
		t.Errorf("deleting it: %v", err)
	}
}

// TestServiceAccountIdentityIsSubjectToRBAC mints a kubeconfig for a fresh
// ServiceAccount through the TokenRequest API and checks that the API
// server authenticates it and, with RBAC on and no role bound, refuses it.
func TestServiceAccountIdentityIsSubjectToRBAC(t *testing.T) {
	ctx := framework.TestContext(t, time.Minute)
	ns := newNamespace(ctx, t)
	config, err := stack.ControlPlane.ServiceAccountConfig(ctx, ns, "nobody")
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("asking the API server who the token is: %v", err)
	}
	if want := "system:serviceaccount:" + ns + ":nobody"; review.Status.UserInfo.Username != want {
		t.Errorf("authenticated as %q, want %q", review.Status.UserInfo.Username, want)
	}
	_, err = dynamic.NewForConfigOrDie(config).Resource(networksResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("listing Networks with no role bound: %v, want Forbidden", err)
	}
}
