// Package neutron is the controller's view of OpenStack Neutron: a small
// interface over the networks and subnets it manages, implemented with
// gophercloud.
package neutron

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
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

// NewCloudServiceClient authenticates to a real cloud through Keystone and
// returns its network service client. The cloud is read the way the
// openstack CLI reads it: from clouds.yaml (OS_CLIENT_CONFIG_FILE, ./,
// ~/.config/openstack/, /etc/openstack/) by name, with OS_* variables
// filling in; cloud may be empty when OS_CLOUD names it.
func NewCloudServiceClient(ctx context.Context, cloud string) (*gophercloud.ServiceClient, error) {
	var opts []clouds.ParseOption
	if cloud != "" {
		opts = append(opts, clouds.WithCloudName(cloud))
	}
	authOpts, endpointOpts, tlsConfig, err := clouds.Parse(opts...)
	if err != nil {
		return nil, fmt.Errorf("reading the cloud's credentials: %w", err)
	}
	// A long-running controller must survive token expiry.
	authOpts.AllowReauth = true
	provider, err := config.NewProviderClient(ctx, authOpts, config.WithTLSConfig(tlsConfig))
	if err != nil {
		return nil, fmt.Errorf("authenticating to the cloud: %w", err)
	}
	client, err := openstack.NewNetworkV2(provider, endpointOpts)
	if err != nil {
		return nil, fmt.Errorf("finding the network endpoint: %w", err)
	}
	return client, nil
}
