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
	}), Limits{Slots: 2, MaxBody: 1 << 10, Budget: 1 << 20, Waiting: 4, OnRefuse: func() { refused.Add(1) }})

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
	}), Limits{Slots: 2, MaxBody: 1 << 10, Budget: 1 << 20, Waiting: 16})
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
				Limits{Slots: 1, MaxBody: 16, Budget: 1 << 20, Waiting: 1, Held: g.set})
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

// stall sends, from a connection of its own, the headers of a POST that
// announces length bytes, and part of its body, then nothing; it returns
// the connection, which the test closes.
func stall(t *testing.T, addr string, length int, part string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", length, part)
	return conn
}

// TestStalledClientsHoldPlacesNotTheBudget: clients that announce large
// bodies and stall hold one place each among the waiting (its connection
// and a chunk), however much they announce, and none of the budget for
// bodies; with every place held, a request that arrives whole takes the
// idlest's place and is served, and that client gets 408 and its
// connection closed. What is held never passes the budget.
func TestStalledClientsHoldPlacesNotTheBudget(t *testing.T) {
	const places = 4
	var g gauge
	var refused atomic.Int32
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) }),
		Limits{Slots: 8, MaxBody: 1 << 20, Budget: (places + 1) * chunk, Waiting: places, Wait: 50 * time.Millisecond, Held: g.set, OnRefuse: func() { refused.Add(1) }})
	srv := httptest.NewServer(h)
	// Closed after the stalled clients, or it would wait for them.
	t.Cleanup(srv.Close)

	var stalled []net.Conn
	for i := range places {
		stalled = append(stalled, stall(t, srv.Listener.Addr().String(), 1<<20, strings.Repeat("a", 10)))
		waitFor(t, fmt.Sprintf("client %d's place to be held", i), func() bool { now, _ := g.get(); return now == int64(i+1)*chunk })
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(srv.URL+"/mutate", "application/json", strings.NewReader(`{"whole":true}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"whole":true}` || refused.Load() != 0 {
		t.Errorf("a whole request behind %d stalled clients: %d %q, refused %d; want 200, its body echoed", places, resp.StatusCode, body, refused.Load())
	}
	_ = stalled[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if answer, _ := io.ReadAll(stalled[0]); !strings.HasPrefix(string(answer), "HTTP/1.1 408") {
		t.Errorf("the first, idlest, stalled client read %.60q; want 408 and its connection closed", answer)
	}
	if _, peak := g.get(); peak > (places+1)*chunk {
		t.Errorf("%d bytes held at most, over the budget of %d", peak, (places+1)*chunk)
	}
}

// TestBodiesThatArrivedHoldTheBudget: the budget beside the places is
// held by the bytes of bodies that arrived, chunk by chunk; once they
// have spent it, the next request that needs some waits Wait, then gets
// 503.
func TestBodiesThatArrivedHoldTheBudget(t *testing.T) {
	const places = 2
	var g gauge
	var refused atomic.Int32
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }),
		Limits{Slots: 8, MaxBody: 1 << 20, Budget: (places + 2) * chunk, Waiting: places, Wait: 50 * time.Millisecond, Held: g.set, OnRefuse: func() { refused.Add(1) }})
	srv := httptest.NewServer(h)
	// Closed after the stalled clients, or it would wait for them.
	t.Cleanup(srv.Close)

	// Two whole chunks arrive, and 10 bytes of a third: the budget for
	// bodies holds the two, the client's place the third.
	stall(t, srv.Listener.Addr().String(), 1<<20, strings.Repeat("a", 2*chunk+10))
	waitFor(t, "two chunks and a place to be held", func() bool { now, _ := g.get(); return now == (places+1)*chunk })
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(srv.URL+"/mutate", "application/json", strings.NewReader(`{"whole":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || refused.Load() != 1 {
		t.Errorf("a request with the budget spent by a body that arrived: %d, refused %d; want 503, 1", resp.StatusCode, refused.Load())
	}
	if _, peak := g.get(); peak > (places+2)*chunk {
		t.Errorf("%d bytes held at most, over the budget of %d", peak, (places+2)*chunk)
	}
}

// TestAStalledSourceCannotStarveAnother: a client that opens more
// stalled requests than one source may hold keeps no more than its cap,
// from another address or from the API server's own, and a request that
// arrives whole from the API server's address is served meanwhile.
func TestAStalledSourceCannotStarveAnother(t *testing.T) {
	const places, perSource = 8, 4
	for _, tc := range []struct {
		name     string
		attacker string
	}{
		{"from another address", "127.0.0.2"},
		{"from the API server's address", "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g gauge
			h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }),
				Limits{Slots: 8, MaxBody: 1 << 20, Budget: 1 << 20, Waiting: places, PerSource: perSource, Wait: 50 * time.Millisecond, Held: g.set})
			srv := httptest.NewServer(h)
			defer srv.Close()
			dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(tc.attacker)}}
			for i := range 3 * perSource {
				conn, err := dialer.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					t.Skipf("dialing from %s: %v", tc.attacker, err)
				}
				defer conn.Close()
				fmt.Fprintf(conn, "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
				want := int64(min(i+1, perSource)) * chunk
				waitFor(t, fmt.Sprintf("stalled request %d to hold its place", i), func() bool { now, _ := g.get(); return now == want })
			}
			if _, peak := g.get(); peak > perSource*chunk {
				t.Errorf("one source held %d bytes at most, over its %d places of %d", peak, perSource, chunk)
			}
			client := &http.Client{Timeout: 5 * time.Second}
			resp, err := client.Post(srv.URL+"/mutate", "application/json", strings.NewReader(`{"whole":true}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("the API server's request behind a source at its cap: %d, want 200", resp.StatusCode)
			}
		})
	}
}

// TestACutRequestStopsWaitingForTheBudget: a request whose body waits
// for the budget is still waiting for its client, and when its place is
// taken, it stops waiting for the budget too (Wait is longer than the
// test's clients wait) and gets 408; the request that took its place is
// served with what it gave back.
func TestACutRequestStopsWaitingForTheBudget(t *testing.T) {
	var g gauge
	h := LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) }),
		Limits{Slots: 8, MaxBody: 1 << 20, Budget: 3 * chunk, Waiting: 2, PerSource: 1, Wait: 20 * time.Second, Held: g.set})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	// Its first chunk spends the budget for bodies, its second waits.
	waiting := stall(t, srv.Listener.Addr().String(), 1<<20, strings.Repeat("a", 2*chunk))
	waitFor(t, "the first chunk and the place to be held", func() bool { now, _ := g.get(); return now == 2*chunk })
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(srv.URL+"/mutate", "application/json", strings.NewReader(`{"whole":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the request that took the place: %d, want 200", resp.StatusCode)
	}
	_ = waiting.SetReadDeadline(time.Now().Add(5 * time.Second))
	if answer, _ := io.ReadAll(waiting); !strings.HasPrefix(string(answer), "HTTP/1.1 408") {
		t.Errorf("the request cut while it waited for the budget read %.60q; want 408", answer)
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
		// send writes the request on conn, and may close it; g is the
		// gauge, addr the server's.
		send func(t *testing.T, conn net.Conn, g *gauge, addr string)
		cost func(int64) int64
	}{
		{
			name:    "answered",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) },
			send: func(_ *testing.T, conn net.Conn, _ *gauge, _ string) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
				_, _ = io.Copy(io.Discard, conn)
			},
		},
		{
			name:    "the handler panics",
			handler: func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) },
			send: func(_ *testing.T, conn net.Conn, _ *gauge, _ string) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
				_, _ = io.Copy(io.Discard, conn)
			},
		},
		{
			name:    "the client goes away half-way through its body",
			handler: func(http.ResponseWriter, *http.Request) { panic("served") },
			send: func(_ *testing.T, conn net.Conn, _ *gauge, _ string) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", 2*len(body), body)
				conn.Close()
			},
		},
		{
			name:    "the cost of serving is not there",
			handler: func(http.ResponseWriter, *http.Request) { panic("served") },
			cost:    func(int64) int64 { return budget },
			send: func(_ *testing.T, conn net.Conn, _ *gauge, _ string) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
				_, _ = io.Copy(io.Discard, conn)
			},
		},
		{
			name:    "its place is taken by a request that arrives whole",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) },
			send: func(t *testing.T, conn net.Conn, g *gauge, addr string) {
				fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", 2*len(body), body)
				waitFor(t, "the stalled request's place and first chunk to be held", func() bool { now, _ := g.get(); return now == 100+2*chunk })
				whole, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer whole.Close()
				_ = whole.SetDeadline(time.Now().Add(5 * time.Second))
				fmt.Fprintf(whole, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
				if answer, _ := io.ReadAll(whole); !strings.HasPrefix(string(answer), "HTTP/1.1 200") {
					t.Errorf("the whole request read %.60q, want 200", answer)
				}
				if answer, _ := io.ReadAll(conn); !strings.HasPrefix(string(answer), "HTTP/1.1 408") {
					t.Errorf("the stalled request read %.60q, want 408", answer)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g gauge
			h := LimitConcurrency(tc.handler, Limits{Slots: 1, MaxBody: 1 << 20, Budget: budget, PerRequest: 100, Cost: tc.cost, Waiting: 1, Wait: 10 * time.Millisecond, Held: g.set})
			srv := httptest.NewServer(h)
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			tc.send(t, conn, &g, srv.Listener.Addr().String())
			conn.Close()
			waitFor(t, "every byte to be given back", func() bool {
				now, peak := g.get()
				return now == 0 && peak > 0
			})
		})
	}
}
