package leader

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
)

// notLeading is a Fence watching an elector that never led.
func notLeading(t *testing.T) *Fence {
	t.Helper()
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: leaseLock(t, fake.NewClientset()), LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &Fence{}
	f.watch(elector, 15*time.Second, 10*time.Second)
	return f
}

// TestAFencedTransportSendsReadsButNoWrite: while the fence refuses, the
// API server sees the reads (a list and a watch are GETs) and no write;
// each write fails with ErrFenced and is counted. An open fence lets all
// through.
func TestAFencedTransportSendsReadsButNoWrite(t *testing.T) {
	var arrived []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived = append(arrived, r.Method)
	}))
	defer server.Close()
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	for _, tc := range []struct {
		name        string
		fence       *Fence
		wantArrived string
		wantRefused int64
	}{
		{"closed: the reads only", notLeading(t), "GET", 4},
		{"open (no leader election): everything", nil, "GET POST PUT PATCH DELETE", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived = nil
			var refused atomic.Int64
			client := &http.Client{Transport: WrapTransport(tc.fence.Check, func() { refused.Add(1) })(http.DefaultTransport)}
			for _, m := range methods {
				req, err := http.NewRequest(m, server.URL, strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
				} else if !errors.Is(err, ErrFenced) {
					t.Errorf("%s: %v, want ErrFenced or nothing", m, err)
				}
			}
			if got := strings.Join(arrived, " "); got != tc.wantArrived {
				t.Errorf("the server saw %q, want %q", got, tc.wantArrived)
			}
			if refused.Load() != tc.wantRefused {
				t.Errorf("%d refusals counted, want %d", refused.Load(), tc.wantRefused)
			}
		})
	}
}
