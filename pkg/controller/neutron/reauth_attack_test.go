package neutron

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// keystoneAndNeutron is a Keystone whose project "team" is the project
// of ID projectID (a name Keystone may give to another project: one
// deleted and made again), and a Neutron that refuses revoked tokens
// (401) and makes networks in the project of the token that asks.
type keystoneAndNeutron struct {
	mu        sync.Mutex
	projectID string
	tokens    map[string]string // token -> project ID
	revoked   map[string]bool
	made      map[string]int // project ID -> networks made there
	url       string
}

func newKeystoneAndNeutron(t *testing.T) *keystoneAndNeutron {
	k := &keystoneAndNeutron{projectID: "project-1", tokens: map[string]string{}, revoked: map[string]bool{}, made: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/auth/tokens", func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		token := fmt.Sprintf("token-%d", len(k.tokens)+1)
		k.tokens[token] = k.projectID
		project := k.projectID
		k.mu.Unlock()
		w.Header().Set("X-Subject-Token", token)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"token": map[string]any{
			"methods":    []string{"password"},
			"expires_at": "2099-01-01T00:00:00.000000Z",
			"project":    map[string]any{"id": project, "name": "team", "domain": map[string]any{"id": "default", "name": "Default"}},
			"user":       map[string]any{"id": "u", "name": "u", "domain": map[string]any{"id": "default", "name": "Default"}},
			"catalog": []any{map[string]any{"type": "network", "name": "neutron", "endpoints": []any{
				map[string]any{"interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": k.url + "/"},
			}}},
		}})
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"versions": []any{map[string]any{"id": "v2.0", "status": "CURRENT",
			"links": []any{map[string]any{"href": k.url + "/v2.0/", "rel": "self"}}}}})
	})
	mux.HandleFunc("POST /v2.0/networks", func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		token := r.Header.Get("X-Auth-Token")
		project, known := k.tokens[token]
		if !known || k.revoked[token] {
			k.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		k.made[project]++
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"network": map[string]any{"id": "net-1", "name": "n", "project_id": project, "status": "ACTIVE"}})
	})
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	k.url = server.URL
	return k
}

// TestAReauthenticatedTokenOfAnotherProjectSendsNothing: attack on
// ec37777's "the client checks it when it sends". A Session's client
// knows its place from the token it connected with (Cloud.Connect), and
// Session.call compares that with the place the request requires. But
// gophercloud re-authenticates inside a request (AllowReauth, which a
// long-running controller needs): a 401, a new token, the request sent
// again, all with the same client. A clouds.yaml that names its project
// by name (as most do) gets, at that moment, a token of whichever project
// has the name then: one deleted and made again has another ID. The
// create goes to that project, though the request required the first
// and the client still says it is there; a read would answer 404 for the
// first project's network, and its lists (narrowed to the first
// project's ID) nothing.
//
// The fix should guarantee: a request is sent only with a token of the
// place the client says it reaches; a token re-authenticated into another
// project is not used (the request fails, sending nothing more, and the
// client is dropped, so that the next connect learns the new place).
func TestAReauthenticatedTokenOfAnotherProjectSendsNothing(t *testing.T) {
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
	ctx := context.Background()
	first, err := s.Place(ctx)
	if err != nil || first.ProjectID != "project-1" {
		t.Fatalf("Place = %v, %v", first, err)
	}
	pinned := InPlace(ctx, first)
	if _, err := s.CreateNetwork(pinned, "n", "mark", 0); err != nil {
		t.Fatalf("a create in project-1: %v", err)
	}

	// The project is deleted and made again under its name, and the
	// token scoped to it revoked with it.
	k.mu.Lock()
	k.projectID = "project-9"
	for token := range k.tokens {
		k.revoked[token] = true
	}
	k.mu.Unlock()

	for attempt := range 2 {
		_, err = s.CreateNetwork(pinned, "n", "mark", 0)
		k.mu.Lock()
		made := k.made["project-9"]
		k.mu.Unlock()
		if made != 0 {
			t.Fatalf("create %d, which requires %s, made a network in project-9 (err %v)", attempt+1, first, err)
		}
		if err == nil {
			t.Errorf("create %d succeeded", attempt+1)
		}
	}
}
