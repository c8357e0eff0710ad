package neutron

import (
	"context"
	"fmt"
	"slices"
)

// Place is where in OpenStack a client lists and creates: the Keystone it
// authenticated at, the region and interface by which the catalog gave it
// Neutron's endpoint, and the project its token is scoped to. Two clients
// whose places differ in any field may see different Neutrons, or
// different projects of one Neutron: what one made, the other can neither
// find nor delete. The zero Place is a Neutron without Keystone (noauth),
// which has one place.
//
// A Network's place is recorded in its status before anything exists for
// it in Neutron, and every question of "is this the same cloud?" (before a
// write, before a 404 counts as a delete, before an orphan is collected)
// is CheckPlace, which compares the whole value.
type Place struct {
	AuthURL, Region, Interface, ProjectID string
}

// IsZero reports whether p is the place of a Neutron without Keystone.
func (p Place) IsZero() bool { return p == Place{} }

// String names p in a message: every field, quoted, since a region is the
// text of a clouds.yaml.
func (p Place) String() string {
	if p.IsZero() {
		return "a Neutron without Keystone"
	}
	return fmt.Sprintf("project %q in region %q (interface %q) of Keystone %q", p.ProjectID, p.Region, p.Interface, p.AuthURL)
}

// CheckPlace returns nil when now, the place the credentials reach, is
// recorded, else a *CredentialsError that names both and says that
// nothing was written. A recorded zero Place asks nothing (the Network has
// no place yet), nor does a noauth Neutron (one place). A recorded place
// that knows only its project (status.projectID, all that a controller
// before places recorded) compares the project alone until the ladder
// records the whole place.
func CheckPlace(recorded, now Place) error {
	switch {
	case recorded.AuthURL == "" && (now.IsZero() || recorded.ProjectID == "" || recorded.ProjectID == now.ProjectID):
		// Nothing recorded, a noauth Neutron (whose networks still name a
		// project, its one), or a project-only record that matches.
		return nil
	case recorded == now:
		return nil
	}
	return &CredentialsError{Reason: fmt.Sprintf(
		"the credentials now reach %s, but this Network's resources are in %s, and they cannot move: "+
			"put back credentials of that place; nothing was changed in either", now, recorded)}
}

// requiredPlacesKey is the context key of the places InPlace requires.
type requiredPlacesKey struct{}

// InPlace returns ctx requiring that every request made with it go to
// place (as CheckPlace compares it, so a zero place requires nothing).
// A check of the place and the request it allows are two moments, and a
// clouds.yaml changed in place may swap a Session's credentials between
// them: a create would then be made, or a 404 be read as a delete, in a
// place nothing lists again. So the Session compares the place of the
// client it is about to send with, at that moment, and refuses, sending
// nothing, with CheckPlace's *CredentialsError (Session.call). A request
// made with a ctx whose parents required other places must go to each.
func InPlace(ctx context.Context, place Place) context.Context {
	if place.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, requiredPlacesKey{}, append(slices.Clip(requiredPlaces(ctx)), place))
}

// requiredPlaces are the places ctx requires (InPlace).
func requiredPlaces(ctx context.Context) []Place {
	places, _ := ctx.Value(requiredPlacesKey{}).([]Place)
	return places
}

// checkRequired returns nil when a request made with ctx may go to now,
// the place of the client that would send it.
func CheckRequired(ctx context.Context, now Place) error {
	for _, want := range requiredPlaces(ctx) {
		if err := CheckPlace(want, now); err != nil {
			return err
		}
	}
	return nil
}
