package neutron

import (
	"context"
	"crypto/tls"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Session is the controller's Interface to a cloud reached through
// Keystone, whose credentials may be fixed while it runs. In a cluster they
// come from a Secret mounted as clouds.yaml; when the Secret changes, the
// kubelet swaps the file in place (a symlink swap) and nothing restarts
// the Pod. So the Session:
//
//   - connects lazily, on the first request, and again after a failure,
//     with capped exponential backoff: wrong credentials cost Keystone one
//     attempt per backoff step, not a loop;
//   - reads the cloud anew at most every ReloadInterval, and when it
//     changed, drops the client made with the old one and connects with the
//     new one at once, whatever the backoff;
//   - drops its client when a request is refused with a 401 (gophercloud has
//     already tried to re-authenticate by then), so the next one connects
//     afresh.
//
// Meanwhile every request fails with the reason (an *AuthError for refused
// credentials), which the controller reports on each Network that needed one.
type Session struct {
	opts SessionOptions

	// mu serialises connecting: one attempt at a time, whatever the number
	// of workers waiting for a client.
	mu      sync.Mutex
	cloud   *Cloud
	current *Gophercloud
	readAt  time.Time
	backoff *flowcontrol.Backoff
	// lastErr is why there is no working client (nil: there is one). It
	// is read without mu, which a connect holds for up to the request
	// timeout: a readiness probe must not wait for it.
	lastErr atomic.Pointer[error]
}

// SessionOptions configure a Session.
type SessionOptions struct {
	// Read reads the cloud's configuration anew (ReadCloud).
	Read func() (*Cloud, error)
	// Connect authenticates with a cloud and returns its network client
	// and the place its token reaches (Cloud.Connect).
	Connect func(ctx context.Context, cloud *Cloud) (*gophercloud.ServiceClient, Place, error)
	// OnConnectFailure, if set, is told of every failed attempt.
	OnConnectFailure func(error)
	// ReloadInterval is how often, at most, the configuration is read.
	ReloadInterval time.Duration
	// MaxRetryDelay caps the backoff between attempts to connect.
	MaxRetryDelay time.Duration
	// Clock is the real clock when nil.
	Clock clock.Clock
}

// NewSession returns a Session that has read its cloud once (first, the
// configuration that was valid at start) and has not connected yet.
func NewSession(first *Cloud, opts SessionOptions) *Session {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	backoff := flowcontrol.NewBackOff(time.Second, opts.MaxRetryDelay)
	backoff.Clock = opts.Clock
	return &Session{opts: opts, cloud: first, readAt: opts.Clock.Now(), backoff: backoff}
}

var _ Interface = &Session{}

// backoffKey is the Session's one entry in its backoff.
const backoffKey = "connect"

// Err returns why the Session has no working client, or nil: what
// readiness reports.
func (s *Session) Err() error {
	if err := s.lastErr.Load(); err != nil {
		return *err
	}
	return nil
}

// setErr records why there is no working client (nil: there is one).
func (s *Session) setErr(err error) {
	s.lastErr.Store(&err)
}

// client returns the client to send a request with, connecting first
// when there is none and the backoff allows it.
func (s *Session) client(ctx context.Context) (*Gophercloud, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Clock.Now()
	s.reload(now)
	if s.current != nil {
		return s.current, nil
	}
	if err := s.Err(); err != nil && s.backoff.IsInBackOffSinceUpdate(backoffKey, now) {
		return nil, err
	}
	client, place, err := s.opts.Connect(ctx, s.cloud)
	if err != nil {
		err = classify("connecting to the cloud", err)
		s.setErr(err)
		s.backoff.Next(backoffKey, now)
		if s.opts.OnConnectFailure != nil {
			s.opts.OnConnectFailure(err)
		}
		return nil, err
	}
	s.current = NewGophercloud(client, place)
	s.setErr(nil)
	s.backoff.Reset(backoffKey)
	return s.current, nil
}

// reload reads the configuration when it is due, and starts over with a
// changed one. A configuration that cannot be read (a Secret half
// written) keeps the one in use.
func (s *Session) reload(now time.Time) {
	if now.Sub(s.readAt) < s.opts.ReloadInterval {
		return
	}
	s.readAt = now
	cloud, err := s.opts.Read()
	if err != nil || cloud.equal(s.cloud) {
		return
	}
	s.cloud, s.current = cloud, nil
	s.setErr(nil)
	s.backoff.Reset(backoffKey)
}

// done drops g, the client a request was sent with, when the cloud refused
// its credentials: the next request connects anew, after the backoff.
func (s *Session) done(g *Gophercloud, err error) error {
	if !IsAuthError(err) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == g {
		s.current = nil
		s.setErr(err)
		s.backoff.Next(backoffKey, s.opts.Clock.Now())
	}
	return err
}

// equal compares two readings of a cloud's configuration.
func (c *Cloud) equal(o *Cloud) bool {
	if c == nil || o == nil {
		return c == o
	}
	return reflect.DeepEqual(c.auth, o.auth) && reflect.DeepEqual(c.endpoint, o.endpoint) && sameTLS(c.tls, o.tls)
}

// sameTLS compares what clouds.yaml can set of a TLS configuration;
// reflect.DeepEqual cannot, since a certificate pool holds functions.
func sameTLS(a, b *tls.Config) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.InsecureSkipVerify == b.InsecureSkipVerify && reflect.DeepEqual(a.Certificates, b.Certificates) &&
		(a.RootCAs == b.RootCAs || (a.RootCAs != nil && a.RootCAs.Equal(b.RootCAs)))
}

// call runs one request with the current client, if it reaches every
// place ctx requires (InPlace): the client was chosen just now, so no
// swap of the credentials comes between this check and the request.
func call[T any](ctx context.Context, s *Session, do func(g *Gophercloud) (T, error)) (T, error) {
	g, err := s.client(ctx)
	if err == nil {
		err = CheckRequired(ctx, g.place)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := do(g)
	return out, s.done(g, err)
}

// unpinned runs one request that sends nothing to Neutron, or only asks
// whether it answers, with the current client, whatever place ctx
// requires: the answer is what a check of the place compares.
func unpinned[T any](ctx context.Context, s *Session, do func(g *Gophercloud) (T, error)) (T, error) {
	return call(context.WithValue(ctx, requiredPlacesKey{}, []Place(nil)), s, do)
}

// ListNetworks implements Interface.
func (s *Session) ListNetworks(ctx context.Context, description string, visit func([]Network) error) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.ListNetworks(ctx, description, visit) })
	return err
}

// ListSubnets implements Interface.
func (s *Session) ListSubnets(ctx context.Context, description string, visit func([]Subnet) error) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.ListSubnets(ctx, description, visit) })
	return err
}

// FindSubnetPool implements Interface.
func (s *Session) FindSubnetPool(ctx context.Context, nameOrID string) (SubnetPool, error) {
	return call(ctx, s, func(g *Gophercloud) (SubnetPool, error) { return g.FindSubnetPool(ctx, nameOrID) })
}

// GetNetwork implements Interface.
func (s *Session) GetNetwork(ctx context.Context, id string) (Network, error) {
	return call(ctx, s, func(g *Gophercloud) (Network, error) { return g.GetNetwork(ctx, id) })
}

// SubnetsOf implements Interface.
func (s *Session) SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error) {
	return call(ctx, s, func(g *Gophercloud) ([]Subnet, error) { return g.SubnetsOf(ctx, networkID) })
}

// CreateNetwork implements Interface.
func (s *Session) CreateNetwork(ctx context.Context, name, description string, mtu int) (Network, error) {
	return call(ctx, s, func(g *Gophercloud) (Network, error) { return g.CreateNetwork(ctx, name, description, mtu) })
}

// CreateSubnet implements Interface.
func (s *Session) CreateSubnet(ctx context.Context, req SubnetRequest) (Subnet, error) {
	return call(ctx, s, func(g *Gophercloud) (Subnet, error) { return g.CreateSubnet(ctx, req) })
}

// UpdateNetwork implements Interface.
func (s *Session) UpdateNetwork(ctx context.Context, id string, u NetworkUpdate) (Network, error) {
	return call(ctx, s, func(g *Gophercloud) (Network, error) { return g.UpdateNetwork(ctx, id, u) })
}

// UpdateSubnet implements Interface.
func (s *Session) UpdateSubnet(ctx context.Context, id string, u SubnetUpdate) (Subnet, error) {
	return call(ctx, s, func(g *Gophercloud) (Subnet, error) { return g.UpdateSubnet(ctx, id, u) })
}

// DeleteSubnet implements Interface.
func (s *Session) DeleteSubnet(ctx context.Context, id string, ifRevision int) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.DeleteSubnet(ctx, id, ifRevision) })
	return err
}

// DeleteNetwork implements Interface.
func (s *Session) DeleteNetwork(ctx context.Context, id string, ifRevision int) error {
	_, err := call(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.DeleteNetwork(ctx, id, ifRevision) })
	return err
}

// PortsOf implements Interface.
func (s *Session) PortsOf(ctx context.Context, networkID, description string) ([]Port, error) {
	return call(ctx, s, func(g *Gophercloud) ([]Port, error) { return g.PortsOf(ctx, networkID, description) })
}

// Place implements Interface: the place of the token and endpoint,
// connecting first when there is no working client.
func (s *Session) Place(ctx context.Context) (Place, error) {
	return unpinned(ctx, s, func(g *Gophercloud) (Place, error) { return g.Place(ctx) })
}

// Probe implements Interface.
func (s *Session) Probe(ctx context.Context) error {
	_, err := unpinned(ctx, s, func(g *Gophercloud) (struct{}, error) { return struct{}{}, g.Probe(ctx) })
	return err
}
