// Package collector is the garbage collector of what Neutron holds for
// Networks that are gone: a small controller of its own, apart from the
// Network controller, as kube-controller-manager's garbage collector is
// apart from its ReplicaSet controller. A Network's finalizer makes
// Neutron's resources go with it; what is left (a finalizer removed by
// hand, a create that completed in Neutron after its Network was deleted)
// is an orphan, known by the Network UID its resources carry.
//
// The controller's view of both sides is a cache: the informer's of the
// API server, the inventory's of Neutron. A cache that is behind (a leader
// resuming after a pause, a restore from backup, a watch that has not
// caught up) makes a living Network look gone, and what is deleted in
// Neutron cannot be undone. So, like kube-controller-manager's garbage
// collector, this one deletes only what it can prove is this cluster's and
// gone, and no more than a fixed number per list of Neutron, so that a
// wrong view of the world costs a bounded, visible amount.
//
// The files, by role, each using only those listed after it:
//
//   - collector.go: the controller. Its queue holds orphans, by project
//     and UID; the Network informer's delete events queue them, and so
//     does every list of Neutron that finds resources without a Network
//     in the cache (Collector.Sight). Its worker asks the orphan's
//     project to collect it, and records the Events that says. The
//     queue is fair across namespaces (pkg/controller/fairqueue): one namespace's
//     thousand orphans do not delay another's.
//   - sight.go: a list of Neutron sights the orphans in the controller's
//     scope (--namespace).
//   - collect.go: the collection of one orphan, and every test it must
//     pass: collection is on (--orphan-collection); the resources' names
//     record this very cluster; two lists of Neutron a grace period apart
//     found them orphaned; a live read of the API server, not the cache,
//     finds no Network of that UID; and the list's budget of deletions
//     (--max-orphans-per-list) is not spent. Then the delete goes through
//     the project's inventory, its one door to Neutron
//     (reconcile.DeleteOwned, as a Network's own deletion).
//   - project.go: Orphans, the collection of one OpenStack project, and
//     Config, the flags' part of it.
//   - sightings.go: when each orphan was sighted, and the per-list budget.
//
// The collector is generic over P, what names a project: any comparable
// fmt.Stringer (the queue's key holds it, the log prints it). The
// controller's P is pkg/controller/tenancy's Key; pkg/controller/tenancy imports this package,
// so this package cannot name that type (test/layout's order).
package collector
