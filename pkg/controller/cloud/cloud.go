// Package cloud connects the programs to Neutron as their command lines
// say: the flags that name the cloud (or a noauth neutron-server) and
// bound the requests, and the clients made of them, each instrumented,
// traced and throttled. The controller, import and plan share it, so
// that import and plan talk to Neutron as the controller does.
package cloud

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/component/tracing"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Options say which Neutron to talk to, and how.
type Options struct {
	// Endpoint is a noauth neutron-server's URL; empty: Cloud's Keystone.
	Endpoint string
	// Cloud names the cloud of clouds.yaml; empty: $OS_CLOUD.
	Cloud string
	// Timeout bounds one request.
	Timeout time.Duration
	// QPS and Burst are the client-side rate limit of each cloud.
	QPS   float64
	Burst int
	// Reload is how often clouds.yaml is read again, and MaxRetryDelay
	// the cap of a failed authentication's backoff: a long-running
	// controller's settings, which the commands that run once leave at
	// NewOptions'.
	Reload, MaxRetryDelay time.Duration
}

// NewOptions are the defaults of a command that runs once: one reading of
// clouds.yaml, a patient backoff.
func NewOptions() Options {
	return Options{Timeout: 30 * time.Second, QPS: 20, Burst: 40, Reload: time.Hour, MaxRetryDelay: 2 * time.Minute}
}

// AddFlags binds the flags of o to fs, with o's values as the defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Endpoint, "neutron-endpoint", o.Endpoint, "URL of a neutron-server that runs with auth_strategy = noauth, e.g. http://127.0.0.1:9696/ (tests, and the operator's view in the local stack). When empty, the normal case, the controller authenticates to Keystone with the cloud of --os-cloud.")
	fs.StringVar(&o.Cloud, "os-cloud", o.Cloud, "Name of the cloud in clouds.yaml ($OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/, /etc/openstack/) to authenticate to Keystone with; empty means $OS_CLOUD. Password and application-credential clouds both work; tokens are renewed when they expire.")
	fs.DurationVar(&o.Timeout, "neutron-timeout", o.Timeout, "Timeout of one Neutron request.")
	fs.Float64Var(&o.QPS, "neutron-qps", o.QPS, "Client-side rate limit of requests to Neutron, per second. Beside it, a 429 (or a 503 with Retry-After) from Neutron pauses all requests for the time it names, and the refused request is sent again.")
	fs.IntVar(&o.Burst, "neutron-burst", o.Burst, "Burst allowed above --neutron-qps.")
}

// Validate says what of o cannot work.
func (o Options) Validate() error {
	if o.QPS <= 0 || o.Burst < 1 {
		return fmt.Errorf("--neutron-qps must be above 0 and --neutron-burst at least 1, got %g and %d", o.QPS, o.Burst)
	}
	return nil
}

// Connect returns the program's own Neutron client, its cloud and what
// readiness asks about authentication: for an Endpoint a noauth client and
// no cloud, for a cloud a Session that authenticates lazily and follows
// changes of clouds.yaml.
func (o Options) Connect(reach *neutron.Reachability, tp trace.TracerProvider) (neutron.Interface, *neutron.Cloud, func() error, error) {
	if o.Endpoint != "" {
		traced := &http.Client{Timeout: o.Timeout, Transport: tracing.OpenStack(tp, http.DefaultTransport)}
		client, err := neutron.NewNoAuthServiceClient(o.Endpoint, o.throttled(neutron.Instrument(traced, reach)))
		if err != nil {
			return nil, nil, nil, err
		}
		return neutron.NewGophercloud(client, neutron.Place{}), nil, func() error { return nil }, nil
	}
	read := func() (*neutron.Cloud, error) { return neutron.ReadCloud(o.Cloud) }
	cloud, err := read()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connecting to Neutron (set --os-cloud, or --neutron-endpoint for a noauth server): %w", err)
	}
	session := o.Session(cloud, read, "the controller's", reach, tp)
	return session, cloud, session.Err, nil
}

// TenantSession connects a namespace's cloud: a Session of its own, read
// once, traced with tp.
func (o Options) TenantSession(tp trace.TracerProvider) func(*neutron.Cloud) neutron.Interface {
	return func(cloud *neutron.Cloud) neutron.Interface {
		return o.Session(cloud, func() (*neutron.Cloud, error) { return cloud, nil }, "a namespace's", &neutron.Reachability{}, tp)
	}
}

// Session returns a Session on cloud, read anew with read, whose requests
// are instrumented and throttled (--neutron-qps: each cloud has its own
// budget, as Neutron's rate limits are per project); whose is whose cloud
// it is, for the log.
func (o Options) Session(cloud *neutron.Cloud, read func() (*neutron.Cloud, error), whose string, reach *neutron.Reachability, tp trace.TracerProvider) *neutron.Session {
	return neutron.NewSession(cloud, neutron.SessionOptions{
		Read: read,
		Connect: func(ctx context.Context, cloud *neutron.Cloud) (*gophercloud.ServiceClient, neutron.Place, error) {
			client, place, err := cloud.Connect(ctx, o.Timeout)
			if err != nil {
				return nil, neutron.Place{}, err
			}
			// Connect's client already has the --neutron-timeout; the copies keep it.
			client.HTTPClient.Transport = tracing.OpenStack(tp, cmp.Or[http.RoundTripper](client.HTTPClient.Transport, http.DefaultTransport))
			client.HTTPClient = *o.throttled(neutron.Instrument(&client.HTTPClient, reach))
			return client, place, nil
		},
		OnConnectFailure: func(err error) {
			metrics.NeutronAuthFailures.Inc()
			klog.Background().Error(err, "Cannot authenticate to the cloud; its Networks wait until it succeeds", "whose", whose)
		},
		ReloadInterval: o.Reload,
		MaxRetryDelay:  o.MaxRetryDelay,
	})
}

// throttled puts c's requests behind the --neutron-qps limit and Neutron's
// own requests to slow down. The throttle is outside the instrumentation,
// so that every attempt, a refused one too, is counted.
func (o Options) throttled(c *http.Client) *http.Client {
	t := neutron.NewThrottle(c.Transport, float32(o.QPS), o.Burst)
	t.OnThrottled = func(code int) { metrics.NeutronThrottled.WithLabelValues(strconv.Itoa(code)).Inc() }
	out := *c
	out.Transport = t
	return &out
}
