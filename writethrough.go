package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/desired"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// The controller's every write to Neutron goes through these
// functions. They
//   - fail at once while Neutron is known to be down (breaker.go);
//   - act only on IDs the inventory holds for the owner, i.e. resources
//     that carry this cluster's mark and the owner's UID (the last guard of
//     "never touch what you cannot prove is yours");
//   - mark what they create in the create request itself (name and
//     description), so it is recognisable the moment Neutron holds it;
//   - record in the inventory what Neutron confirmed, so the next sync
//     sees it without a list;
//   - ask for an early list of Neutron when an answer was lost, because
//     the request may complete anyway (see Options.LateCompletionGrace).

func (c *Controller) createNetwork(ctx context.Context, owner neutron.Owner, mtu int) (neutron.Network, error) {
	if err := c.neutronUp.allow(); err != nil {
		return neutron.Network{}, err
	}
	n, err := c.neutron.CreateNetwork(ctx, c.mark.ResourceName(owner), c.mark.Description(), mtu)
	if err != nil {
		return neutron.Network{}, c.afterFailedWrite(err)
	}
	c.inventory.AddNetwork(owner, n)
	return n, nil
}

func (c *Controller) createSubnet(ctx context.Context, owner neutron.Owner, networkID string, want desired.Subnet) (neutron.Subnet, error) {
	return c.createSubnetFrom(ctx, owner, want.Request(networkID, "", ""))
}

// createSubnetFrom creates the subnet req asks for, with owner's name and
// the mark.
func (c *Controller) createSubnetFrom(ctx context.Context, owner neutron.Owner, req neutron.SubnetRequest) (neutron.Subnet, error) {
	if err := c.neutronUp.allow(); err != nil {
		return neutron.Subnet{}, err
	}
	req.Name, req.Description = c.mark.ResourceName(owner), c.mark.Description()
	s, err := c.neutron.CreateSubnet(ctx, req)
	if err != nil {
		return neutron.Subnet{}, c.afterFailedWrite(err)
	}
	c.inventory.AddSubnet(owner, s)
	return s, nil
}

func (c *Controller) updateNetwork(ctx context.Context, owner neutron.Owner, id string, u neutron.NetworkUpdate) (neutron.Network, error) {
	if !c.ownsNetwork(owner, id) {
		return neutron.Network{}, notOurs("network", id)
	}
	if err := c.neutronUp.allow(); err != nil {
		return neutron.Network{}, err
	}
	updated, err := c.neutron.UpdateNetwork(ctx, id, u)
	if err != nil {
		return neutron.Network{}, c.afterFailedWrite(err)
	}
	c.inventory.AddNetwork(owner, updated)
	return updated, nil
}

func (c *Controller) updateSubnet(ctx context.Context, owner neutron.Owner, id string, u neutron.SubnetUpdate) (neutron.Subnet, error) {
	if !c.ownsSubnet(owner, id) {
		return neutron.Subnet{}, notOurs("subnet", id)
	}
	if err := c.neutronUp.allow(); err != nil {
		return neutron.Subnet{}, err
	}
	updated, err := c.neutron.UpdateSubnet(ctx, id, u)
	if err != nil {
		return neutron.Subnet{}, c.afterFailedWrite(err)
	}
	c.inventory.AddSubnet(owner, updated)
	return updated, nil
}

func (c *Controller) deleteSubnet(ctx context.Context, owner neutron.Owner, id string) error {
	if !c.ownsSubnet(owner, id) {
		return notOurs("subnet", id)
	}
	if err := c.neutronUp.allow(); err != nil {
		return err
	}
	if err := c.neutron.DeleteSubnet(ctx, id); err != nil {
		return c.afterFailedWrite(err)
	}
	c.inventory.RemoveSubnet(owner, id)
	return nil
}

func (c *Controller) deleteNetwork(ctx context.Context, owner neutron.Owner, id string) error {
	if !c.ownsNetwork(owner, id) {
		return notOurs("network", id)
	}
	if err := c.neutronUp.allow(); err != nil {
		return err
	}
	if err := c.neutron.DeleteNetwork(ctx, id); err != nil {
		return c.afterFailedWrite(err)
	}
	c.inventory.RemoveNetwork(owner, id)
	return nil
}

// releaseSubnet and releaseNetwork give up a resource without deleting it
// (deletionPolicy: Orphan): the description that carried the mark is
// replaced, so no controller will ever recognise it again, and it leaves
// the inventory. An adopted resource gets back the name and description
// it had (orig); one the controller made says where it came from.
func (c *Controller) releaseSubnet(ctx context.Context, owner neutron.Owner, id string, orig *restored) error {
	u := neutron.SubnetUpdate{Description: ptr.To(c.mark.Released(owner))}
	if orig != nil {
		u.Name, u.Description = &orig.name, &orig.description
	}
	if _, err := c.updateSubnet(ctx, owner, id, u); err != nil {
		return err
	}
	c.inventory.RemoveSubnet(owner, id)
	return nil
}

func (c *Controller) releaseNetwork(ctx context.Context, owner neutron.Owner, id string, orig *restored) error {
	u := neutron.NetworkUpdate{Description: ptr.To(c.mark.Released(owner))}
	if orig != nil {
		u.Name, u.Description = &orig.name, &orig.description
	}
	if _, err := c.updateNetwork(ctx, owner, id, u); err != nil {
		return err
	}
	c.inventory.RemoveNetwork(owner, id)
	return nil
}

// restored is the name and description an adopted resource gets back.
type restored struct{ name, description string }

// markSubnet and markNetwork take a resource under management
// (adopt.go): its name and description become the owner's and the mark.
// They are the only writes to a resource the inventory does not hold; the
// caller has checked that nobody else owns it.
func (c *Controller) markSubnet(ctx context.Context, owner neutron.Owner, s neutron.Subnet) error {
	if c.ownsSubnet(owner, s.ID) {
		return nil
	}
	name, desc := c.mark.ResourceName(owner), c.mark.Description()
	if err := c.neutronUp.allow(); err != nil {
		return err
	}
	marked, err := c.neutron.UpdateSubnet(ctx, s.ID, neutron.SubnetUpdate{Name: &name, Description: &desc})
	if err != nil {
		return c.afterFailedWrite(err)
	}
	c.inventory.AddSubnet(owner, marked)
	return nil
}

func (c *Controller) markNetwork(ctx context.Context, owner neutron.Owner, n neutron.Network) (neutron.Network, error) {
	name, desc := c.mark.ResourceName(owner), c.mark.Description()
	if err := c.neutronUp.allow(); err != nil {
		return neutron.Network{}, err
	}
	marked, err := c.neutron.UpdateNetwork(ctx, n.ID, neutron.NetworkUpdate{Name: &name, Description: &desc})
	if err != nil {
		return neutron.Network{}, c.afterFailedWrite(err)
	}
	c.inventory.AddNetwork(owner, marked)
	return marked, nil
}

func (c *Controller) ownsNetwork(owner neutron.Owner, id string) bool {
	return slices.ContainsFunc(c.inventory.Get(owner.UID).Networks, func(n neutron.Network) bool { return n.ID == id })
}

func (c *Controller) ownsSubnet(owner neutron.Owner, id string) bool {
	return slices.ContainsFunc(c.inventory.Get(owner.UID).Subnets, func(s neutron.Subnet) bool { return s.ID == id })
}

// afterFailedWrite asks for an early list when Neutron's answer to a write
// is unknown: anything but a refusal, which Neutron sends only for what it
// did not do. When no answer came at all, it opens the breaker.
func (c *Controller) afterFailedWrite(err error) error {
	var rejected *neutron.RejectedError
	if !errors.As(err, &rejected) {
		c.requestRefreshAfter(c.opts.LateCompletionGrace)
	}
	if neutron.Unreachable(err) {
		c.neutronUp.trip()
	}
	return err
}

// afterFailedRead opens the breaker when a read got no answer at all. A
// read changes nothing in Neutron, so, unlike a write, it leaves no outcome
// for an early list to find.
func (c *Controller) afterFailedRead(err error) error {
	if neutron.Unreachable(err) {
		c.neutronUp.trip()
	}
	return err
}

// errNotOurs guards the write-through helpers: they act on IDs from the
// inventory only, which holds only what carries our mark.
var errNotOurs = errors.New("not a resource of this controller")

func notOurs(kind, id string) error { return fmt.Errorf("%s %s: %w", kind, id, errNotOurs) }
