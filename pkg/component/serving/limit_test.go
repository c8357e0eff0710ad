package serving

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gauge is a Limits.Held that remembers the last value and the highest.
type gauge struct {
	mu        sync.Mutex
	now, peak int64
}

func (g *gauge) set(v int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now = v
	g.peak = max(g.peak, v)
}

func (g *gauge) get() (now, peak int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.now, g.peak
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLimitConcurrency: with n requests under way, the next one is
// refused with 503 once its wait is over, and served once a slot is free.
func TestLimitConcurrency(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	var refused atomic.Int32
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}), Limits{Slots: 2, MaxBody: 1 << 10, Budget: 1 << 20, OnRefuse: func() { refused.Add(1) }})

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
	}), Limits{Slots: 2, MaxBody: 1 << 10, Budget: 1 << 20})
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

// TestABodyOverTheLimitIsRefusedBeforeASlot: 413, and h never runs,
// whether the body says its length or not.
func TestABodyOverTheLimitIsRefusedBeforeASlot(t *testing.T) {
	for _, tc := range []struct {
		name          string
		contentLength int64
	}{{"announced", 17}, {"unannounced", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			var g gauge
			h := LimitConcurrency(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("served") }),
				Limits{Slots: 1, MaxBody: 16, Budget: 1 << 20, Held: g.set})
			req := httptest.NewRequest(http.MethodPost, "/mutate", strings.NewReader(strings.Repeat("a", 17)))
			req.ContentLength = tc.contentLength
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if now, _ := g.get(); rec.Code != http.StatusRequestEntityTooLarge || now != 0 {
				t.Errorf("status %d, %d bytes held after; want 413, 0", rec.Code, now)
			}
		})
	}
}

// TestClientsHoldTheBudgetOnly: clients that announce large bodies and
// stall hold only what they sent (a chunk each at most), however much
// they announce; once the budget is spent, the next is refused with 503
// within the wait, before its body is read; and what is held never
// passes the budget.
func TestClientsHoldTheBudgetOnly(t *testing.T) {
	const budget = 4 * chunk
	var g gauge
	var refused atomic.Int32
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }),
		Limits{Slots: 8, MaxBody: 1 << 20, Budget: budget, Wait: 50 * time.Millisecond, Held: g.set, OnRefuse: func() { refused.Add(1) }})
	srv := httptest.NewServer(h)
	defer srv.Close()

	// Each of 4 clients announces 1 MiB, sends 10 bytes and stalls: it
	// holds its first chunk, no more.
	for i := range 4 {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", 1<<20, strings.Repeat("a", 10))
		waitFor(t, fmt.Sprintf("client %d's chunk to be held", i), func() bool { now, _ := g.get(); return now == int64(i+1)*chunk })
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(srv.URL+"/mutate", "application/json", strings.NewReader(`{"whole":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || refused.Load() != 1 {
		t.Errorf("a request with the budget spent: %d, refused %d; want 503, 1", resp.StatusCode, refused.Load())
	}
	if _, peak := g.get(); peak > budget {
		t.Errorf("%d bytes held at most, over the budget of %d", peak, budget)
	}
}

// TestBytesAreGivenBackOnEveryPath: whatever way a request ends, every
// byte it reserved is given back, and the next request finds the whole
// budget.
func TestBytesAreGivenBackOnEveryPath(t *testing.T) {
	const budget = 4 * chunk
	body := strings.Repeat("a", 3*chunk/2)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		// send writes the request on conn, and may close it.
		send func(conn net.Conn)
		cost func(int64) int64
	}{
		{
			name:    "answered",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) },
			send: func(conn net.Conn) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
				_, _ = io.Copy(io.Discard, conn)
			},
		},
		{
			name:    "the handler panics",
			handler: func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) },
			send: func(conn net.Conn) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
				_, _ = io.Copy(io.Discard, conn)
			},
		},
		{
			name:    "the client goes away half-way through its body",
			handler: func(http.ResponseWriter, *http.Request) { panic("served") },
			send: func(conn net.Conn) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", 2*len(body), body)
				conn.Close()
			},
		},
		{
			name:    "the cost of serving is not there",
			handler: func(http.ResponseWriter, *http.Request) { panic("served") },
			cost:    func(int64) int64 { return budget },
			send: func(conn net.Conn) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
				_, _ = io.Copy(io.Discard, conn)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g gauge
			h := LimitConcurrency(tc.handler, Limits{Slots: 1, MaxBody: 1 << 20, Budget: budget, PerRequest: 100, Cost: tc.cost, Wait: 10 * time.Millisecond, Held: g.set})
			srv := httptest.NewServer(h)
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			tc.send(conn)
			conn.Close()
			waitFor(t, "every byte to be given back", func() bool {
				now, peak := g.get()
				return now == 0 && peak > 0
			})
		})
	}
}
