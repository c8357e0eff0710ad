package serving

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// room is where requests wait for their clients: a request holds one of
// its places from when its headers are read until its body has arrived
// in full and what serving it costs is reserved. What a place stands for
// (its connection's buffers and the chunk of body being read) is set
// aside from the budget for the room alone, so requests that have not
// sent their bodies hold a bounded part of the memory, and the rest is
// left to bodies that did arrive.
//
// The room never turns a request away for want of a place while one is
// held by a request still waiting for its client: the newcomer takes the
// place of the idlest such request (the one whose client sent a byte the
// longest ago), which is cut. The API server sends a whole review at
// once, so its requests are the least idle there are; a client that
// stalls is the one cut. Whose place is taken is bounded by source (the
// client's IP): a source that holds perSource places gives up its own
// idlest, so a single client, however many connections it opens, only
// ever cuts itself, even one that shares its address with the API server;
// and when the room is full, the place is taken from the source that
// holds the most, so that clients of many addresses, each holding few,
// cut each other before they cut the API server. Only a newcomer that
// finds every place it may take (its source's, at its cap) held by a
// request whose body has arrived (waiting for the budget, a moment at
// most) is turned away: that is overload.
type room struct {
	places, perSource int
	// changed is told of every place taken (+1) or given back (-1).
	changed func(delta int)

	mu sync.Mutex
	// sources holds the guests of each source that holds a place, and no
	// other: a source is forgotten when it holds none, so the map never
	// has more entries than the room has places.
	sources map[string][]*guest
	taken   int
}

// guest is a request's place in the room.
type guest struct {
	source string
	// heard is when its client last sent a byte of its body (or its
	// headers), in Unix nanoseconds.
	heard atomic.Int64
	// cut ends its wait for its client, so that its handler returns.
	cut func()

	// Under room.mu: seated while it holds its place; waiting while its
	// body is still arriving (a place that may be taken); chosen once its
	// place was given to another.
	seated, waiting, chosen bool

	// mu orders cut against the request moving on: once done, its
	// handler no longer waits for the client, and cut is not called.
	mu   sync.Mutex
	done bool
}

func newRoom(places, perSource int, changed func(int)) *room {
	if perSource <= 0 || perSource > places {
		perSource = places
	}
	return &room{places: places, perSource: perSource, changed: changed, sources: map[string][]*guest{}}
}

// enter gives a request of source a place, taking it from the idlest
// request that waits for its client when the source, or the room, has
// none left; that request is cut with its cut. It returns false when
// there is no place to take.
func (r *room) enter(source string, cut func()) (*guest, bool) {
	g := &guest{source: source, cut: cut, waiting: true}
	g.heardNow()
	victim, ok := r.seat(g)
	if victim != nil {
		victim.cutOff()
	}
	return g, ok
}

// seat seats g, and returns the guest whose place it took, if any.
func (r *room) seat(g *guest) (victim *guest, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case len(r.sources[g.source]) >= r.perSource:
		victim = idlest(r.sources[g.source])
	case r.taken >= r.places:
		victim = r.idlestOfTheHeaviest()
	default:
		r.add(g)
		return nil, true
	}
	if victim == nil {
		return nil, false
	}
	victim.chosen = true
	r.remove(victim)
	r.add(g)
	return victim, true
}

// idlestOfTheHeaviest is the idlest guest waiting for its client among
// those of the source that holds the most places and has such a guest.
func (r *room) idlestOfTheHeaviest() *guest {
	var victim *guest
	most := 0
	for _, guests := range r.sources {
		g := idlest(guests)
		if g == nil {
			continue
		}
		if len(guests) > most || len(guests) == most && g.heard.Load() < victim.heard.Load() {
			victim, most = g, len(guests)
		}
	}
	return victim
}

// idlest is the guest among guests that waits for its client and heard
// from it the longest ago.
func idlest(guests []*guest) *guest {
	var victim *guest
	for _, g := range guests {
		if g.waiting && (victim == nil || g.heard.Load() < victim.heard.Load()) {
			victim = g
		}
	}
	return victim
}

func (r *room) add(g *guest) {
	r.sources[g.source] = append(r.sources[g.source], g)
	g.seated = true
	r.taken++
	r.changed(1)
}

func (r *room) remove(g *guest) {
	guests := slices.DeleteFunc(r.sources[g.source], func(o *guest) bool { return o == g })
	if len(guests) == 0 {
		delete(r.sources, g.source)
	} else {
		r.sources[g.source] = guests
	}
	g.seated = false
	r.taken--
	r.changed(-1)
}

// stopWaiting says g's body has arrived, or will not: its place can no
// longer be taken, and g is not cut after it returns. It returns false
// when its place was taken before.
func (r *room) stopWaiting(g *guest) (kept bool) {
	r.mu.Lock()
	g.waiting = false
	kept = !g.chosen
	r.mu.Unlock()
	g.mu.Lock()
	g.done = true
	g.mu.Unlock()
	return kept
}

// leave gives g's place back, once.
func (r *room) leave(g *guest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g.seated {
		r.remove(g)
	}
}

func (g *guest) heardNow() { g.heard.Store(time.Now().UnixNano()) }

// cutOff cuts g unless its handler has stopped waiting for its client.
func (g *guest) cutOff() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.done {
		g.cut()
	}
}

// heardReader tells its guest of every byte read.
type heardReader struct {
	io.ReadCloser
	guest *guest
}

func (h heardReader) Read(p []byte) (int, error) {
	n, err := h.ReadCloser.Read(p)
	if n > 0 {
		h.guest.heardNow()
	}
	return n, err
}

// cutter ends the wait of w's request for its client: its read deadline
// passes now, so the read under way returns, and cancel is called, so
// that a wait for the budget ends too. A ResponseWriter that cannot set
// a deadline (a test's recorder) reads on; its place is given up all the
// same.
func cutter(w http.ResponseWriter, cancel context.CancelFunc) func() {
	rc := http.NewResponseController(w)
	return func() {
		cancel()
		_ = rc.SetReadDeadline(time.Now())
	}
}

// sourceOf is the address a request comes from, without its port: one
// client (a Pod, the API server) whatever connections it opens.
func sourceOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
