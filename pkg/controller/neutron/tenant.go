package neutron

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"sigs.k8s.io/yaml"
)

// ParseTenantCloud reads the cloud named name from cloudsYAML, a
// clouds.yaml that a namespace supplied in a Secret of its own, for use
// beside own, the controller's cloud. A tenant says who it is and which
// project it works in, and nothing else the controller has:
//
//   - it authenticates against own's Keystone and no other: an auth_url of
//     the tenant's choosing would have the controller send requests, from
//     inside the cluster, wherever a namespace likes;
//   - it names no file (cacert, cert, key): those would be read from the
//     controller's disk, its own client certificate among them. The CA
//     bundle is own's, which is the right one for the same Keystone;
//   - it gets nothing from the controller's environment or disk:
//     clouds.Parse fills a cloud in from OS_REGION_NAME, OS_INTERFACE,
//     secure.yaml and clouds-public.yaml unless told otherwise, and
//     OS_CERT and OS_KEY in any case, so the TLS configuration is built
//     here, never taken from Parse.
//
// Every error is a *CredentialsError.
func ParseTenantCloud(own *Cloud, cloudsYAML []byte, name string) (*Cloud, error) {
	cloud, err := parseTenantCloud(own, cloudsYAML, name)
	if err != nil {
		return nil, &CredentialsError{Reason: err.Error()}
	}
	return cloud, nil
}

func parseTenantCloud(own *Cloud, cloudsYAML []byte, name string) (*Cloud, error) {
	var file clouds.Clouds
	if err := yaml.Unmarshal(cloudsYAML, &file); err != nil {
		return nil, fmt.Errorf("reading clouds.yaml: %w", err)
	}
	entry, ok := file.Clouds[name]
	if !ok {
		return nil, fmt.Errorf("clouds.yaml has no cloud %q", name)
	}
	if err := refuseBorrowed(entry); err != nil {
		return nil, fmt.Errorf("cloud %q: %w", name, err)
	}
	if entry.AuthInfo != nil && entry.AuthInfo.SystemScope != "" {
		return nil, fmt.Errorf("cloud %q asks for a system-scoped token: a namespace's cloud must be scoped to one project", name)
	}
	auth, endpoint, _, err := clouds.Parse(
		clouds.WithCloudsYAML(strings.NewReader(string(cloudsYAML))),
		clouds.WithCloudName(name),
		clouds.WithSecureYAML(strings.NewReader("clouds: {}")),
		clouds.WithCloudsPublicYAML(strings.NewReader("public-clouds: {}")),
		clouds.WithRegion(entry.RegionName),
		clouds.WithEndpointType(cmp.Or(entry.EndpointType, entry.Interface)),
	)
	if err != nil {
		return nil, fmt.Errorf("reading cloud %q: %w", name, err)
	}
	if auth.IdentityEndpoint != own.auth.IdentityEndpoint {
		// The controller's own Keystone is not named: its address is the
		// administrator's, not every Network author's, to read.
		return nil, fmt.Errorf("cloud %q authenticates at %q: only the controller's own Keystone is allowed (ask the cluster administrator for its auth_url)", name, auth.IdentityEndpoint)
	}
	if sameUser(auth, own.auth) {
		// A wrong password for the controller's own user, sent again at
		// each retry, would lock it out where Keystone locks users after
		// failed logins, and every namespace with it; a right one would
		// be the controller's own credentials, which are not a
		// namespace's to use.
		return nil, fmt.Errorf("cloud %q names the controller's own Keystone user: a namespace's cloud must name a user of its own", name)
	}
	auth.AllowReauth = true
	return &Cloud{auth: auth, endpoint: endpoint, tls: tenantTLS(own.tls), scoped: true}, nil
}

// OneCloud returns the clouds.yaml that holds the cloud named name of
// cloudsYAML alone, serialized anew: what the controller keeps of a
// namespace's credentials is the one cloud a Network names, not every
// entry of the Secret (which a namespace could fill with thousands, for
// the controller to copy once for each). Every error is a
// *CredentialsError.
func OneCloud(cloudsYAML []byte, name string) ([]byte, error) {
	var file clouds.Clouds
	if err := yaml.Unmarshal(cloudsYAML, &file); err != nil {
		return nil, &CredentialsError{Reason: fmt.Sprintf("reading clouds.yaml: %v", err)}
	}
	entry, ok := file.Clouds[name]
	if !ok {
		return nil, &CredentialsError{Reason: fmt.Sprintf("clouds.yaml has no cloud %q", name)}
	}
	one, err := yaml.Marshal(clouds.Clouds{Clouds: map[string]clouds.Cloud{name: entry}})
	if err != nil {
		return nil, &CredentialsError{Reason: fmt.Sprintf("writing cloud %q: %v", name, err)}
	}
	return one, nil
}

// refuseBorrowed refuses what a tenant's cloud may not name: files, and
// profiles, which are looked up in files.
func refuseBorrowed(c clouds.Cloud) error {
	var named []string
	for field, value := range map[string]string{"cacert": c.CACertFile, "cert": c.ClientCertFile, "key": c.ClientKeyFile,
		"profile": c.Profile, "cloud": c.Cloud} {
		if value != "" {
			named = append(named, field)
		}
	}
	if len(named) > 0 {
		slices.Sort(named)
		return errors.New("a namespace's clouds.yaml may not set " + strings.Join(named, ", ") +
			": they name files of the controller's")
	}
	return nil
}

// tenantTLS is own's trust (its CA bundle, its verify setting) without
// its client certificate.
func tenantTLS(own *tls.Config) *tls.Config {
	if own == nil {
		return nil
	}
	return &tls.Config{RootCAs: own.RootCAs, InsecureSkipVerify: own.InsecureSkipVerify} //nolint:gosec // own's setting, which the operator chose
}

// sameUser reports whether a and b may name one Keystone user (by ID, or
// by name in a domain they do not prove different) or one application
// credential. A domain named by ID in one and by name in the other is not
// proven different: refusing a namespace's own user of the same name in
// another domain, written so, is the price of never trying the
// controller's own user with a namespace's password.
func sameUser(a, b gophercloud.AuthOptions) bool {
	switch {
	case a.UserID != "" && a.UserID == b.UserID,
		a.ApplicationCredentialID != "" && a.ApplicationCredentialID == b.ApplicationCredentialID:
		return true
	case a.Username == "" || a.Username != b.Username:
		return false
	}
	differ := func(x, y string) bool { return x != "" && y != "" && x != y }
	return !differ(a.DomainID, b.DomainID) && !differ(a.DomainName, b.DomainName)
}
