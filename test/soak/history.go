package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// history is what the soak saw happen, on the soak's one clock: every
// Neutron write a replica sent (recorded by that replica's own proxy, so
// which replica sent it is known, not guessed), who held the Lease, and
// the Neutron IDs each Network's status named. It is checked during the
// run and after it (checkHistory).
type history struct {
	mu      sync.Mutex
	writes  []write
	samples []leaseSample
	ids     map[types.UID][]idSighting
	// faulted are the violations a fault saw as it ran, e.g. a revoked
	// token still in use long after it was refused.
	faulted []string
}

// recordViolation records what a fault saw go wrong.
func (h *history) recordViolation(v string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faulted = append(h.faulted, v)
}

// write is one Neutron write that reached a replica's proxy.
type write struct {
	at      time.Time
	replica int
	method  string
	path    string
}

// leaseSample is one read of the Lease: sent at sent, answered at
// answered, naming the replica that held it (-1: nobody, or not one of
// ours).
type leaseSample struct {
	sent, answered time.Time
	holder         int
	identity       string
}

// idSighting is the network and subnet IDs one Network's status named at
// a moment, with its generation then.
type idSighting struct {
	at              time.Time
	name            string
	generation      int64
	network, subnet string
}

func newHistory() *history { return &history{ids: map[types.UID][]idSighting{}} }

func (h *history) recordWrite(w write) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writes = append(h.writes, w)
}

// writesTo names the writes whose path holds id, in order: which
// replica sent what, and when, for a violation to say who touched it.
func (h *history) writesTo(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var named []string
	for _, w := range h.writes {
		if strings.Contains(w.path, id) {
			named = append(named, fmt.Sprintf("%s %s by replica %d at %s", w.method, w.path, w.replica, w.at.Format("15:04:05.000")))
		}
	}
	if len(named) == 0 {
		return "none recorded"
	}
	return strings.Join(named, ", ")
}

func (h *history) recordLease(s leaseSample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
}

func (h *history) recordIDs(uid types.UID, s idSighting) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.network == "" && s.subnet == "" {
		return
	}
	seen := h.ids[uid]
	if n := len(seen); n > 0 && seen[n-1].network == s.network && seen[n-1].subnet == s.subnet {
		return // unchanged: only changes are kept
	}
	h.ids[uid] = append(seen, s)
}

// replicaHostname is the hostname replica i runs with (a UTS namespace of
// its own, as a Pod has): the Lease's holder identity starts with it.
func replicaHostname(i int) string { return fmt.Sprintf("soak-replica-%d", i) }

// replicaOf is the replica whose Lease identity this is, -1 for none.
func replicaOf(identity string) int {
	host, _, _ := strings.Cut(identity, "_")
	i, err := strconv.Atoi(strings.TrimPrefix(host, "soak-replica-"))
	if err != nil || !strings.HasPrefix(host, "soak-replica-") {
		return -1
	}
	return i
}

// check returns every violation in the history so far, sorted.
func (h *history) check() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	violations := writesOutsideTheirTerm(h.writes, h.samples)
	violations = append(violations, idsThatChanged(h.ids)...)
	violations = append(violations, h.faulted...)
	sort.Strings(violations)
	return violations
}

// writesOutsideTheirTerm reports every write that reached Neutron from a
// replica the Lease samples show was not leading around it: the sample
// answered last before the write names another holder (or none), and the
// first sample sent after it does not name the writer either. A replica
// that took the Lease between two samples and wrote at once is therefore
// not blamed (the next sample names it); one that lost the Lease and wrote
// on is. At most one replica writes per term.
func writesOutsideTheirTerm(writes []write, samples []leaseSample) []string {
	var violations []string
	for _, w := range writes {
		before, after := around(samples, w.at)
		if before < 0 || after < 0 {
			continue // no sample on one side: nothing is known
		}
		b, a := samples[before], samples[after]
		if b.holder == w.replica || a.holder == w.replica {
			continue
		}
		violations = append(violations, fmt.Sprintf(
			"replica %d sent %s %s at %s while replica %d held the Lease (sample answered %s: %q; next sample sent %s: %q)",
			w.replica, w.method, w.path, clock(w.at), b.holder, clock(b.answered), b.identity, clock(a.sent), a.identity))
	}
	return violations
}

// around returns the index of the sample answered last at or before at,
// and of the first sample sent at or after it; -1 when there is none.
func around(samples []leaseSample, at time.Time) (before, after int) {
	before, after = -1, -1
	for i, s := range samples {
		if !s.answered.After(at) {
			before = i
		}
		if after < 0 && !s.sent.Before(at) {
			after = i
		}
	}
	return before, after
}

// idsThatChanged reports every Network whose status named a network or
// subnet and later another one. Nothing in the soak's workload replaces a
// live Network's network or subnet (cidr cannot change, a gateway moves in
// place), so a change means the controller deleted and re-made it, or
// switched to a duplicate.
func idsThatChanged(ids map[types.UID][]idSighting) []string {
	var violations []string
	for uid, seen := range ids {
		for i := 1; i < len(seen); i++ {
			was, now := seen[i-1], seen[i]
			if changed(was.network, now.network) || changed(was.subnet, now.subnet) {
				violations = append(violations, fmt.Sprintf(
					"Network %s (%s): status named network %s subnet %s at %s (generation %d), then network %s subnet %s at %s (generation %d)",
					now.name, uid, was.network, was.subnet, clock(was.at), was.generation, now.network, now.subnet, clock(now.at), now.generation))
			}
		}
	}
	return violations
}

// changed: an ID that was set and is now another (being cleared is not a
// change of resource, e.g. while deleting).
func changed(was, now string) bool { return was != "" && now != "" && was != now }

func clock(t time.Time) string { return t.Format("15:04:05.000") }
