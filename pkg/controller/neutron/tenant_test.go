package neutron

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
)

// ownCloud is the controller's cloud: its Keystone, a CA bundle and a
// client certificate of its own.
func ownCloud() *Cloud {
	return &Cloud{
		auth: gophercloud.AuthOptions{IdentityEndpoint: "https://keystone.example:5000/v3", Username: "controller", DomainName: "Default"},
		tls:  &tls.Config{RootCAs: x509.NewCertPool(), Certificates: []tls.Certificate{{}}},
	}
}

// tenantYAML is a namespace's clouds.yaml with one cloud, "team", whose
// entry ends with extra.
func tenantYAML(extra string) []byte {
	return []byte(`clouds:
  team:
    auth:
      auth_url: https://keystone.example:5000/v3
      username: team-a
      password: secret
      project_name: team-a
      user_domain_name: Default
      project_domain_name: Default
` + extra)
}

func TestATenantCloudTakesNothingOfTheControllers(t *testing.T) {
	// What clouds.Parse would fill a cloud in from: the controller's
	// environment and the files it names.
	t.Setenv("OS_REGION_NAME", "controller-region")
	t.Setenv("OS_INTERFACE", "admin")
	t.Setenv("OS_CLIENT_CONFIG_FILE", "/nonexistent/clouds.yaml")

	cloud, err := ParseTenantCloud(ownCloud(), tenantYAML("    region_name: RegionTwo\n"), "team")
	if err != nil {
		t.Fatal(err)
	}
	if cloud.auth.Username != "team-a" || cloud.auth.Scope == nil || cloud.auth.Scope.ProjectName != "team-a" {
		t.Errorf("auth %+v, want the tenant's user scoped to its project", cloud.auth)
	}
	if !cloud.auth.AllowReauth {
		t.Error("AllowReauth is off: a tenant's Networks would fail once its token expires")
	}
	if cloud.endpoint.Region != "RegionTwo" || cloud.endpoint.Availability != gophercloud.AvailabilityPublic {
		t.Errorf("endpoint %+v, want the tenant's region on the public interface, not OS_REGION_NAME or OS_INTERFACE", cloud.endpoint)
	}
	if len(cloud.tls.Certificates) != 0 {
		t.Error("the tenant's cloud presents the controller's client certificate")
	}
	if cloud.tls.RootCAs == nil {
		t.Error("the tenant's cloud does not trust the controller's CA bundle, which its Keystone's certificate is signed by")
	}

	noRegion, err := ParseTenantCloud(ownCloud(), tenantYAML(""), "team")
	if err != nil {
		t.Fatal(err)
	}
	if noRegion.endpoint.Region != "" {
		t.Errorf("a cloud without region_name got region %q from the controller's environment", noRegion.endpoint.Region)
	}
}

func TestATenantCloudIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, cloud, want string
	}{
		{"another Keystone", strings.Replace(string(tenantYAML("")), "keystone.example", "attacker.example", 1), "team", "only the controller's own Keystone"},
		{"a CA file of the controller's disk", string(tenantYAML("    cacert: /etc/openstack/ca.pem\n")), "team", "may not set cacert"},
		{"the controller's client certificate", string(tenantYAML("    cert: /etc/openstack/cert.pem\n    key: /etc/openstack/key.pem\n")), "team", "may not set cert, key"},
		{"a profile, read from clouds-public.yaml", string(tenantYAML("    profile: vexxhost\n")), "team", "may not set profile"},
		{"a cloud that is not there", string(tenantYAML("")), "other", `no cloud "other"`},
		{"no YAML", "clouds: [", "team", "reading clouds.yaml"},
		{"a system-scoped token, which lists every project's", string(tenantYAML("      system_scope: all\n")), "team", "system-scoped"},
		{"the controller's own user, whose failed logins would lock it out", strings.Replace(string(tenantYAML("")), "username: team-a", "username: controller", 1), "team", "the controller's own Keystone user"},
		{"the controller's own user, its domain named by ID", strings.Replace(strings.Replace(string(tenantYAML("")), "username: team-a", "username: controller", 1),
			"user_domain_name: Default", "user_domain_id: default", 1), "team", "the controller's own Keystone user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTenantCloud(ownCloud(), []byte(tc.yaml), tc.cloud)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one that says %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "keystone.example") {
				t.Errorf("error %q names the controller's own Keystone, which is not the Network author's to read", err)
			}
			if !IsCredentialsError(err) {
				t.Errorf("error %T, want a *CredentialsError, which the Network reports as CredentialsUnavailable", err)
			}
		})
	}
}

// TestOneCloudKeepsTheNamedCloudWhole: what is kept of a namespace's
// clouds.yaml is the named cloud alone, and it reads back as the same
// cloud, every field clouds.yaml may set for it included.
func TestOneCloudKeepsTheNamedCloudWhole(t *testing.T) {
	full := []byte(`clouds:
  other:
    auth: {auth_url: "https://keystone.example:5000/v3", username: x, password: "y"}
  team:
    auth:
      auth_url: "https://keystone.example:5000/v3"
      application_credential_id: "app-id"
      application_credential_secret: "s3cret: with # yaml"
      user_domain_name: Default
      project_domain_id: default
      project_id: "p-1"
    auth_type: v3applicationcredential
    region_name: RegionTwo
    interface: internal
    identity_api_version: "3"
`)
	one, err := OneCloud(full, "team")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(one, []byte("other")) {
		t.Errorf("kept another cloud too: %s", one)
	}
	want, err := ParseTenantCloud(ownCloud(), full, "team")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseTenantCloud(ownCloud(), one, "team")
	if err != nil {
		t.Fatal(err)
	}
	if !got.equal(want) {
		t.Errorf("the cloud kept alone reads as %+v %+v, want %+v %+v", got.auth, got.endpoint, want.auth, want.endpoint)
	}
	if _, err := OneCloud(full, "missing"); !IsCredentialsError(err) {
		t.Errorf("a missing cloud: %v, want a CredentialsError", err)
	}
}
