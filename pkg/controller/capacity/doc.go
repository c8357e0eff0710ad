// Package capacity writes what a cluster administrator needs to see
// before a cap runs out: each TenantPolicy's status, counted from the
// caches the controller already holds (tenancy.Policy.Usage), written
// with server-side apply only when it changes, by the leader, at most
// about once a second per policy however fast its namespaces' Networks
// change. The status names namespaces and their waiting Networks, so it
// is the administrator's to read, as TenantPolicies are: a tenant learns
// of its own cap from its Network's NotAllowed condition, which names the
// cap and nothing of another namespace.
//
// It is a controller of its own, beside the Network controller, with the
// same shape (sample-controller's: handlers queue keys, a worker drains
// the queue, a sync compares and writes), on a queue of policy names.
// Only a controller that serves every namespace writes it: one that
// serves one (--namespace) sees one namespace's Networks, and two such
// would write each other's counts away.
package capacity
