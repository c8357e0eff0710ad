package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	"github.com/samplecrd/network-controller/test/framework"
)

// throughKeystone starts a controller for ns that reaches Neutron as a
// user does: no --neutron-endpoint, the cloud named from the stack's
// clouds.yaml, Keystone's catalog for neutron-server's address.
func throughKeystone(t *testing.T, ns, cloud string, extraArgs ...string) *controller {
	t.Helper()
	return withCloud(t, ns, stack.Keystone.CloudsYAML, cloud, extraArgs...)
}

// withCloud starts a controller for ns on the cloud of the clouds.yaml
// cloudsYAML, with no --neutron-endpoint.
func withCloud(t *testing.T, ns, cloudsYAML, cloud string, extraArgs ...string) *controller {
	t.Helper()
	return startControllerWithEnv(t, ns, []string{"OS_CLIENT_CONFIG_FILE=" + cloudsYAML},
		append([]string{"--neutron-endpoint=", "--os-cloud=" + cloud}, extraArgs...)...)
}

// newTenant makes a Keystone project and member user of the test's own,
// named ns (see framework.Keystone.NewTenant): its quota and its ports are
// no other test's business. With networkURL, the tenant's catalog sends
// its network requests there, e.g. to a fault proxy.
func newTenant(ctx context.Context, t *testing.T, ns, networkURL string) *framework.Tenant {
	t.Helper()
	tenant, err := stack.Keystone.NewTenant(ctx, ns, networkURL)
	if err != nil {
		t.Fatal(err)
	}
	return tenant
}

// asTenant starts a controller for ns that works as tenant, through
// Keystone, as throughKeystone does for the stack's controller project.
func asTenant(t *testing.T, ns string, tenant *framework.Tenant, extraArgs ...string) *controller {
	t.Helper()
	return withCloud(t, ns, tenant.CloudsYAML, tenant.Cloud, extraArgs...)
}

// TestKeystoneAuthentication: with the password, and with an application
// credential, the controller authenticates to the real Keystone and its
// Networks become Ready; Neutron holds them in the controller's project,
// which proves the token was Keystone's and neutron-server validated it.
func TestKeystoneAuthentication(t *testing.T) {
	for i, cloud := range []string{framework.PasswordCloud, framework.AppCredentialCloud} {
		t.Run(cloud, func(t *testing.T) {
			ctx := framework.TestContext(t, 2*time.Minute)
			ns := newNamespace(ctx, t)
			c := throughKeystone(t, ns, cloud)
			cleanupNetworks(t, ns)
			c.waitReady(ctx, t)
			createNetwork(ctx, t, ns, "keystone", fmt.Sprintf("10.90.%d.0/24", i), "")
			n := waitForReady(ctx, t, ns, "keystone", time.Minute)
			got, err := networks.Get(ctx, stack.Neutron.Client, n.Status.NetworkID).Extract()
			if err != nil {
				t.Fatal(err)
			}
			if got.ProjectID != stack.Keystone.ProjectID {
				t.Errorf("network %s is in project %q, want the controller's %q", got.ID, got.ProjectID, stack.Keystone.ProjectID)
			}
			if codes := c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"code": "401"}); codes != 0 {
				t.Errorf("%v requests refused as unauthenticated on a fresh token", codes)
			}
		})
	}
}

// TestTokenExpiryIsSurvived keeps one controller working across two
// token lifetimes (framework.TokenLifetime, set in keystone.conf). Its
// periodic lists (every 10 s here) meet each expiry first: Neutron refuses
// the expired token (a 401 in the controller's metrics), the controller
// authenticates again, and a Network created after each such refusal
// becomes Ready. The process is the same throughout. It runs beside the
// other tests: it mostly waits.
func TestTokenExpiryIsSurvived(t *testing.T) {
	t.Parallel()
	lifetimes := 2
	ctx := framework.TestContext(t, time.Duration(lifetimes+2)*framework.TokenLifetime)
	ns := newNamespace(ctx, t)
	c := startControllerWithEnv(t, ns, []string{"OS_CLIENT_CONFIG_FILE=" + stack.Keystone.CloudsYAML},
		"--neutron-endpoint=", "--os-cloud="+framework.PasswordCloud, "--neutron-resync-period=10s")
	cleanupNetworks(t, ns)
	c.waitReady(ctx, t)
	expired := func() float64 {
		return c.metric(ctx, t, "network_controller_neutron_requests_total", map[string]string{"code": "401"})
	}
	for i := range lifetimes + 1 {
		if i > 0 {
			framework.Eventually(ctx, t, framework.TokenLifetime+30*time.Second, func(context.Context) (bool, string, error) {
				n := expired()
				return n >= float64(i), fmt.Sprintf("%v expired tokens refused, waiting for expiry %d", n, i), nil
			})
		}
		name := fmt.Sprintf("after-%d-expiries", i)
		createNetwork(ctx, t, ns, name, fmt.Sprintf("10.91.%d.0/24", i), "")
		waitForReady(ctx, t, ns, name, time.Minute)
	}
	if c.Exited() {
		t.Error("the controller exited")
	}
}

// TestWrongCredentialsAreReportedWithoutAHotLoop starts a controller whose
// clouds.yaml has a wrong password: it stays up, /readyz fails on its
// cloud-auth check, and its attempts back off. Five attempts take at least
// the 1+2+4 s of backoff between the first four, where a loop would make
// hundreds.
func TestWrongCredentialsAreReportedWithoutAHotLoop(t *testing.T) {
	ctx := framework.TestContext(t, time.Minute)
	ns := newNamespace(ctx, t)
	data, err := os.ReadFile(stack.Keystone.CloudsYAML)
	if err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(wrong, []byte(strings.ReplaceAll(string(data), stack.Keystone.Password, "not-the-password")), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c := startControllerWithEnv(t, ns, []string{"OS_CLIENT_CONFIG_FILE=" + wrong}, "--neutron-endpoint=", "--os-cloud="+framework.PasswordCloud)
	failures := func() float64 { return c.metric(ctx, t, "network_controller_neutron_auth_failures_total", nil) }
	framework.Eventually(ctx, t, 20*time.Second, func(ctx context.Context) (bool, string, error) {
		code, _ := get(ctx, c.probeURL+"/healthz")
		return code == http.StatusOK, fmt.Sprintf("/healthz: %d", code), nil
	})
	framework.Eventually(ctx, t, 40*time.Second, func(context.Context) (bool, string, error) {
		n := failures()
		return n >= 5, fmt.Sprintf("%v failed attempts", n), nil
	})
	if elapsed := time.Since(start); elapsed < 7*time.Second {
		t.Errorf("5 attempts in %s: the retries do not back off", elapsed)
	}
	if code, body := get(ctx, c.probeURL+"/readyz"); code == http.StatusOK || !strings.Contains(body, "[-]cloud-auth failed") {
		t.Errorf("/readyz: %d\n%s\nwant a failure of cloud-auth", code, body)
	}
	if c.Exited() {
		t.Error("the controller exited: a wrong password must be reported, not crash-looped")
	}
}
