package serving

import (
	"fmt"
	"testing"
)

// seated is a guest the room holds at the start of a case.
type seated struct {
	source string
	// heard orders the guests: the lowest heard from its client the
	// longest ago.
	heard int64
	// arrived: its body is read, its place can no longer be taken.
	arrived bool
}

// TestTheRoom: whose place a newcomer takes, or whether it is turned
// away, by source and by how long each guest has waited for its client.
func TestTheRoom(t *testing.T) {
	for _, tc := range []struct {
		name              string
		places, perSource int
		guests            []seated
		newcomer          string
		// cut is the index of the guest whose place is taken; -1 none.
		cut int
		ok  bool
	}{
		{
			name: "a free place is taken, no one is cut", places: 3, perSource: 3,
			guests: []seated{{"a", 1, false}}, newcomer: "b", cut: -1, ok: true,
		},
		{
			name: "a source at its cap gives up its own idlest, not an idler of another", places: 4, perSource: 2,
			guests: []seated{{"api", 1, false}, {"a", 3, false}, {"a", 2, false}}, newcomer: "a", cut: 2, ok: true,
		},
		{
			name: "a full room takes the idlest place of the source that holds the most", places: 3, perSource: 3,
			guests: []seated{{"api", 1, false}, {"a", 3, false}, {"a", 2, false}}, newcomer: "b", cut: 2, ok: true,
		},
		{
			name: "among sources that hold as many, the idlest place", places: 4, perSource: 2,
			guests: []seated{{"a", 4, false}, {"b", 5, false}, {"b", 1, false}, {"a", 3, false}}, newcomer: "api", cut: 2, ok: true,
		},
		{
			name: "a request whose body arrived is not cut: the next source holding the most gives", places: 3, perSource: 3,
			guests: []seated{{"api", 1, false}, {"a", 2, true}, {"a", 3, true}}, newcomer: "b", cut: 0, ok: true,
		},
		{
			name: "every body arrived: the newcomer is turned away", places: 2, perSource: 2,
			guests: []seated{{"a", 1, true}, {"b", 2, true}}, newcomer: "c", cut: -1, ok: false,
		},
		{
			name: "a source at its cap whose bodies all arrived is turned away, though others wait", places: 4, perSource: 1,
			guests: []seated{{"a", 2, true}, {"b", 1, false}}, newcomer: "a", cut: -1, ok: false,
		},
		{
			name: "no cap of its own is the room's", places: 2, perSource: 0,
			guests: []seated{{"a", 1, false}}, newcomer: "a", cut: -1, ok: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			taken := 0
			r := newRoom(tc.places, tc.perSource, func(delta int) { taken += delta })
			cut := -1
			var guests []*guest
			for i, s := range tc.guests {
				g, ok := r.enter(s.source, func() { cut = i })
				if !ok {
					t.Fatalf("guest %d was turned away", i)
				}
				g.heard.Store(s.heard)
				if s.arrived && !r.stopWaiting(g) {
					t.Fatalf("guest %d lost its place", i)
				}
				guests = append(guests, g)
			}
			if cut != -1 {
				t.Fatalf("guest %d was cut while the room filled", cut)
			}
			newcomer, ok := r.enter(tc.newcomer, func() { t.Error("the newcomer was cut") })
			if ok != tc.ok || cut != tc.cut {
				t.Fatalf("the newcomer of %s: admitted %v, guest %d cut; want %v, %d", tc.newcomer, ok, cut, tc.ok, tc.cut)
			}
			if cut >= 0 && r.stopWaiting(guests[cut]) {
				t.Errorf("guest %d was cut, but was told it kept its place", cut)
			}
			want := len(tc.guests) + 1
			if cut >= 0 {
				want--
			}
			if ok && taken != want {
				t.Errorf("%d places taken, want %d", taken, want)
			}
			for i, g := range guests {
				if i != cut {
					r.leave(g)
				}
			}
			if ok {
				r.leave(newcomer)
				r.leave(newcomer)
			}
			if taken != 0 || len(r.sources) != 0 {
				t.Errorf("once every guest left: %d places taken, %d sources remembered; want 0, 0", taken, len(r.sources))
			}
		})
	}
}

// TestTheRoomRemembersNoMoreSourcesThanPlaces: however many sources come,
// the room remembers only those that hold a place.
func TestTheRoomRemembersNoMoreSourcesThanPlaces(t *testing.T) {
	r := newRoom(8, 2, func(int) {})
	for i := range 1000 {
		g, ok := r.enter(fmt.Sprintf("10.0.%d.%d", i/256, i%256), func() {})
		if !ok {
			t.Fatalf("source %d was turned away", i)
		}
		g.heard.Store(int64(i))
		if len(r.sources) > 8 {
			t.Fatalf("%d sources remembered after %d came, over the 8 places", len(r.sources), i+1)
		}
	}
}

// TestACutGuestIsNotCutOnceDone: a place taken after its guest stopped
// waiting does not end the request: cut is not called.
func TestACutGuestIsNotCutOnceDone(t *testing.T) {
	g := &guest{cut: func() { t.Error("cut after its handler stopped waiting") }}
	g.done = true
	g.cutOff()
}
