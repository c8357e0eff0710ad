package tenancy

import (
	"slices"
	"time"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// olderAtWork counts the Networks of networks (network's namespace's)
// that rank before network and are at work: a cap of that many or fewer
// refuses network.
//
// A Network is at work once the controller has put its finalizer on it
// or made something in Neutron for it (status.networkID): that is what
// uses the project's quota. The namespace's Networks rank by creation,
// then name, so the answer does not depend on the order in which they
// are synced: the limit oldest of those at work keep working, and a newer
// one, at work already (the cap was lowered) or not yet, is refused until
// an older one is gone. A Network older than those at work but never made
// (refused before for another reason) ranks by its age all the same once
// it may be made: the cap is on the count, and the oldest win.
//
// A Network being deleted is never asked about (Check returns before),
// but it still holds its place until its finalizer is gone, as its
// Neutron resources still count against the quota.
func olderAtWork(networks []*samplecrdv2.Network, network *samplecrdv2.Network) int {
	older := 0
	for _, n := range networks {
		if n.Name != network.Name && atWork(n) && ranksBefore(n, network) {
			older++
		}
	}
	return older
}

// atWork reports whether the controller has taken n on: its finalizer is
// on, or it has a Neutron network.
func atWork(n *samplecrdv2.Network) bool {
	return slices.Contains(n.Finalizers, samplecrdv1.NetworkFinalizer) || n.Status.NetworkID != ""
}

// ranksBefore reports whether a was made before b, the name deciding
// within one second (the resolution of creationTimestamp). A Network not
// stored yet (a plan's) ranks after every stored one.
func ranksBefore(a, b *samplecrdv2.Network) bool {
	ta, tb := created(a), created(b)
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.Name < b.Name
}

// created is n's creation time, the far future for a Network not stored.
func created(n *samplecrdv2.Network) time.Time {
	if n.CreationTimestamp.IsZero() {
		return time.Unix(1<<62, 0)
	}
	return n.CreationTimestamp.Time
}

// mayHaveRefused reports whether a cap of limit may have refused one of
// networks (a namespace's, as the cache holds them once a deletion is
// gone from it): one is not at work and not being deleted (refused, or
// not synced yet), or limit or more are at work. Otherwise every Network
// at work ranks before fewer than limit others at work, now and before
// the deletion (which took at most one away), so none was refused.
func mayHaveRefused(networks []*samplecrdv2.Network, limit int32) bool {
	working := 0
	for _, n := range networks {
		switch {
		case atWork(n):
			working++
		case n.DeletionTimestamp == nil:
			return true
		}
	}
	return working >= int(limit)
}

// waitingForCap returns the Networks of networks (one namespace's) that a
// cap of limit refuses now, the oldest first: each not being deleted that
// ranks after limit or more at work. It is olderAtWork's rule, counted in
// one pass over the Networks by rank rather than once per Network (a
// test holds the two equal).
func waitingForCap(networks []*samplecrdv2.Network, limit int32) []*samplecrdv2.Network {
	ranked := slices.Clone(networks)
	slices.SortFunc(ranked, func(a, b *samplecrdv2.Network) int {
		switch {
		case ranksBefore(a, b):
			return -1
		case ranksBefore(b, a):
			return 1
		}
		return 0
	})
	var waiting []*samplecrdv2.Network
	older := 0
	for _, n := range ranked {
		if n.DeletionTimestamp == nil && older >= int(limit) {
			waiting = append(waiting, n)
		}
		if atWork(n) {
			older++
		}
	}
	return waiting
}
