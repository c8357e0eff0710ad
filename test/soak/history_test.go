package main

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// sample is a Lease read sent at ms and answered 5 ms later.
func sample(ms, holder int) leaseSample {
	return leaseSample{sent: at(ms), answered: at(ms + 5), holder: holder, identity: replicaHostname(holder) + "_x"}
}

// TestWritesOutsideTheirTerm is the fencing check's specification.
func TestWritesOutsideTheirTerm(t *testing.T) {
	// Replica 0 leads until between 1000 and 1200 ms, then replica 1.
	handOver := []leaseSample{sample(0, 0), sample(800, 0), sample(1000, 0), sample(1200, 1), sample(1400, 1)}
	tests := []struct {
		name    string
		w       write
		samples []leaseSample
		want    bool
	}{
		{"the leader writes in its term", write{at: at(500), replica: 0}, handOver, false},
		{"the standby writes in the leader's term", write{at: at(500), replica: 1}, handOver, true},
		{"the new leader writes before a sample names it", write{at: at(1100), replica: 1}, handOver, false},
		{"the old leader writes between the samples: it may still have led", write{at: at(1100), replica: 0}, handOver, false},
		{"the old leader writes after a sample named the new one (a resumed freeze)", write{at: at(1300), replica: 0}, handOver, true},
		{"a write before any sample proves nothing", write{at: at(-100), replica: 1}, handOver, false},
		{"a write after the last sample proves nothing", write{at: at(1500), replica: 0}, handOver, false},
		{"nobody holds the Lease (released) and a replica writes", write{at: at(300), replica: 0},
			[]leaseSample{sample(0, 0), sample(200, -1), sample(400, -1)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := writesOutsideTheirTerm([]write{tc.w}, tc.samples)
			if (len(got) > 0) != tc.want {
				t.Errorf("violations %q, want a violation: %v", got, tc.want)
			}
		})
	}
}

// TestIDsThatChanged: the ID-stability check, fed a delete-and-recreate
// (the network and subnet replaced under one UID), reports it; a gateway
// move, which keeps the IDs, and a status cleared while deleting do not.
func TestIDsThatChanged(t *testing.T) {
	h := newHistory()
	recreated, moved := types.UID("uid-recreated"), types.UID("uid-moved")
	h.recordIDs(recreated, idSighting{at: at(0), name: "n-1", generation: 1, network: "net-a", subnet: "sub-a"})
	h.recordIDs(recreated, idSighting{at: at(900), name: "n-1", generation: 1, network: "net-b", subnet: "sub-b"})
	h.recordIDs(moved, idSighting{at: at(0), name: "n-2", generation: 1, network: "net-c", subnet: "sub-c"})
	h.recordIDs(moved, idSighting{at: at(500), name: "n-2", generation: 2, network: "net-c", subnet: "sub-c"})
	h.recordIDs(moved, idSighting{at: at(800), name: "n-2", generation: 2, network: "", subnet: ""})
	got := h.check()
	if len(got) != 1 || !strings.Contains(got[0], "n-1") || !strings.Contains(got[0], "net-b") {
		t.Errorf("violations %q, want one naming n-1 and its new network", got)
	}
}

func TestReplicaOf(t *testing.T) {
	for identity, want := range map[string]int{
		replicaHostname(0) + "_1b4e28ba-2fa1-11d2-883f-0016d3cca427": 0,
		replicaHostname(1) + "_x":                                    1,
		"someone-else_x":                                             -1,
		"":                                                           -1,
	} {
		if got := replicaOf(identity); got != want {
			t.Errorf("replicaOf(%q) = %d, want %d", identity, got, want)
		}
	}
}
