package inventory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// Attacks on a cheaper proof of a network delete: a DELETE onto the
// revision the store holds (eeff8db, withdrawn in f76bcbd) is a proof only
// while that revision is never newer than what the store holds of the
// network's subnets (their marks). Each test below makes it newer; each
// failed against eeff8db, and passes while DeleteNetwork reads the
// network and its subnets at the delete (onlyOwners). Any cheaper proof
// must keep them passing; the one in use (Store.ListedRevision: the
// revision a list read, before it read the subnets, while no write has
// been recorded on the network or its subnets since) does, and each of
// the first three fails when a recorded write leaves that proof in
// place (Owned.unlist).

// subnetHeld reports whether Neutron still holds subnet id.
func subnetHeld(f *fake.Neutron, id string) bool {
	return slices.ContainsFunc(f.Subnets(), func(s neutron.Subnet) bool { return s.ID == id })
}

func networkHeld(f *fake.Neutron, id string) bool {
	return slices.ContainsFunc(f.Networks(), func(n neutron.Network) bool { return n.ID == id })
}

// TestANetworkUpdateDoesNotVouchForMarksItDidNotRead: a person with the
// project's credentials takes A's subnet out of management (its mark
// removed) after the list; then A's controller changes the network (its
// MTU: ladder.go ensureMTU, which the person can provoke by changing the
// MTU by hand). UpdateNetwork records Neutron's answer, whose revision
// already counts the mark's removal, next to the subnet as the list read
// it (still A's). The held revision is now newer than the held marks, and
// the DELETE onto it takes the subnet the person took out of management.
// The variant marks the subnet for Network B (namespace B's tenant
// claiming it): B's subnet goes with A's network.
//
// Any proof cheaper than reading at the delete must guarantee that the held
// revision never counts a change whose effect on the subnets' marks the
// store does not hold: e.g. UpdateNetwork (and MarkNetwork) keep the held
// revision as it was (or record one that can only be refused: the answer's
// revision with the held subnets' membership marked unproven), so that the
// DELETE takes the 412 path and onlyOwners reads the marks.
func TestANetworkUpdateDoesNotVouchForMarksItDidNotRead(t *testing.T) {
	for name, unmark := range map[string]neutron.SubnetUpdate{
		"mark removed": {Description: ptr.To("taken out of management by hand")},
		"marked for B": {Name: ptr.To(mark(t, "prod").ResourceName(ownerB))},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			f := fake.New()
			netA, subA := seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
			inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))

			if _, err := f.UpdateSubnet(ctx, subA, unmark); err != nil { // the person
				t.Fatal(err)
			}
			if _, err := inv.UpdateNetwork(ctx, ownerA, netA, neutron.NetworkUpdate{MTU: ptr.To(1400)}); err != nil {
				t.Fatal(err)
			}
			err := inv.DeleteNetwork(ctx, ownerA, netA)
			if !subnetHeld(f, subA) {
				t.Errorf("DeleteNetwork = %v and took subnet %s, which is no longer A's (%s); requests %q", err, subA, name, f.Requests())
			}
		})
	}
}

// TestANetworkUpdateDoesNotVouchForTheNetworksOwnMark: as above, for the
// network itself: a person removes its mark after the list, and A's
// controller changes its MTU. The update must not be made (it would write
// onto a network no longer A's), nor its answer recorded as A's network
// at the current revision, for a DELETE onto it would delete a network
// taken out of management (and every subnet on it). Both answer
// ErrMarkGone.
func TestANetworkUpdateDoesNotVouchForTheNetworksOwnMark(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	netA, _ := seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))

	if _, err := f.UpdateNetwork(ctx, netA, neutron.NetworkUpdate{Description: ptr.To("ours now, hands off")}); err != nil {
		t.Fatal(err)
	}
	if _, err := inv.UpdateNetwork(ctx, ownerA, netA, neutron.NetworkUpdate{MTU: ptr.To(1400)}); !errors.Is(err, inventory.ErrMarkGone) {
		t.Errorf("UpdateNetwork = %v, want ErrMarkGone; requests %q", err, f.Requests())
	}
	if n := f.Networks()[0]; n.MTU == 1400 {
		t.Errorf("the network taken out of management has the MTU A asked for")
	}
	err := inv.DeleteNetwork(ctx, ownerA, netA)
	if !networkHeld(f, netA) || !errors.Is(err, inventory.ErrMarkGone) {
		t.Errorf("DeleteNetwork = %v (network still in Neutron: %v), want ErrMarkGone and the network left; requests %q",
			err, networkHeld(f, netA), f.Requests())
	}
}

// listingLate is a client whose subnet writes are answered only after a
// whole list of Neutron has run: Neutron has made the write, the list has
// read it, and the store records the write afterwards (a slow answer, a
// worker descheduled or a process frozen between the answer and the
// record).
type listingLate struct {
	*fake.Neutron
	inv *inventory.Inventory
	t   *testing.T
}

func (c *listingLate) CreateSubnet(ctx context.Context, req neutron.SubnetRequest) (neutron.Subnet, error) {
	s, err := c.Neutron.CreateSubnet(ctx, req)
	if err == nil && c.inv != nil {
		if _, lerr := c.inv.Refresh(ctx); lerr != nil {
			c.t.Fatal(lerr)
		}
	}
	return s, err
}

// TestAWriteTheListAlreadyCountedIsNotCountedAgain: A's controller creates
// a subnet on its network; Neutron makes it (revision R+1), and a list
// runs to its end before the answer is recorded: it reads the network at
// R+1, with the subnet. eeff8db's Store.SubnetWritten raised the held
// revision to R+2, which Neutron did not have: a guess that is too NEW.
// Namespace B's tenant (or anyone in the project) then makes a subnet on
// A's network (Neutron: R+2), and the DELETE onto the held R+2 succeeds and
// takes it. replace only protects entries written during the lists (written
// > startWrites); a write recorded after the lists, that they already saw,
// is counted twice.
//
// Any proof cheaper than reading at the delete must guarantee that a write
// is counted into the held revision at most once: e.g. a held revision is
// raised only for an entry that is not from a list that began after the
// write was sent (record the write's start in the store: a list begun after
// it replaces the bump), or raises the held revision to at most the write's
// answer-implied value, never past a listed one.
func TestAWriteTheListAlreadyCountedIsNotCountedAgain(t *testing.T) {
	ctx := context.Background()
	client := &listingLate{Neutron: fake.New(), t: t}
	m := mark(t, "prod")
	netA, _ := seed(client.Neutron, m, ownerA, "10.0.0.0/24")
	inv := inventory.New(client, m, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour,
		Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	client.inv = inv

	if _, err := inv.CreateSubnet(ctx, ownerA, neutron.SubnetRequest{NetworkID: netA, CIDR: "10.0.1.0/24", EnableDHCP: true}); err != nil {
		t.Fatal(err)
	}
	client.inv = nil
	held := slices.IndexFunc(inv.Get(ownerA.UID).Networks, func(n neutron.Network) bool { return n.ID == netA })
	t.Logf("held revision %d, Neutron's %d", inv.Get(ownerA.UID).Networks[held].RevisionNumber, client.Revision(netA))

	stranger := client.AddSubnet(netA, "tenant-b-subnet", "", "10.0.9.0/24", "") // B's tenant, same project
	client.ClearRequests()
	err := inv.DeleteNetwork(ctx, ownerA, netA)
	if !subnetHeld(client.Neutron, stranger) {
		t.Errorf("DeleteNetwork = %v and took %s, a subnet made by someone else after the list; requests %q",
			err, stranger, client.Requests())
	}
}

// TestAnAdoptionDoesNotVouchForAMarkRemovedAfterIt: adoption (adopt.go)
// marks the subnet (MarkSubnet), reads the network again and marks it
// onto that read's revision (MarkNetwork). A person who removes the
// subnet's mark between MarkSubnet and the read is not noticed
// (sameForAdoption compares the network's fields, not its revision, and
// MarkSubnet itself raised it): MarkNetwork's answer is recorded with a
// revision that counts the removal, beside the subnet MarkSubnet recorded
// as A's, and the DELETE onto it takes the subnet taken out of management.
//
// Any proof cheaper than reading at the delete must guarantee the same as
// for UpdateNetwork: a network's revision recorded from a write's answer
// proves nothing about marks the store read before it.
func TestAnAdoptionDoesNotVouchForAMarkRemovedAfterIt(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	net := f.AddNetwork("handmade", "")
	sub := f.AddSubnet(net, "handmade", "", "10.0.0.0/24", "")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))

	subs, err := inv.SubnetsOf(ctx, net)
	if err != nil || len(subs) != 1 {
		t.Fatal(subs, err)
	}
	if err := inv.MarkSubnet(ctx, ownerA, subs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.UpdateSubnet(ctx, sub, neutron.SubnetUpdate{Description: ptr.To("not yours after all")}); err != nil { // the person
		t.Fatal(err)
	}
	again, err := inv.GetNetwork(ctx, net)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.MarkNetwork(ctx, ownerA, again); err != nil {
		t.Fatal(err)
	}
	err = inv.DeleteNetwork(ctx, ownerA, net)
	if !subnetHeld(f, sub) {
		t.Errorf("DeleteNetwork = %v and took subnet %s, whose mark was removed; requests %q", err, sub, f.Requests())
	}
}
