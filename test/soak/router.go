package main

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// replicaRouter is the one network endpoint of the replicas' region: the
// replicas of a controller share one place (Keystone, region, interface,
// project), as a Deployment's do, so the catalog cannot send each to a
// proxy of its own. Each replica authenticates as a Keystone user of its
// own, named after it; the router asks Keystone whose a request's token
// is, once per token, and hands the request to that replica's chaos
// proxy.
type replicaRouter struct {
	URL      string
	proxies  []*chaosProxy
	identity *gophercloud.ServiceClient
	srv      *http.Server

	mu      sync.Mutex
	byToken map[string]int
}

// startReplicaRouter starts the router to proxies, which asks Keystone
// through identity (an admin's client) whose each token is.
func startReplicaRouter(proxies []*chaosProxy, identity *gophercloud.ServiceClient) (*replicaRouter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &replicaRouter{URL: "http://" + ln.Addr().String() + "/", proxies: proxies, identity: identity, byToken: map[string]int{}}
	r.srv = &http.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return r, nil
}

func (r *replicaRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	i, err := r.replicaOf(req.Context(), req.Header.Get("X-Auth-Token"))
	if err != nil {
		// Keystone away (a keystone-restart fault) or a token nobody
		// has: what a failing load balancer answers.
		writeNeutronError(w, http.StatusServiceUnavailable)
		return
	}
	r.proxies[i].ServeHTTP(w, req)
}

// replicaOf is the replica whose user token is.
func (r *replicaRouter) replicaOf(ctx context.Context, token string) (int, error) {
	r.mu.Lock()
	i, ok := r.byToken[token]
	r.mu.Unlock()
	if ok {
		return i, nil
	}
	user, err := tokens.Get(ctx, r.identity, token).ExtractUser()
	if err != nil {
		return 0, err
	}
	i = replicaOf(user.Name)
	if i < 0 || i >= len(r.proxies) {
		return 0, errors.New("a token of user " + user.Name + ", no replica's")
	}
	r.mu.Lock()
	r.byToken[token] = i
	r.mu.Unlock()
	return i, nil
}

// close stops the router.
func (r *replicaRouter) close() error { return r.srv.Close() }
