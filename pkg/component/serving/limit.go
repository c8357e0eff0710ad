package serving

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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
	// places of those that wait for their clients (Waiting of them, each
	// PerRequest and a chunk), set aside; and beside them the bodies, as
	// much of them as arrived, and for each body read what its connection
	// holds (PerRequest) and what serving it costs. It must be at least
	// Least(), or the largest body could never be served.
	Budget int64
	// PerRequest is what a request's connection holds besides its body
	// (RequestOverhead).
	PerRequest int64
	// Cost is how many bytes, besides the body itself, serving a body of n
	// bytes may allocate (decoding it, answering); nil is none.
	Cost func(n int64) int64
	// Waiting is how many requests may wait for their clients at once,
	// from their headers until their bodies have arrived (WaitingRequests);
	// at least 1.
	Waiting int
	// PerSource is how many of those one source, a client's IP address,
	// may hold (WaitingPerSource); 0 is Waiting.
	PerSource int
	// Wait is how long a request waits for a slot, or for bytes of the
	// budget, before it is refused with 503.
	Wait time.Duration
	// OnRefuse, if set, is told of every request refused with 503.
	OnRefuse func()
	// Held, if set, is told the bytes held across all requests after
	// every change: the program's gauge.
	Held func(bytes int64)
}

// Least is the smallest Budget that serves the largest body while every
// place of the waiting is held.
func (l Limits) Least() int64 { return l.waitingBytes() + l.PerRequest + l.MaxBody + l.cost(l.MaxBody) }

// place is what a request holds while it waits for its client: its
// connection, and the chunk of body being read into.
func (l Limits) place() int64 { return l.PerRequest + chunk }

// waitingBytes is what the waiting hold at most, set aside from Budget.
func (l Limits) waitingBytes() int64 { return int64(l.Waiting) * l.place() }

func (l Limits) cost(n int64) int64 {
	if l.Cost == nil {
		return 0
	}
	return l.Cost(n)
}

// RequestOverhead is what a request's connection holds besides its body,
// measured with 200 stalled TLS clients (test/e2e's
// TestStalledClientsStayWithinTheBudget): about 90 KiB of TLS records and
// HTTP buffers, its goroutine, and what its handshake left.
const RequestOverhead = 96 << 10

// WaitingRequests and WaitingPerSource are how many requests both
// webhooks let wait for their clients at once, and how many of them one
// source may hold. The API server sends a whole review at once, so each
// of its requests waits there for microseconds (a review of megabytes,
// milliseconds): 64 places hold far more of them than arrive together,
// and set aside 8 MiB. Half of them for one source leaves the API server
// room for a burst, and means that two sources at their caps only ever
// cut their own; to take a place of the API server's, clients must hold
// the room from about as many addresses as it has places, each holding
// no more than the API server does, and its request must be the idlest.
const (
	WaitingRequests  = 64
	WaitingPerSource = WaitingRequests / 2
)

// chunk is how many bytes of a body are read at a time: the buffer being
// filled is the request's place's, and once full it is reserved from the
// budget, so the budget holds only bytes that arrived.
const chunk = 32 << 10

// errNoBudget is a reservation that did not come within Limits.Wait.
var errNoBudget = errors.New("no memory for this request within the wait")

// LimitConcurrency serves at most l.Slots requests of h at once, and holds
// all requests' bytes within l.Budget.
//
// What a request holds before its body has arrived is bounded apart from
// the rest: from its headers until its body is read in full it holds one
// of l.Waiting places, each l.PerRequest (its connection) and a chunk
// (the buffer its body is read into), set aside from the budget for them
// alone. A client that sends headers and then nothing, or a part of its
// body and then nothing, holds a place, never budget that a whole review
// needs; and when every place is held, the next request takes the place
// of the idlest (see room): the stalled client is cut (408, its
// connection closed), and the API server, which sends each review whole,
// is not made to wait behind it. A source holds at most l.PerSource
// places. Reserving the connection's share from the budget on arrival, as
// this once did, let 2,262 idle connections spend a 280 MiB budget, and
// the API server's next review got 503. Places apart, rather than short
// read deadlines alone, because a deadline frees a connection only once
// it has passed, and clients can open new ones faster than that; the
// places bound what they hold at every moment, whatever their number or
// pace. The server's ReadTimeout (NewWebhookServer) still cuts what
// stalls when no one needs its place.
//
// Body bytes are reserved from the rest of the budget as each chunk
// arrives, never by Content-Length up front, which would let clients that
// announce large bodies and send nothing spend the budget. The whole
// body, at most l.MaxBody bytes, is read before the request asks for a
// slot, so a client that sends slowly never holds one of the slots the
// API server's requests need. Once it is read, its connection and what
// serving it costs (l.Cost) are reserved, its place is given back, and a
// slot is taken; all of it is given back when h has answered, whatever
// way it returns (a panic included).
//
// A request that finds l.Slots under way, or the budget spent, waits up
// to l.Wait, then gets 503 (and l.OnRefuse is told): an overloaded server
// says so quickly, and the caller (the API server, for a webhook) sees a
// clear answer, instead of every request slowing down until all of them
// time out.
func LimitConcurrency(h http.Handler, l Limits) http.Handler {
	b := &budget{sem: semaphore.NewWeighted(max(l.Budget-l.waitingBytes(), 0)), wait: l.Wait, report: l.Held}
	b.reportHeld(0)
	return &limiter{
		next: h, limits: l, slots: make(chan struct{}, l.Slots), budget: b,
		room: newRoom(l.Waiting, l.PerSource, func(delta int) { b.reportHeld(int64(delta) * l.place()) }),
	}
}

// limiter is LimitConcurrency's handler.
type limiter struct {
	next   http.Handler
	limits Limits
	slots  chan struct{}
	budget *budget
	room   *room
}

func (lm *limiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > lm.limits.MaxBody {
		http.Error(w, fmt.Sprintf("a body of %d bytes is over the limit of %d", r.ContentLength, lm.limits.MaxBody), http.StatusRequestEntityTooLarge)
		return
	}
	// waiting ends when the request is cut.
	waiting, cancel := context.WithCancel(r.Context())
	defer cancel()
	g, ok := lm.room.enter(sourceOf(r), cutter(w, cancel))
	if !ok {
		refuse(w, lm.limits.OnRefuse)
		return
	}
	defer lm.room.leave(g)
	var held int64
	defer func() { lm.budget.release(held) }()
	if !lm.readBody(waiting, w, r, g, &held) {
		return
	}
	lm.room.leave(g)
	if !lm.takeSlot(w, r) {
		return
	}
	defer func() { <-lm.slots }()
	lm.next.ServeHTTP(w, r)
}

// readBody reads r's body while g waits in the room (until waiting ends,
// when g is cut), and reserves what serving it costs; r.Body is then the
// body read. It answers the request itself, and returns false, when it
// cannot: the place was taken (408), the budget stayed spent (503), the
// body is too long (413), or it did not arrive (400, or 408 past the
// server's read deadline). What it reserved is added to *held, also when
// it fails.
func (lm *limiter) readBody(waiting context.Context, w http.ResponseWriter, r *http.Request, g *guest, held *int64) bool {
	l := lm.limits
	body, n, err := lm.budget.readBody(waiting, http.MaxBytesReader(w, heardReader{r.Body, g}, l.MaxBody), r.ContentLength, l.MaxBody, held)
	if !lm.room.stopWaiting(g) {
		cutOff(w)
		return false
	}
	if err != nil {
		switch _, tooLarge := errors.AsType[*http.MaxBytesError](err); {
		case errors.Is(err, errNoBudget):
			refuse(w, l.OnRefuse)
		case tooLarge:
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		case errors.Is(err, os.ErrDeadlineExceeded):
			cutOff(w)
		default:
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
		return false
	}
	if err := lm.budget.acquire(r.Context(), l.PerRequest+l.cost(n), held); err != nil {
		refuse(w, l.OnRefuse)
		return false
	}
	r.Body = io.NopCloser(body)
	return true
}

// takeSlot takes one of the slots, waiting up to Limits.Wait; it answers
// 503 and returns false when none came.
func (lm *limiter) takeSlot(w http.ResponseWriter, r *http.Request) bool {
	select {
	case lm.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(lm.limits.Wait)
	defer timer.Stop()
	select {
	case lm.slots <- struct{}{}:
		return true
	case <-timer.C:
	case <-r.Context().Done():
	}
	refuse(w, lm.limits.OnRefuse)
	return false
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
// of at most max bytes, one chunk at a time. Each chunk is read into a
// buffer that the request's place stands for, and reserved once it is
// filled (or the body ends), so a client that stops sending holds no
// budget for what it did not send. It returns the body and its length;
// what it reserved is added to *held, also when it fails.
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
		buf := make([]byte, size)
		n, err := io.ReadFull(body, buf)
		if n > 0 {
			// The whole buffer, what it holds of memory.
			if err := b.acquire(ctx, size, held); err != nil {
				return nil, total, err
			}
			total += int64(n)
			chunks = append(chunks, bytes.NewReader(buf[:n]))
		}
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

// cutOff answers a request whose body did not come while it was needed:
// its place was given to another, or the server's read deadline passed.
// Its connection is closed, which is all a client that stalled gets.
func cutOff(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	http.Error(w, "the body did not arrive in time; send a request whole", http.StatusRequestTimeout)
}
