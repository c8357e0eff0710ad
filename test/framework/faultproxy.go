package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// FaultProxy is a reverse proxy in front of a real server (neutron-server)
// that holds back exactly the requests a test names, so a fault lands
// where the test means it to and nowhere else: "the answer to the 2nd
// network create is lost", not "kill the controller when its log says so".
// Every other request passes straight through.
type FaultProxy struct {
	// URL is the proxy's root URL, to use in place of the server's.
	URL string

	srv   *http.Server
	proxy *httputil.ReverseProxy

	mu       sync.Mutex
	counts   map[string]int // requests passed on (or held), by method and path
	arrivals map[string]int // every request, refused ones too
	holds    []*Hold
	refusals []*refusal
}

// refusal answers requests in the proxy's stead, as a throttling Neutron
// or a load balancer in front of it does.
type refusal struct {
	method, path string
	left         int
	code         int
	retryAfter   string
	// neutronType is the NeutronError type of the answer's body.
	neutronType string
}

// Hold is one request held back by a FaultProxy.
type Hold struct {
	method, path string
	nth          int
	// untilClientGone releases the request once its client gave up.
	untilClientGone bool

	arrived, release, completed chan struct{}
	releaseOnce                 sync.Once
}

// StartFaultProxy starts a proxy to target on a free loopback port, until
// Close.
func StartFaultProxy(target string) (*FaultProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("parsing %q: %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &FaultProxy{URL: "http://" + ln.Addr().String() + "/", proxy: httputil.NewSingleHostReverseProxy(u), counts: map[string]int{}, arrivals: map[string]int{}}
	p.srv = &http.Server{Handler: p}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return p, nil
}

// Close stops the proxy.
func (p *FaultProxy) Close() error { return p.srv.Close() }

// Refuse answers the next n requests of method to path with code and the
// Retry-After header retryAfter (none when empty), without sending them on:
// Neutron's 429 when it throttles, a load balancer's 503.
func (p *FaultProxy) Refuse(method, path string, n, code int, retryAfter string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusals = append(p.refusals, &refusal{method: method, path: path, left: n, code: code, retryAfter: retryAfter, neutronType: "OverLimit"})
}

// RefuseOverQuota answers the next n requests of method to path as
// Neutron does a create over the project's quota: 409 OverQuota, which
// the controller retries with backoff.
func (p *FaultProxy) RefuseOverQuota(method, path string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusals = append(p.refusals, &refusal{method: method, path: path, left: n, code: http.StatusConflict, neutronType: "OverQuota"})
}

// Arrivals is how many requests of method to path have reached the
// proxy, refused or not.
func (p *FaultProxy) Arrivals(method, path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.arrivals[method+" "+path]
}

// ArrivalsByMethod is how many requests of each method have reached the
// proxy, refused or not, whatever their path.
func (p *FaultProxy) ArrivalsByMethod() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for key, n := range p.arrivals {
		method, _, _ := strings.Cut(key, " ")
		out[method] += n
	}
	return out
}

// ClearRefusals ends every refusal: the outage is over.
func (p *FaultProxy) ClearRefusals() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusals = nil
}

// HoldUntilClientGone holds the nth request (counted from now, from 1)
// of method to path until its client gives up — its timeout fires, or the
// process dies — and then sends it on to the server, which carries it
// out with no one left to read the answer: a create that completes late.
func (p *FaultProxy) HoldUntilClientGone(method, path string, nth int) *Hold {
	return p.hold(&Hold{method: method, path: path, nth: nth, untilClientGone: true})
}

// HoldUntilReleased holds the nth request of method to path until the
// test calls Release; its client may be long gone by then.
func (p *FaultProxy) HoldUntilReleased(method, path string, nth int) *Hold {
	return p.hold(&Hold{method: method, path: path, nth: nth})
}

func (p *FaultProxy) hold(h *Hold) *Hold {
	h.arrived, h.release, h.completed = make(chan struct{}), make(chan struct{}), make(chan struct{})
	p.mu.Lock()
	defer p.mu.Unlock()
	h.nth += p.counts[h.method+" "+h.path]
	p.holds = append(p.holds, h)
	return h
}

// Arrived is closed when the held request reaches the proxy.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Completed is closed when the server has answered the held request.
func (h *Hold) Completed() <-chan struct{} { return h.completed }

// Release sends the held request on to the server.
func (h *Hold) Release() { h.releaseOnce.Do(func() { close(h.release) }) }

func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.arrivals[r.Method+" "+r.URL.Path]++
	p.mu.Unlock()
	if f := p.refuse(r); f != nil {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.code)
		_, _ = fmt.Fprintf(w, `{"NeutronError": {"type": %q, "message": "Request refused by the fault proxy (%d)", "detail": ""}}`, f.neutronType, f.code)
		return
	}
	h := p.match(r)
	if h == nil {
		p.proxy.ServeHTTP(w, r)
		return
	}
	// Read the body now: once the client is gone, its connection is.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	close(h.arrived)
	if h.untilClientGone {
		<-r.Context().Done()
		h.Release()
	}
	<-h.release
	// Deferred: writing the answer to a client that is gone makes the
	// reverse proxy abort the handler with a panic (which net/http
	// recovers), after the server has answered.
	defer close(h.completed)
	// The server must carry the request out even though its client is
	// gone: detach it from the client's connection. (A context without a
	// Done channel would make the reverse proxy fall back to
	// CloseNotifier, and cancel all the same.)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	p.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// refuse returns the refusal that answers r, if any, and counts it.
func (p *FaultProxy) refuse(r *http.Request) *refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, f := range p.refusals {
		if f.method == r.Method && f.path == r.URL.Path {
			if f.left--; f.left == 0 {
				p.refusals = append(p.refusals[:i], p.refusals[i+1:]...)
			}
			return f
		}
	}
	return nil
}

func (p *FaultProxy) match(r *http.Request) *Hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := r.Method + " " + r.URL.Path
	p.counts[key]++
	for i, h := range p.holds {
		if h.method+" "+h.path == key && h.nth == p.counts[key] {
			p.holds = append(p.holds[:i], p.holds[i+1:]...)
			return h
		}
	}
	return nil
}
