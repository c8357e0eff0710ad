// Package neutron is the controller's view of OpenStack Neutron: a small
// interface over the networks and subnets it manages, implemented with
// gophercloud.
package neutron

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
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
