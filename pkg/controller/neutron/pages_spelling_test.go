package neutron

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// listNetworksFrom serves one list of networks whose page n (from 0)
// links to next(srv, n) ("" ends it), and returns how many requests the
// endpoint was sent and the list's error. From the 100th request on the
// server ends the list, so that a guard that fails ends the test too.
func listNetworksFrom(t *testing.T, next func(srv string, n int) string) (int32, error) {
	t.Helper()
	var asked atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := asked.Add(1) - 1
		body := fmt.Sprintf(`{"networks": [{"id": "id-%d"}]`, n)
		if link := next(srv.URL, int(n)); link != "" && n < 100 {
			body += fmt.Sprintf(`, "networks_links": [{"rel": "next", "href": %q}]`, link)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body + "}"))
	}))
	defer srv.Close()
	client, err := NewNoAuthServiceClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = NewGophercloud(client, Place{}).ListNetworks(context.Background(), "d", func([]Network) error { return nil })
	return asked.Load(), err
}

// TestAPageReadAlreadyIsKnownHoweverItsLinkIsSpelled specifies that the
// loop guard of eachPage knows a page by what is requested, not by the
// link's text: a fragment is never sent, and Neutron reads a query's
// parameters in any order and percent-encoding, so a link that differs
// from one followed only there leads back to a page read already, and a
// Neutron that spells its loop a new way each time is stopped after one
// more request, not after maxPages. A link with userinfo is refused (it
// would put an Authorization header of Neutron's choosing on the
// request).
func TestAPageReadAlreadyIsKnownHoweverItsLinkIsSpelled(t *testing.T) {
	tests := []struct {
		name         string
		next         func(srv string, n int) string
		wantErr      bool
		wantRequests int32
	}{
		{name: "a new fragment each time", next: func(srv string, n int) string {
			return fmt.Sprintf("%s/v2.0/networks?marker=1#%d", srv, n)
		}, wantErr: true, wantRequests: 2},
		{name: "the query's parameters in another order", next: func(srv string, n int) string {
			if n%2 == 0 {
				return srv + "/v2.0/networks?marker=1&limit=2"
			}
			return srv + "/v2.0/networks?limit=2&marker=1"
		}, wantErr: true, wantRequests: 2},
		{name: "the query percent-encoded another way", next: func(srv string, n int) string {
			return srv + "/v2.0/networks?marker=" + []string{"1", "%31"}[n%2]
		}, wantErr: true, wantRequests: 2},
		{name: "the path percent-encoded another way", next: func(srv string, n int) string {
			return srv + []string{"/v2.0/networks", "/v2.0/%6eetworks"}[n%2] + "?marker=1"
		}, wantErr: true, wantRequests: 2},
		{name: "userinfo before the endpoint's host", next: func(srv string, _ int) string {
			return strings.Replace(srv, "http://", "http://neutron:secret@", 1) + "/v2.0/networks?marker=1"
		}, wantErr: true, wantRequests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked, err := listNetworksFrom(t, tt.next)
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want an error: %t", err, tt.wantErr)
			}
			if asked != tt.wantRequests {
				t.Errorf("the endpoint was asked %d times, want %d", asked, tt.wantRequests)
			}
		})
	}
}

// TestTheLoopGuardHoldsAFixedSizePerPage specifies the bound of eachPage's
// memory of the pages read: a fixed size per page, whatever the length of
// Neutron's links, so that maxPages pages of long links do not hold
// maxPages links. Each page here links to a new page by a link of 256
// KiB; after 60 pages the list may hold a few of them, not 15 MiB.
func TestTheLoopGuardHoldsAFixedSizePerPage(t *testing.T) {
	const pages, pad = 60, 256 << 10
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	asked, _ := listNetworksFrom(t, func(srv string, n int) string {
		if n == pages {
			runtime.GC()
			runtime.ReadMemStats(&during)
			return ""
		}
		return fmt.Sprintf("%s/v2.0/networks?marker=%d&pad=%s", srv, n, strings.Repeat("x", pad))
	})
	if asked != pages+1 {
		t.Fatalf("the endpoint was asked %d times, want %d", asked, pages+1)
	}
	if grew := int64(during.HeapAlloc) - int64(before.HeapAlloc); grew > 4*pad*4 {
		t.Errorf("the heap grew by %d KiB over %d pages of %d KiB links, want at most %d KiB: the list holds the links it followed",
			grew>>10, pages, pad>>10, 4*pad*4>>10)
	}
}
