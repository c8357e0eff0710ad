package neutron

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestThrottleResendsWhatNeutronRefusedToDoYet: a refusal that means "not
// now" is sent again, body and all; anything else is the caller's.
func TestThrottleResendsWhatNeutronRefusedToDoYet(t *testing.T) {
	tests := []struct {
		name string
		// answers are the server's status codes in order, with Retry-After
		// "0" on each; "503!" is a 503 without it.
		answers      []string
		wantCode     int
		wantAttempts int
		wantHonoured int
	}{
		{"429 twice, then done", []string{"429", "429", "201"}, 201, 3, 2},
		{"503 with Retry-After is throttling", []string{"503", "201"}, 201, 2, 1},
		{"503 without Retry-After is an outage: returned at once", []string{"503!"}, 503, 1, 0},
		{"past MaxRetries the refusal is returned", []string{"429", "429", "429", "429", "429"}, 429, 4, 3},
		{"a 400 is an answer", []string{"400"}, 400, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				n := len(bodies)
				bodies = append(bodies, string(b))
				mu.Unlock()
				answer := tc.answers[min(n, len(tc.answers)-1)]
				if !strings.HasSuffix(answer, "!") {
					w.Header().Set("Retry-After", "0")
				}
				code := map[string]int{"429": 429, "503": 503, "503!": 503, "201": 201, "400": 400}[answer]
				w.WriteHeader(code)
			}))
			defer srv.Close()
			honoured := 0
			th := NewThrottle(nil, 100, 10)
			th.OnThrottled = func(int) { honoured++ }
			client := &http.Client{Transport: th}
			resp, err := client.Post(srv.URL+"/v2.0/networks", "application/json", strings.NewReader(`{"network":{}}`))
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantCode || len(bodies) != tc.wantAttempts || honoured != tc.wantHonoured {
				t.Errorf("got %d after %d attempts, %d honoured; want %d after %d, %d", resp.StatusCode, len(bodies), honoured,
					tc.wantCode, tc.wantAttempts, tc.wantHonoured)
			}
			for i, b := range bodies {
				if b != `{"network":{}}` {
					t.Errorf("attempt %d sent body %q", i+1, b)
				}
			}
		})
	}
}

func TestRetryAfterIsReadAsNeutronAndProxiesWriteIt(t *testing.T) {
	th := NewThrottle(nil, 1, 1)
	th.MaxPause = 10 * time.Second
	tests := []struct {
		code   int
		header string
		want   time.Duration
		ok     bool
	}{
		{429, "", time.Second, true},
		{429, "3", 3 * time.Second, true},
		{429, "3600", 10 * time.Second, true},
		{503, "2", 2 * time.Second, true},
		{503, "", 0, false},
		{429, "soon", time.Second, true},
		{500, "2", 0, false},
	}
	for _, tc := range tests {
		resp := &http.Response{StatusCode: tc.code, Header: http.Header{}}
		if tc.header != "" {
			resp.Header.Set("Retry-After", tc.header)
		}
		if got, ok := th.retryAfter(resp); got != tc.want || ok != tc.ok {
			t.Errorf("%d Retry-After %q: %s %v, want %s %v", tc.code, tc.header, got, ok, tc.want, tc.ok)
		}
	}
}
