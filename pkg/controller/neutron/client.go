// Package neutron is the controller's view of OpenStack Neutron: a small
// interface over the networks and subnets it manages, implemented with
// gophercloud.
package neutron

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
)

// NewNoAuthServiceClient returns a network service client for a
// neutron-server that runs with auth_strategy = noauth, as the local stack's
// does: no Keystone, every request is admin in the default project.
// endpoint is the server's root, e.g. http://127.0.0.1:9696/.
func NewNoAuthServiceClient(endpoint string, httpClient *http.Client) (*gophercloud.ServiceClient, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("neutron endpoint %q is not an absolute URL", endpoint)
	}
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	root := strings.TrimSuffix(endpoint, "/") + "/"
	provider := &gophercloud.ProviderClient{
		// noauth ignores the token, but gophercloud sends one.
		TokenID:    "noauth",
		HTTPClient: *httpClient,
	}
	provider.UseTokenLock()
	return &gophercloud.ServiceClient{
		ProviderClient: provider,
		Endpoint:       root,
		ResourceBase:   root + "v2.0/",
		Type:           "network",
	}, nil
}

// Cloud is a cloud's credentials and network endpoint options, read the
// way the openstack CLI reads them: from clouds.yaml (OS_CLIENT_CONFIG_FILE,
// ./, ~/.config/openstack/, /etc/openstack/) by name, with OS_* variables
// filling in.
type Cloud struct {
	auth     gophercloud.AuthOptions
	endpoint gophercloud.EndpointOpts
	tls      *tls.Config
	// scoped refuses a token scoped to no project: a namespace's cloud's.
	// Its lists and lookups are narrowed to the token's project, and an
	// unscoped (system or domain) admin token would narrow them to none.
	scoped bool
}

// ReadCloud reads the cloud named name; empty means $OS_CLOUD's. It does
// not contact the cloud: a cloud that cannot be read is a configuration
// error, one that cannot be reached or refuses the credentials is not.
func ReadCloud(name string) (*Cloud, error) {
	var opts []clouds.ParseOption
	if name != "" {
		opts = append(opts, clouds.WithCloudName(name))
	}
	authOpts, endpointOpts, tlsConfig, err := clouds.Parse(opts...)
	if err != nil {
		return nil, fmt.Errorf("reading the cloud's credentials: %w", err)
	}
	// A long-running controller must survive token expiry.
	authOpts.AllowReauth = true
	return &Cloud{auth: authOpts, endpoint: endpointOpts, tls: tlsConfig}, nil
}

// Connect authenticates to the cloud's Keystone, within timeout, and
// returns its network service client and the place the client reaches:
// the Keystone, the region and interface of the endpoint, and the project
// its token is scoped to (empty when the token names none).
func (c *Cloud) Connect(ctx context.Context, timeout time.Duration) (*gophercloud.ServiceClient, Place, error) {
	provider, err := config.NewProviderClient(ctx, c.auth, config.WithTLSConfig(c.tls),
		config.WithHTTPClient(http.Client{Timeout: timeout}))
	if err != nil {
		return nil, Place{}, fmt.Errorf("authenticating to the cloud at %s: %w", c.auth.IdentityEndpoint, err)
	}
	metrics.KeystoneTokens.WithLabelValues(metrics.TokenConnect).Inc()
	client, err := openstack.NewNetworkV2(provider, c.endpoint)
	if err != nil {
		return nil, Place{}, fmt.Errorf("finding the network endpoint in the cloud's catalog: %w", err)
	}
	project := tokenProject(provider)
	if c.scoped && project == "" {
		return nil, Place{}, &CredentialsError{Reason: "the cloud's token is scoped to no project (a system or domain scope): a namespace's cloud must be scoped to one project, to which everything the controller lists and looks up for it is narrowed"}
	}
	if c.auth.AllowReauth {
		provider.ReauthFunc = c.reauthIn(provider, project)
	}
	return client, c.placeOf(project), nil
}

// reauthIn is provider's re-authentication (a token expired or revoked,
// answered 401 inside a request, which gophercloud then sends again),
// which keeps only a token of project, the one the client's place names.
// Keystone gives a clouds.yaml that names its project by name (or none: a
// user's default) whichever project has that name then, one deleted and
// made again included: the request, which the Session let go because the
// client's place was the one it requires, would be sent there. A token of
// another project is not used: the request fails with the 401 it got (an
// *AuthError, which drops the Session's client, so that the next connect
// learns the new place and the request's requirement refuses it). The
// token is made on a copy of provider, as gophercloud's own
// re-authentication does, so that no other request takes it meanwhile.
func (c *Cloud) reauthIn(provider *gophercloud.ProviderClient, project string) func(context.Context) error {
	return func(ctx context.Context) error {
		fresh := *provider
		fresh.SetThrowaway(true)
		fresh.ReauthFunc = nil
		if err := fresh.SetTokenAndAuthResult(nil); err != nil {
			return err
		}
		opts := c.auth
		opts.AllowReauth = false
		if err := openstack.Authenticate(ctx, &fresh, opts); err != nil {
			return err
		}
		metrics.KeystoneTokens.WithLabelValues(metrics.TokenReauth).Inc()
		if now := tokenProject(&fresh); now != project {
			return &CredentialsError{Reason: fmt.Sprintf(
				"re-authenticating gave a token of project %q, not of project %q that the client reaches: nothing was sent with it", now, project)}
		}
		provider.CopyTokenFrom(&fresh)
		return nil
	}
}

// placeOf is the place c's token of project reaches. The interface is the
// one the catalog was searched by: gophercloud's default, public, when
// clouds.yaml names none.
func (c *Cloud) placeOf(project string) Place {
	return Place{AuthURL: c.auth.IdentityEndpoint, Region: c.endpoint.Region,
		Interface: string(cmp.Or(c.endpoint.Availability, gophercloud.AvailabilityPublic)), ProjectID: project}
}

// tokenProject is the ID of the project provider's token is scoped to.
func tokenProject(provider *gophercloud.ProviderClient) string {
	result, ok := provider.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return ""
	}
	project, err := result.ExtractProject()
	if err != nil || project == nil {
		return ""
	}
	return project.ID
}
