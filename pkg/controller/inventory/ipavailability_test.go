package inventory_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAddressCountsAreReadOncePerListAndOnlyForOurNetworks specifies what
// a list reads of Neutron's network-ip-availabilities: one request per
// list, whatever the answer; the counts of the networks it holds as an
// owner's, never a stranger's; and, where Neutron refuses the request (a
// member's credentials, 403; no extension, 404), a list that succeeds all
// the same, with the counts absent; where it fails them (a 5xx), the list
// succeeds too, with the last counts (TestAFailureOfTheCountsKeepsTheLast).
func TestAddressCountsAreReadOncePerListAndOnlyForOurNetworks(t *testing.T) {
	tests := []struct {
		name string
		// refuse makes Neutron answer the counts' request as it would
		// these credentials.
		refuse func(*fake.Neutron)
		// wantCounts: our network's counts are kept.
		wantCounts bool
		// wantErr: the list fails.
		wantErr bool
	}{
		{name: "an administrator's credentials", refuse: func(*fake.Neutron) {}, wantCounts: true},
		{name: "a member's credentials (403)", refuse: func(f *fake.Neutron) { f.AsMember(true) }},
		{name: "a Neutron without the extension (404)", refuse: func(f *fake.Neutron) {
			f.FailOn(fake.ListIPAvailabilities, neutron.ErrorForResponse(fake.ListIPAvailabilities, 404, "", "The resource could not be found."))
		}},
		// The counts only decorate status: Neutron failing them keeps
		// the last ones (none here) and fails no list.
		{name: "a Neutron that fails (500)", refuse: func(f *fake.Neutron) {
			f.FailOn(fake.ListIPAvailabilities, neutron.ErrorForResponse(fake.ListIPAvailabilities, 500, "", "Internal server error"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			f := fake.New()
			m := mark(t, "prod")
			ours, oursSubnet := seed(f, m, ownerA, "10.0.0.0/24")
			// A stranger's network in the same project: an administrator
			// sees its counts, which are none of the controller's business.
			stranger := f.AddNetwork("someone-elses", "")
			f.AddSubnet(stranger, "someone-elses", "", "10.1.0.0/24", "")
			f.AddPortWithAddresses(ours, "vm-1", "compute:nova", "10.0.0.10")
			tt.refuse(f)
			inv := inventory.NewStore(f, m)

			for list := 1; list <= 2; list++ {
				f.ClearRequests()
				_, err := inv.Refresh(ctx)
				if (err != nil) != tt.wantErr {
					t.Fatalf("list %d: err = %v, want an error: %t", list, err, tt.wantErr)
				}
				if n := count(f.Requests(), fake.ListIPAvailabilities); n != 1 {
					t.Errorf("list %d asked for the counts %d times, want once: %q", list, n, f.Requests())
				}
			}
			counts, ok := inv.IPs(ownerA.UID, ours)
			if ok != tt.wantCounts {
				t.Fatalf("our network's counts: %+v, present %t, want present %t", counts, ok, tt.wantCounts)
			}
			if ok {
				// A /24 without a gateway: .1 to .254 in its pool.
				want := neutron.SubnetIPs{SubnetID: oursSubnet, Total: bigInt(254), Used: bigInt(1)}
				if len(counts) != 1 || !counts[0].Equal(want) {
					t.Errorf("our network's counts = %+v, want %+v", counts, want)
				}
			}
			if counts, ok := inv.IPs(ownerA.UID, stranger); ok {
				t.Errorf("a stranger's network's counts were kept: %+v", counts)
			}
		})
	}
}

// TestAFailureOfTheCountsKeepsTheLast: Neutron answers the counts with a
// server error, or past the bound on an answer, after a list that read
// them. The list succeeds (every namespace of the place waits on it for
// drift and orphans), its owner keeps the counts it had, and nothing is
// recounted: a flapping counts request writes no status.
func TestAFailureOfTheCountsKeepsTheLast(t *testing.T) {
	failures := []struct {
		name string
		err  error
	}{
		{"a server error (500)", neutron.ErrorForResponse(fake.ListIPAvailabilities, 500, "", "Internal server error")},
		{"an answer past the bound", fmt.Errorf("listing network IP availabilities: %w", &http.MaxBytesError{Limit: neutron.MaxResponseBytes})},
	}
	for _, failure := range failures {
		t.Run(failure.name, func(t *testing.T) {
			ctx := context.Background()
			f := fake.New()
			m := mark(t, "prod")
			ours, _ := seed(f, m, ownerA, "10.0.0.0/24")
			inv := inventory.NewStore(f, m)
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			before, ok := inv.IPs(ownerA.UID, ours)
			if !ok {
				t.Fatal("the first list read no counts")
			}

			f.FailOn(fake.ListIPAvailabilities, failure.err)
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatalf("the list failed with its counts: %v", err)
			}
			after, ok := inv.IPs(ownerA.UID, ours)
			if !ok || !slices.EqualFunc(before, after, neutron.SubnetIPs.Equal) {
				t.Errorf("counts after the failure: %+v (present %t), want the last ones %+v", after, ok, before)
			}
			if got := inv.Recount(); len(got) != 0 {
				t.Errorf("recounted %v, want nothing: the counts did not change", got)
			}
		})
	}
}

// TestACountThatAloneChangedIsRecountedNotDrift: a port taken on our
// network changes its counts and nothing else of ours. The list reports
// its owner for a recount, whose status says the counts, and not as
// drift; a list that finds the same counts reports nothing.
func TestACountThatAloneChangedIsRecountedNotDrift(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	m := mark(t, "prod")
	ours, _ := seed(f, m, ownerA, "10.0.0.0/24")
	seed(f, m, ownerB, "10.2.0.0/24")
	inv := inventory.NewStore(f, m)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name        string
		change      func()
		wantRecount []types.UID
	}{
		{"nothing changed", func() {}, nil},
		{"a VM takes an address of a's subnet", func() { f.AddPortWithAddresses(ours, "vm-1", "compute:nova", "10.0.0.10") }, []types.UID{ownerA.UID}},
		{"the same count again", func() {}, nil},
		{"the credentials lose the right to read counts", func() { f.AsMember(true) }, []types.UID{ownerA.UID, ownerB.UID}},
		{"still refused", func() {}, nil},
	}
	for _, s := range steps {
		s.change()
		changed, err := inv.Refresh(ctx)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if len(changed) != 0 {
			t.Errorf("%s: reported as drift: %v", s.name, changed)
		}
		got := inv.Recount()
		slices.Sort(got)
		if !slices.Equal(got, s.wantRecount) {
			t.Errorf("%s: recount %v, want %v", s.name, got, s.wantRecount)
		}
	}
}

// TestTheCountsGoOnlyToTheListsPlace: the credentials move to another
// region between the list's other requests and the counts'. The counts'
// request carries the list's place (neutron.InPlace), so it is refused
// unsent, and the list fails: no count of the other region's Neutron is
// taken for this one's, nor is the refusal taken for a 403.
func TestTheCountsGoOnlyToTheListsPlace(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	f.SetProject("project-a")
	f.SetRegion("region-1")
	m := mark(t, "prod")
	seed(f, m, ownerA, "10.0.0.0/24")
	client := &swappedBeforeCounts{Neutron: f}
	inv := inventory.NewStore(client, m)

	client.swap = func() { f.SetRegion("region-2") }
	_, err := inv.Refresh(ctx)
	if !neutron.IsCredentialsError(err) {
		t.Errorf("the list across the swap: err = %v, want a CredentialsError", err)
	}
	if n := count(f.Requests(), fake.ListIPAvailabilities); n != 0 {
		t.Errorf("the counts were asked of region 2 %d times", n)
	}
	if st := inv.Status(); st.Synced {
		t.Errorf("the store is synced from a list whose counts went elsewhere: %+v", st)
	}
}

// swappedBeforeCounts is Neutron whose credentials are swapped (swap) once
// the list's routers are read, before its counts are asked.
type swappedBeforeCounts struct {
	*fake.Neutron
	swap func()
}

func (c *swappedBeforeCounts) ListRouters(ctx context.Context, description string, visit func([]neutron.Router) error) error {
	err := c.Neutron.ListRouters(ctx, description, visit)
	if c.swap != nil {
		c.swap()
		c.swap = nil
	}
	return err
}

func count(requests []string, name string) int {
	n := 0
	for _, r := range requests {
		if r == name {
			n++
		}
	}
	return n
}

func bigInt(n int64) *big.Int { return big.NewInt(n) }
