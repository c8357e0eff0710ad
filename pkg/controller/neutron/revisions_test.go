package neutron

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"k8s.io/utils/ptr"
)

// TestAConditionalUpdateSendsTheRevisionRead: an update with IfRevision
// sends Neutron's If-Match on the revision, with an MTU too (which
// gophercloud's net-mtu options would drop); one without sends no
// condition; the 412 Neutron answers a stale one is IsStale, and nothing
// else is; the revision a read answers is the one kept.
func TestAConditionalUpdateSendsTheRevisionRead(t *testing.T) {
	var (
		mu      sync.Mutex
		ifMatch []string
		stale   bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ifMatch = append(ifMatch, r.Header.Get("If-Match"))
		refuse := stale
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case refuse:
			w.WriteHeader(http.StatusPreconditionFailed)
			_, _ = w.Write([]byte(`{"NeutronError": {"type": "RevisionNumberConstraintFailed", "message": "Constrained to 4, but current revision is 5", "detail": ""}}`))
		case r.URL.Path == "/v2.0/networks/net-1":
			_, _ = w.Write([]byte(`{"network": {"id": "net-1", "revision_number": 5}}`))
		case r.URL.Path == "/v2.0/subnets/subnet-1":
			_, _ = w.Write([]byte(`{"subnet": {"id": "subnet-1", "revision_number": 3}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	client, err := NewNoAuthServiceClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGophercloud(client, Place{})
	ctx := context.Background()

	tests := []struct {
		name   string
		update func() (revision int, err error)
		want   string
	}{
		{"a network at revision 4", func() (int, error) {
			n, err := g.UpdateNetwork(ctx, "net-1", NetworkUpdate{Name: ptr.To("n"), IfRevision: ptr.To(4)})
			return n.RevisionNumber, err
		}, "revision_number=4"},
		{"a network's MTU at revision 4", func() (int, error) {
			n, err := g.UpdateNetwork(ctx, "net-1", NetworkUpdate{MTU: ptr.To(1400), IfRevision: ptr.To(4)})
			return n.RevisionNumber, err
		}, "revision_number=4"},
		{"a network at revision 0", func() (int, error) {
			n, err := g.UpdateNetwork(ctx, "net-1", NetworkUpdate{Name: ptr.To("n"), IfRevision: ptr.To(0)})
			return n.RevisionNumber, err
		}, "revision_number=0"},
		{"a network, unconditionally", func() (int, error) {
			n, err := g.UpdateNetwork(ctx, "net-1", NetworkUpdate{MTU: ptr.To(1400)})
			return n.RevisionNumber, err
		}, ""},
		{"a subnet at revision 2", func() (int, error) {
			s, err := g.UpdateSubnet(ctx, "subnet-1", SubnetUpdate{Name: ptr.To("s"), IfRevision: ptr.To(2)})
			return s.RevisionNumber, err
		}, "revision_number=2"},
		{"a subnet, unconditionally", func() (int, error) {
			s, err := g.UpdateSubnet(ctx, "subnet-1", SubnetUpdate{Name: ptr.To("s")})
			return s.RevisionNumber, err
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, refuse := range []bool{false, true} {
				mu.Lock()
				ifMatch, stale = nil, refuse
				mu.Unlock()
				revision, err := tc.update()
				mu.Lock()
				sent := ifMatch
				mu.Unlock()
				if len(sent) != 1 || sent[0] != tc.want {
					t.Errorf("If-Match sent: %q, want %q", sent, tc.want)
				}
				switch {
				case refuse && !IsStale(err):
					t.Errorf("Neutron's 412: %v, want IsStale", err)
				case !refuse && err != nil:
					t.Errorf("update: %v", err)
				case !refuse && revision == 0:
					t.Errorf("the answer's revision_number was not kept")
				}
			}
		})
	}
	if IsStale(ErrorForResponse("updating", http.StatusConflict, "InUse", "in use")) {
		t.Errorf("a 409 is IsStale: only a 412 is")
	}
}
