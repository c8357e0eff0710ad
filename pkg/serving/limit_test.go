package serving

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestLimitConcurrency: with n requests under way, the next one is
// refused with 503 once its wait is over, and served once a slot is free.
func TestLimitConcurrency(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	var refused atomic.Int32
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}), 2, 0, func() { refused.Add(1) })

	done := make(chan struct{})
	for range 2 {
		go func() {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mutate", nil))
			done <- struct{}{}
		}()
	}
	<-started
	<-started
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", nil))
	if rec.Code != http.StatusServiceUnavailable || refused.Load() != 1 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a third request while two are under way: %d, refused %d", rec.Code, refused.Load())
	}

	close(release)
	<-done
	<-done
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", nil))
	if rec.Code != http.StatusOK || refused.Load() != 1 {
		t.Errorf("a request once the slots are free: %d, refused %d", rec.Code, refused.Load())
	}
}
