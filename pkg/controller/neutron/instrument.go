package neutron

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
)

// MaxResponseBytes bounds one answer of Neutron, which gophercloud reads
// whole into memory: a page of 1,000 resources is about a megabyte, and
// network-ip-availabilities, which neutron-server answers in one page
// whatever the limit, some 300 bytes a network. An answer past it fails
// its request (an *http.MaxBytesError), instead of holding the memory of
// every namespace the process serves.
const MaxResponseBytes = 64 << 20

// instrumentedTransport counts and times the requests a Neutron client
// makes, tells reach whether Neutron answered, and bounds each answer's
// body at maxBody bytes (MaxResponseBytes).
type instrumentedTransport struct {
	next    http.RoundTripper
	reach   *Reachability
	maxBody int64
}

func (t instrumentedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	code := "<error>"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
		// MaxBytesReader needs no ResponseWriter to refuse what is past
		// the limit; it returns an *http.MaxBytesError from then on.
		resp.Body = http.MaxBytesReader(nil, resp.Body, t.maxBody)
	}
	t.reach.observe(req, resp, err)
	metrics.ObserveNeutronRequest(req.Method, code, time.Since(start))
	return resp, err
}

// Instrument returns an HTTP client whose requests are counted
// (network_controller_neutron_requests_total and _duration_seconds),
// whose answers reach observes, and whose answers are bounded
// (MaxResponseBytes).
func Instrument(c *http.Client, reach *Reachability) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out := *c
	out.Transport = instrumentedTransport{next: next, reach: reach, maxBody: MaxResponseBytes}
	return &out
}

// Reachability remembers whether Neutron answered the latest request: no
// answer or a server error makes /readyz fail at once, rather than at the
// next list of Neutron. The zero value is ready to use.
type Reachability struct {
	mu  sync.Mutex
	err error
}

func (r *Reachability) observe(req *http.Request, resp *http.Response, err error) {
	if err == nil && resp.StatusCode >= 500 {
		err = fmt.Errorf("%s %s: Neutron answered %s", req.Method, req.URL.Path, resp.Status)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// Err returns why the latest request got no good answer, or nil.
func (r *Reachability) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
