package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// chaosProxy stands between one replica and the neutron-server it reaches
// through Keystone's catalog (the region's network endpoint, the
// replicaRouter, hands it the replica's requests). It records every write the replica sends, and, while
// chaos is on, answers a share of the requests as a failing load balancer
// or server would: refused with a 502 before Neutron sees it, carried out
// by Neutron with its answer lost (a 504 after the fact: a late
// completion), or delayed.
type chaosProxy struct {
	URL     string
	replica int
	hist    *history
	proxy   *httputil.ReverseProxy
	srv     *http.Server

	mu       sync.Mutex
	rng      *rand.Rand
	on       bool
	injected map[string]int // by kind
	// token is the Keystone token of the replica's latest request, which
	// a token-revoke fault revokes; tokens counts the distinct ones seen.
	token  string
	tokens map[string]bool
	// refused counts Neutron's own 401s: a revoked token that Neutron no
	// longer accepts.
	refused int
}

// The chaos: the share of requests each kind of fault takes while on.
const (
	chaosRefuse = 0.10
	chaosLose   = 0.05
	chaosDelay  = 0.10
)

// startChaosProxy starts replica's proxy to target, drawing its faults
// from rng.
func startChaosProxy(replica int, target string, hist *history, rng *rand.Rand) (*chaosProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &chaosProxy{URL: "http://" + ln.Addr().String() + "/", replica: replica, hist: hist,
		proxy: httputil.NewSingleHostReverseProxy(u), rng: rng, injected: map[string]int{}, tokens: map[string]bool{}}
	c.proxy.ModifyResponse = c.noteAnswer
	// A client that gave up (its timeout, a killed replica) is every
	// fault's daily bread here, not news for the soak's output.
	c.proxy.ErrorLog = log.New(io.Discard, "", 0)
	c.srv = &http.Server{Handler: c}
	go func() {
		if err := c.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return c, nil
}

// setChaos turns the faults on or off.
func (c *chaosProxy) setChaos(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = on
}

// draw picks what happens to one request: "" (nothing), "refuse",
// "lose" or "delay".
func (c *chaosProxy) draw() (string, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return "", 0
	}
	x := c.rng.Float64()
	delay := time.Duration(500+c.rng.IntN(1500)) * time.Millisecond
	var kind string
	switch {
	case x < chaosRefuse:
		kind = "refuse"
	case x < chaosRefuse+chaosLose:
		kind = "lose"
	case x < chaosRefuse+chaosLose+chaosDelay:
		kind = "delay"
	default:
		return "", 0
	}
	c.injected[kind]++
	return kind, delay
}

func (c *chaosProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.noteToken(r.Header.Get("X-Auth-Token"))
	if r.Method != http.MethodGet {
		c.hist.recordWrite(write{at: time.Now(), replica: c.replica, method: r.Method, path: r.URL.Path})
	}
	kind, delay := c.draw()
	switch kind {
	case "refuse":
		writeNeutronError(w, http.StatusBadGateway)
		return
	case "lose":
		// Neutron carries the request out; its answer never arrives.
		c.proxy.ServeHTTP(httptest.NewRecorder(), r.WithContext(context.WithoutCancel(r.Context())))
		writeNeutronError(w, http.StatusGatewayTimeout)
		return
	case "delay":
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	c.proxy.ServeHTTP(w, r)
}

func writeNeutronError(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"NeutronError": {"type": "HTTPError", "message": "injected by the soak (%d)", "detail": ""}}`, code)
}

func (c *chaosProxy) noteToken(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if token != "" {
		c.token, c.tokens[token] = token, true
	}
}

// noteAnswer counts Neutron's refusals of a token.
func (c *chaosProxy) noteAnswer(resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized {
		c.mu.Lock()
		c.refused++
		c.mu.Unlock()
	}
	return nil
}

// latestToken is the token of the replica's latest request, "" if none.
func (c *chaosProxy) latestToken() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// close stops the proxy.
func (c *chaosProxy) close() error { return c.srv.Close() }
