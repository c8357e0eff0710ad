package serving

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
	}), 2, 1<<10, 0, func() { refused.Add(1) })

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

// TestSlowClientsHoldNoSlot: clients that send their bodies slowly, more
// of them than there are slots, do not keep a request that arrives whole
// from being served at once.
func TestSlowClientsHoldNoSlot(t *testing.T) {
	var served atomic.Int32
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		served.Add(1)
		_, _ = w.Write(body)
	}), 2, 1<<10, 0, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()

	// 8 clients announce 100 bytes and send 10, then stall.
	for range 8 {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n%s", strings.Repeat("a", 10))
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(srv.URL+"/mutate", "application/json", strings.NewReader(`{"whole":true}`))
	if err != nil {
		t.Fatalf("a whole request behind 8 slow clients: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || served.Load() != 1 {
		t.Errorf("a whole request behind 8 slow clients: %d, %d served; want 200, 1", resp.StatusCode, served.Load())
	}
}

// TestABodyOverTheLimitIsRefusedBeforeASlot: 413, and h never runs.
func TestABodyOverTheLimitIsRefusedBeforeASlot(t *testing.T) {
	h := LimitConcurrency(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("served") }), 1, 16, 0, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", strings.NewReader(strings.Repeat("a", 17))))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", rec.Code)
	}
}
