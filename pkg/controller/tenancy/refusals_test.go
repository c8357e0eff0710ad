package tenancy

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestRefusalsAreBoundedPerNamespace: a refusal holds until it is due
// again; a namespace past its bound forgets its own oldest refusal, never
// another namespace's; refusals that no longer hold are forgotten.
func TestRefusalsAreBoundedPerNamespace(t *testing.T) {
	start, holds := time.Unix(1_000_000, 0), 10*time.Second
	victim := Key{"victim", "cloud", "team"}
	cases := []struct {
		name string
		// attacker is how many refusals namespace "attacker" puts, a
		// millisecond apart, after the victim's.
		attacker  int
		after     time.Duration
		wantHeld  bool
		wantCount int
	}{
		{"the victim's refusal holds", 0, time.Second, true, 1},
		{"and is due again after RereadAfter", 0, holds, false, 1},
		{"another namespace past its bound does not push it out", 2 * maxRefusalsPerNamespace, time.Second, true, 1 + maxRefusalsPerNamespace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := refusals{}
			rs.put(victim, errors.New("refused"), start, holds)
			for i := range tc.attacker {
				rs.put(Key{"attacker", fmt.Sprintf("s%d", i), "team"}, errors.New("refused"), start.Add(time.Duration(i)*time.Millisecond), holds)
			}
			if _, held := rs.get(victim, start.Add(tc.after), holds); held != tc.wantHeld {
				t.Errorf("the victim's refusal held: %v, want %v", held, tc.wantHeld)
			}
			if len(rs) != tc.wantCount {
				t.Errorf("%d refusals held, want %d", len(rs), tc.wantCount)
			}
		})
	}
	rs := refusals{}
	rs.put(Key{"a", "old", "team"}, errors.New("refused"), start, holds)
	rs.put(Key{"a", "new", "team"}, errors.New("refused"), start.Add(holds), holds)
	if _, ok := rs[Key{"a", "old", "team"}]; ok || len(rs) != 1 {
		t.Errorf("a refusal that no longer holds was kept: %v", rs)
	}
}
