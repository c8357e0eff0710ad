package framework

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// OtherRegion is a reverse proxy in front of a neutron-server that plays
// the Neutron of another region, for a catalog entry of a region of its
// own (Keystone.ControllerCloudVia): the stack has one neutron-server,
// but another region's Neutron shares nothing with the first, so the
// proxy hides what the test says is the first region's. A request whose
// path names a hidden ID is answered 404, as another region answers every
// ID of the first, and a list leaves out every hidden resource and
// whatever lies on one (a port or subnet of a hidden network). Everything
// else passes through: what is made through the proxy is the other
// region's own.
type OtherRegion struct {
	// URL is the proxy's root URL, the catalog's network endpoint of the
	// other region.
	URL string

	srv *http.Server

	mu       sync.Mutex
	hidden   map[string]bool
	requests int
}

// StartOtherRegion starts the proxy to target (a neutron-server's root
// URL) on a free loopback port, until Close.
func StartOtherRegion(target string) (*OtherRegion, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("parsing %q: %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := &OtherRegion{URL: "http://" + ln.Addr().String() + "/", hidden: map[string]bool{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			// A plain body, which the list filter can read.
			r.Out.Header.Del("Accept-Encoding")
		},
		ModifyResponse: o.filterList,
	}
	o.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.requests++
		o.mu.Unlock()
		if id, ok := o.namesHidden(r.URL.Path); ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = fmt.Fprintf(w, `{"NeutronError": {"type": "NotFound", "message": "%s could not be found (in this region)", "detail": ""}}`, id)
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() {
		if err := o.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return o, nil
}

// Close stops the proxy.
func (o *OtherRegion) Close() error { return o.srv.Close() }

// Hide makes the resources of ids the first region's: from now on this
// region answers 404 for them and leaves them out of its lists.
func (o *OtherRegion) Hide(ids ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		o.hidden[id] = true
	}
}

// Requests is how many requests have reached the region: one is the
// sign that a client uses its endpoint.
func (o *OtherRegion) Requests() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests
}

// namesHidden returns the hidden ID that a segment of path names, if any.
func (o *OtherRegion) namesHidden(path string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, segment := range strings.Split(path, "/") {
		if id := strings.TrimSuffix(segment, ".json"); o.hidden[id] {
			return id, true
		}
	}
	return "", false
}

// filterList takes the hidden resources out of a list's answer: every
// array of objects in the body (Neutron's {"networks": [...]}) loses the
// objects whose id, network_id or device_id is hidden, or that have a
// fixed IP on a hidden subnet.
func (o *OtherRegion) filterList(resp *http.Response) error {
	if resp.Request.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err == nil {
		changed := false
		for key, raw := range doc {
			var items []map[string]any
			if json.Unmarshal(raw, &items) != nil {
				continue
			}
			kept := items[:0]
			for _, item := range items {
				if !o.hides(item) {
					kept = append(kept, item)
				}
			}
			if len(kept) == len(items) {
				continue
			}
			if doc[key], err = json.Marshal(kept); err != nil {
				return err
			}
			changed = true
		}
		if changed {
			if body, err = json.Marshal(doc); err != nil {
				return err
			}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// hides reports whether item, an object of a list, is or lies on a hidden
// resource.
func (o *OtherRegion) hides(item map[string]any) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, key := range []string{"id", "network_id", "device_id"} {
		if id, ok := item[key].(string); ok && o.hidden[id] {
			return true
		}
	}
	ips, _ := item["fixed_ips"].([]any)
	for _, ip := range ips {
		if m, ok := ip.(map[string]any); ok {
			if id, ok := m["subnet_id"].(string); ok && o.hidden[id] {
				return true
			}
		}
	}
	return false
}
