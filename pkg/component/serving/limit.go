package serving

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// Limits are what LimitConcurrency holds requests to.
type Limits struct {
	// Slots is how many requests are served at once.
	Slots int
	// MaxBody is the most bytes of one request's body: a longer one is
	// refused with 413.
	MaxBody int64
	// Budget is the most bytes all requests together hold at once: the
	// bodies as they arrive, and what serving each read body costs. It
	// must be at least MaxBody+Cost(MaxBody), or the largest body could
	// never be served.
	Budget int64
	// PerRequest is reserved for every request before its body: what its
	// connection holds besides the body (RequestOverhead).
	PerRequest int64
	// Cost is how many bytes, besides the body itself, serving a body of n
	// bytes may allocate (decoding it, answering); nil is none.
	Cost func(n int64) int64
	// Wait is how long a request waits for a slot, or for bytes of the
	// budget, before it is refused with 503.
	Wait time.Duration
	// OnRefuse, if set, is told of every request refused with 503.
	OnRefuse func()
	// Held, if set, is told the bytes held across all requests after
	// every change: the program's gauge.
	Held func(bytes int64)
}

// RequestOverhead is what a request's connection holds besides its body,
// measured with 200 stalled TLS clients (test/e2e's
// TestStalledClientsStayWithinTheBudget): about 90 KiB of TLS records and
// HTTP buffers, its goroutine, and what its handshake left.
const RequestOverhead = 96 << 10

// chunk is how many bytes of a body are reserved, and read, at a time: a
// client that stops sending holds at most one chunk more than it sent.
const chunk = 32 << 10

// errNoBudget is a reservation that did not come within Limits.Wait.
var errNoBudget = errors.New("no memory for this request within the wait")

// LimitConcurrency serves at most l.Slots requests of h at once, and holds
// all requests' bytes within l.Budget.
//
// A request's body, at most l.MaxBody bytes, is read in full before it
// asks for a slot: a client that sends slowly holds its own connection
// (until the server's ReadTimeout), never one of the slots the API
// server's own requests need. Each chunk of the body is reserved from the
// budget before it is read into memory, so a client holds only bytes it
// has sent (a chunk at most more, and l.PerRequest for its connection), and never more than the budget lets
// all clients together hold: one that finds the budget spent waits up to
// l.Wait, then gets 503 and its connection is closed. Bytes are not
// reserved by Content-Length up front, which would let clients that
// announce large bodies and send nothing spend the budget the API
// server's small reviews need. Once the body is read, what serving it
// costs (l.Cost) is reserved too, then a slot is taken; all of it is
// given back when h has answered, whatever way it returns (a panic
// included).
//
// A request that finds l.Slots under way waits up to l.Wait for one to
// finish, then gets 503 (and l.OnRefuse is told): an overloaded server
// says so quickly, and the caller (the API server, for a webhook) sees a
// clear answer, instead of every request slowing down until all of them
// time out.
func LimitConcurrency(h http.Handler, l Limits) http.Handler {
	slots := make(chan struct{}, l.Slots)
	b := &budget{sem: semaphore.NewWeighted(l.Budget), wait: l.Wait, report: l.Held}
	b.reportHeld(0)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > l.MaxBody {
			http.Error(w, fmt.Sprintf("a body of %d bytes is over the limit of %d", r.ContentLength, l.MaxBody), http.StatusRequestEntityTooLarge)
			return
		}
		var held int64
		defer func() { b.release(held) }()
		if err := b.acquire(r.Context(), l.PerRequest, &held); err != nil {
			refuse(w, l.OnRefuse)
			return
		}
		body, n, err := b.readBody(r.Context(), http.MaxBytesReader(w, r.Body, l.MaxBody), r.ContentLength, l.MaxBody, &held)
		if err != nil {
			switch _, tooLarge := errors.AsType[*http.MaxBytesError](err); {
			case errors.Is(err, errNoBudget):
				refuse(w, l.OnRefuse)
			case tooLarge:
				http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			default:
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
			return
		}
		if l.Cost != nil {
			if err := b.acquire(r.Context(), l.Cost(n), &held); err != nil {
				refuse(w, l.OnRefuse)
				return
			}
		}
		r.Body = io.NopCloser(body)
		select {
		case slots <- struct{}{}:
		default:
			timer := time.NewTimer(l.Wait)
			defer timer.Stop()
			select {
			case slots <- struct{}{}:
			case <-timer.C:
				refuse(w, l.OnRefuse)
				return
			case <-r.Context().Done():
				refuse(w, l.OnRefuse)
				return
			}
		}
		defer func() { <-slots }()
		h.ServeHTTP(w, r)
	})
}

// budget is the bytes all requests together may hold: a semaphore of
// bytes, and the count of those held, for the gauge.
type budget struct {
	sem  *semaphore.Weighted
	wait time.Duration
	// mu orders the reports: with an atomic count, two changes could be
	// reported in the other order, and the gauge left at a stale value.
	mu     sync.Mutex
	held   int64
	report func(int64)
}

// acquire reserves n bytes, waiting up to b.wait, and adds them to
// *held, what the request gives back when it is done.
func (b *budget) acquire(ctx context.Context, n int64, held *int64) error {
	if n <= 0 {
		return nil
	}
	if !b.sem.TryAcquire(n) {
		ctx, cancel := context.WithTimeout(ctx, b.wait)
		defer cancel()
		if err := b.sem.Acquire(ctx, n); err != nil {
			return errNoBudget
		}
	}
	*held += n
	b.reportHeld(n)
	return nil
}

// release gives back n bytes.
func (b *budget) release(n int64) {
	if n > 0 {
		b.sem.Release(n)
		b.reportHeld(-n)
	}
}

func (b *budget) reportHeld(delta int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held += delta
	if b.report != nil {
		b.report(b.held)
	}
}

// readBody reads body, of length bytes when length is known (>= 0) and
// of at most max bytes, one chunk at a time, reserving each chunk before
// it is allocated. It returns the body and its length; what it reserved
// is added to *held, also when it fails.
func (b *budget) readBody(ctx context.Context, body io.Reader, length, max int64, held *int64) (io.Reader, int64, error) {
	var chunks []io.Reader
	var total int64
	for {
		size := int64(chunk)
		switch {
		case length >= 0 && length-total < size:
			size = length - total
		case length < 0 && max+1-total < size:
			// One byte past max, for MaxBytesReader to refuse.
			size = max + 1 - total
		}
		if size <= 0 {
			break
		}
		if err := b.acquire(ctx, size, held); err != nil {
			return nil, total, err
		}
		buf := make([]byte, size)
		n, err := io.ReadFull(body, buf)
		total += int64(n)
		if n == 0 {
			// Nothing came: give the chunk back at once.
			b.release(size)
			*held -= size
		}
		chunks = append(chunks, bytes.NewReader(buf[:n]))
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if length >= 0 && total < length {
				return nil, total, fmt.Errorf("the body ended after %d of its %d bytes: %w", total, length, err)
			}
			break
		}
		if err != nil {
			return nil, total, err
		}
	}
	return io.MultiReader(chunks...), total, nil
}

func refuse(w http.ResponseWriter, onRefuse func()) {
	if onRefuse != nil {
		onRefuse()
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, "too many requests under way; try again", http.StatusServiceUnavailable)
}
