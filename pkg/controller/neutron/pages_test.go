package neutron

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestANextLinkIsFollowedOnlyToItsOwnEndpointAndOnlyOnce specifies how
// every list of the client follows Neutron's next-page links (eachPage).
// A link is Neutron's text, and the token goes with each request: a link
// to another host, or to the same host over another scheme, is refused
// before any request is sent there; a link back to a page already read
// fails the list after one more request, instead of listing forever; a
// link to a new page of the endpoint is followed, as a list of more than
// one page needs.
func TestANextLinkIsFollowedOnlyToItsOwnEndpointAndOnlyOnce(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer other.Close()

	// The lists, each with the collection its request reads and the key
	// its answer's items and links are under.
	lists := []struct {
		name, collection, key string
		list                  func(context.Context, *Gophercloud) error
	}{
		{"networks", "networks", "networks", func(ctx context.Context, g *Gophercloud) error {
			return g.ListNetworks(ctx, "d", func([]Network) error { return nil })
		}},
		{"subnets", "subnets", "subnets", func(ctx context.Context, g *Gophercloud) error {
			return g.ListSubnets(ctx, "d", func([]Subnet) error { return nil })
		}},
		{"routers", "routers", "routers", func(ctx context.Context, g *Gophercloud) error {
			return g.ListRouters(ctx, "d", func([]Router) error { return nil })
		}},
		{"ports", "ports", "ports", func(ctx context.Context, g *Gophercloud) error {
			_, err := g.PortsOf(ctx, "net", "")
			return err
		}},
		{"address counts", "network-ip-availabilities", "network_ip_availabilities", func(ctx context.Context, g *Gophercloud) error {
			return g.ListIPAvailabilities(ctx, func([]NetworkIPs) error { return nil })
		}},
	}
	links := []struct {
		name string
		// next is the next link of page n (from 0) under the endpoint
		// srv; "" ends the list.
		next func(srv string, n int) string
		// wantErr: the list fails; wantRequests: what the endpoint was
		// asked in all.
		wantErr      bool
		wantRequests int32
	}{
		{name: "a second page of the endpoint", next: func(srv string, n int) string {
			if n == 0 {
				return srv + "/v2.0/%s?marker=1"
			}
			return ""
		}, wantRequests: 2},
		{name: "another host", next: func(string, int) string { return other.URL + "/v2.0/%s?marker=1" }, wantErr: true, wantRequests: 1},
		{name: "the same host over another scheme", next: func(srv string, _ int) string {
			return strings.Replace(srv, "http://", "https://", 1) + "/v2.0/%s?marker=1"
		}, wantErr: true, wantRequests: 1},
		{name: "a page read already, over and over", next: func(srv string, _ int) string { return srv + "/v2.0/%s?marker=1" }, wantErr: true, wantRequests: 2},
	}
	for _, l := range lists {
		for _, link := range links {
			t.Run(l.name+", "+link.name, func(t *testing.T) {
				var asked atomic.Int32
				var srv *httptest.Server
				srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := asked.Add(1) - 1
					if n > 10 {
						// The guard failed: end the list rather than the test run.
						w.WriteHeader(http.StatusNoContent)
						return
					}
					body := fmt.Sprintf(`{%q: [{"id": "id-%d", "network_id": "net-%d"}]`, l.key, n, n)
					if next := link.next(srv.URL, int(n)); next != "" {
						body += fmt.Sprintf(`, %q: [{"rel": "next", "href": %q}]`, l.key+"_links", fmt.Sprintf(next, l.collection))
					}
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(body + "}"))
				}))
				defer srv.Close()
				elsewhere.Store(0)
				client, err := NewNoAuthServiceClient(srv.URL, nil)
				if err != nil {
					t.Fatal(err)
				}

				err = l.list(context.Background(), NewGophercloud(client, Place{}))
				if (err != nil) != link.wantErr {
					t.Errorf("err = %v, want an error: %t", err, link.wantErr)
				}
				if got := asked.Load(); got != link.wantRequests {
					t.Errorf("the endpoint was asked %d times, want %d", got, link.wantRequests)
				}
				if got := elsewhere.Load(); got != 0 {
					t.Errorf("another host was sent %d requests (and the token), want none", got)
				}
			})
		}
	}
}
