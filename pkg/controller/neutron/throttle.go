package neutron

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Throttle is an http.RoundTripper that keeps a Neutron client within a
// request rate, and slows down when Neutron (or a proxy in front of it)
// says so: a 429, or a 503 with Retry-After, pauses every request of the
// client until the time the answer names, and the refused request is sent
// again, up to MaxRetries times. Both answers mean the request was not
// carried out, so resending a create is safe. A 503 without Retry-After is
// an outage, not throttling: it is returned, for the breaker to judge.
type Throttle struct {
	next    http.RoundTripper
	limiter flowcontrol.RateLimiter
	clock   clock.Clock
	// MaxRetries bounds the resends of one request; past it, the refusal
	// is returned and the caller's backoff takes over.
	MaxRetries int
	// MaxPause bounds one pause, whatever Retry-After says.
	MaxPause time.Duration
	// OnThrottled, if set, is told each honoured refusal's status code.
	OnThrottled func(code int)

	mu        sync.Mutex
	notBefore time.Time
}

// NewThrottle returns a Throttle of qps requests per second with bursts of
// burst in front of next (http.DefaultTransport when nil).
func NewThrottle(next http.RoundTripper, qps float32, burst int) *Throttle {
	if next == nil {
		next = http.DefaultTransport
	}
	c := clock.RealClock{}
	return &Throttle{next: next, limiter: flowcontrol.NewTokenBucketRateLimiterWithClock(qps, burst, c), clock: c,
		MaxRetries: 3, MaxPause: 30 * time.Second}
}

// RoundTrip sends req when the rate and any pause allow, and again after a
// throttling answer.
func (t *Throttle) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		if err := t.wait(req.Context()); err != nil {
			return nil, err
		}
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		pause, throttled := t.retryAfter(resp)
		if !throttled || attempt == t.MaxRetries {
			return resp, nil
		}
		resend, ok := rewound(req)
		if !ok {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if t.OnThrottled != nil {
			t.OnThrottled(resp.StatusCode)
		}
		t.pauseFor(pause)
		req = resend
	}
}

// wait blocks until the pause is over and the rate allows one request.
func (t *Throttle) wait(ctx context.Context) error {
	t.mu.Lock()
	d := t.notBefore.Sub(t.clock.Now())
	t.mu.Unlock()
	if d > 0 {
		timer := t.clock.NewTimer(d)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C():
		}
	}
	return t.limiter.Wait(ctx)
}

// retryAfter says whether resp is a throttling answer, and how long to
// pause: Retry-After in seconds or as an HTTP date, else one second, at
// most MaxPause.
func (t *Throttle) retryAfter(resp *http.Response) (time.Duration, bool) {
	header := resp.Header.Get("Retry-After")
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
	case resp.StatusCode == http.StatusServiceUnavailable && header != "":
	default:
		return 0, false
	}
	d := time.Second
	if secs, err := strconv.Atoi(header); err == nil && secs >= 0 {
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(header); err == nil {
		d = at.Sub(t.clock.Now())
	}
	return min(max(d, 0), t.MaxPause), true
}

func (t *Throttle) pauseFor(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if until := t.clock.Now().Add(d); until.After(t.notBefore) {
		t.notBefore = until
	}
}

// rewound is req ready to be sent again: its body from the start.
func rewound(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	out := req.Clone(req.Context())
	out.Body = body
	return out, true
}
