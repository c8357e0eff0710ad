package inventory

import (
	"fmt"
	"testing"
	"time"
)

// listsStarted is how many lists one namespace starts within horizon on
// pace p, asking for one at every moment, each list taking took, when
// share namespaces list its project.
func listsStarted(p *Pace, share int, took, horizon time.Duration) int {
	start := time.Unix(1e9, 0)
	started := 0
	for now := start; now.Sub(start) < horizon; {
		if wait := p.claim(now, share); wait > 0 {
			now = now.Add(wait)
			continue
		}
		started++
		p.listed(now, now.Add(took))
		now = now.Add(took)
	}
	return started
}

// TestNamespacesTogetherStartNoMoreListsThanOne: N namespaces that each
// ask for a list at every moment, on paces of their own, together start
// no more lists of their project in an hour than one namespace alone
// would (but for each one's first, which waits for nothing), and none
// more than its equal part, however long a list takes.
func TestNamespacesTogetherStartNoMoreListsThanOne(t *testing.T) {
	const hour = time.Hour
	for _, took := range []time.Duration{0, 300 * time.Millisecond, MinListGap, 4 * time.Second, 30 * time.Second} {
		alone := listsStarted(&Pace{}, 1, took, hour)
		for _, n := range []int{2, 3, 8} {
			t.Run(fmt.Sprintf("lists of %v, %d namespaces", took, n), func(t *testing.T) {
				total := 0
				for range n {
					each := listsStarted(&Pace{}, n, took, hour)
					if each > alone/n+1 {
						t.Errorf("one namespace started %d lists, more than its part of %d", each, alone)
					}
					total += each
				}
				if total > alone+n {
					t.Errorf("%d namespaces started %d lists together, one alone %d", n, total, alone)
				}
			})
		}
	}
}
