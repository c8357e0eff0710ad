package neutron

import (
	"fmt"
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
