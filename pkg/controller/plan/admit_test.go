package plan

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestAPlanSendsTheAPIServerReadsAndDryRunsOnly: whatever the code above
// the transport asks, only a read or a dry run reaches the API server.
func TestAPlanSendsTheAPIServerReadsAndDryRunsOnly(t *testing.T) {
	var reached []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.Method+" "+r.URL.RequestURI())
	}))
	defer server.Close()
	client := &http.Client{Transport: ReadOnly(http.DefaultTransport)}
	for _, tt := range []struct {
		method, path string
		sent         bool
	}{
		{http.MethodGet, "/apis/samplecrd.k8s.io/v1/namespaces/a/networks/web", true},
		{http.MethodPost, "/apis/samplecrd.k8s.io/v1/namespaces/a/networks?dryRun=All", true},
		{http.MethodPut, "/apis/samplecrd.k8s.io/v1/namespaces/a/networks/web?dryRun=All", true},
		{http.MethodPost, "/apis/samplecrd.k8s.io/v1/namespaces/a/networks", false},
		{http.MethodPatch, "/apis/samplecrd.k8s.io/v1/namespaces/a/networks/web/status", false},
		{http.MethodDelete, "/api/v1/namespaces/a/secrets/kept?dryRun=None", false},
		{http.MethodPost, "/api/v1/namespaces/a/events", false},
	} {
		req, err := http.NewRequest(tt.method, server.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if sent := slices.Contains(reached, tt.method+" "+tt.path); sent != tt.sent || !tt.sent && !errors.Is(err, ErrWriteRefused) {
			t.Errorf("%s %s: sent %v (error %v), want sent %v", tt.method, tt.path, sent, err, tt.sent)
		}
	}
}

// TestReadNetworksReadsWhatKubectlApplyTakes: documents of YAML, Networks
// of v1 and v2 kept in order (a v1 one as the v2 Network of one subnet it
// converts to), other kinds and versions named, empty documents ignored.
func TestReadNetworksReadsWhatKubectlApplyTakes(t *testing.T) {
	const manifests = `---
apiVersion: samplecrd.k8s.io/v1
kind: Network
metadata:
  name: web
spec:
  cidr: 10.1.0.0/24
---
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
---
apiVersion: samplecrd.k8s.io/v1
kind: Network
metadata:
  name: db
  namespace: data
spec:
  cidr: fd00::/64
---
apiVersion: samplecrd.k8s.io/v2
kind: Network
metadata:
  name: dual
spec:
  subnets:
  - cidr: 10.2.0.0/24
  - cidr: fd00:2::/64
---
apiVersion: samplecrd.k8s.io/v3
kind: Network
metadata:
  name: future
`
	networks, others, err := ReadNetworks(strings.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range networks {
		var cidrs []string
		for _, s := range n.Spec.Subnets {
			cidrs = append(cidrs, s.CIDR)
		}
		got = append(got, n.Namespace+"/"+n.Name+" "+strings.Join(cidrs, ","))
	}
	if want := []string{"/web 10.1.0.0/24", "data/db fd00::/64", "/dual 10.2.0.0/24,fd00:2::/64"}; !slices.Equal(got, want) {
		t.Errorf("Networks %q, want %q", got, want)
	}
	if want := []string{"ConfigMap settings (v1)", "Network future (samplecrd.k8s.io/v3)"}; !slices.Equal(others, want) {
		t.Errorf("others %q, want %q", others, want)
	}
}
