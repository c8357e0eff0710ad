// Package tenancy owns a Network's place in the cloud: which OpenStack
// project (and Keystone, region and interface) its Neutron resources live
// in, what its namespace may reach there, and the Neutron client that
// acts for it. The controller asks it one question per sync, "which
// reconciler acts for this Network?" (Set.For), and gets a reconciler or
// the reason there is none.
//
// What a namespace may reach, and why, is policy.go: the administrator's
// TenantPolicies and their defaults, and with cap.go their caps, asked
// before anything of a Network's project. The rest, by role:
//
//   - key.go: a credential's name (a cloud of a Secret of a namespace);
//   - registry.go: the credentials held, read from Secrets, each bound to
//     the place Keystone says it reaches before a Neutron client is
//     built on it, with a bound per namespace and in all;
//   - refusals.go: the credentials that cannot be used, remembered until
//     they are due again, so that a retry neither reads the Secret nor
//     sends Keystone another failed login;
//   - keeper.go: the copy of each credential kept for deletions, bound to
//     its place, never overwritten by credentials that reach another;
//   - project.go: what is kept per project (its inventory, reconciler and
//     orphans);
//   - set.go: the Set the controller asks, which runs each project's list
//     loop, hands orphans to the garbage collector
//     (pkg/controller/collector), and lets credentials go with the last
//     Network that names them;
//   - withdrawn.go: a grant withdrawn from an attached Network detaches it;
//   - build.go: the Set built from the controller's flags and clients.
//
// The place a Network's resources were made in is recorded in its status
// before anything is made, and compared whole with neutron.CheckPlace
// wherever it matters (pkg/controller/reconcile's ladder,
// pkg/controller/inventory's door): docs/tenancy.md says how.
package tenancy
