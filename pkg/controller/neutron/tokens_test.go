package neutron

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/component-base/metrics/testutil"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
)

// TestAnExpiredTokenIsReplacedOnce: when the token expires under many
// workers at once, each of their requests is answered 401, and the client
// gets one new token for all of them, not one each: Keystone is shared by
// every tenant of the cloud. network_controller_keystone_tokens_total
// counts the connect and the one re-authentication.
func TestAnExpiredTokenIsReplacedOnce(t *testing.T) {
	k := newKeystoneAndNeutron(t)
	cloud := &Cloud{auth: gophercloud.AuthOptions{IdentityEndpoint: k.url + "/v3/", Username: "u", Password: "p",
		DomainName: "Default", TenantName: "team", AllowReauth: true},
		endpoint: gophercloud.EndpointOpts{Region: "RegionOne"}, scoped: true}
	s := NewSession(cloud, SessionOptions{
		Read: func() (*Cloud, error) { return cloud, nil },
		Connect: func(ctx context.Context, c *Cloud) (*gophercloud.ServiceClient, Place, error) {
			return c.Connect(ctx, 10*time.Second)
		},
		ReloadInterval: time.Hour, MaxRetryDelay: time.Minute,
	})
	metrics.RegisterController()
	ctx := context.Background()
	connects, reauths := tokenCount(t, metrics.TokenConnect), tokenCount(t, metrics.TokenReauth)
	if _, err := s.CreateNetwork(ctx, "n", "mark", 0); err != nil {
		t.Fatalf("the first create: %v", err)
	}

	// The token expires: Neutron refuses it from now on.
	k.mu.Lock()
	for token := range k.tokens {
		k.revoked[token] = true
	}
	k.mu.Unlock()
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			_, err := s.CreateNetwork(ctx, "n", "mark", 0)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a create after the token expired: %v", err)
		}
	}
	k.mu.Lock()
	issued := len(k.tokens)
	k.mu.Unlock()
	if issued != 2 {
		t.Errorf("Keystone issued %d tokens, want 2: the first, and one new one for the %d workers", issued, workers)
	}
	if got := tokenCount(t, metrics.TokenConnect) - connects; got != 1 {
		t.Errorf("network_controller_keystone_tokens_total{reason=connect} rose by %v, want 1", got)
	}
	if got := tokenCount(t, metrics.TokenReauth) - reauths; got != 1 {
		t.Errorf("network_controller_keystone_tokens_total{reason=reauth} rose by %v, want 1", got)
	}
}

func tokenCount(t *testing.T, reason string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(metrics.KeystoneTokens.WithLabelValues(reason))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
